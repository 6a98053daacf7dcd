package runspec

import (
	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
)

// RejudgeSettings builds the settings to judge a recorded sample list
// with: the list's own settings (base) in place of the ruleset's defaults,
// then what a run's spec applies over those (the conf texts, the preset,
// the overrides that are set), then Validate: the one builder's layers, so
// a rejudge with a run's flags judges as that run would have. The list's
// settings already hold the mlperf.conf its run applied, LoadGen's built-in
// one included: a user.conf alone is applied over them without it. The spec's
// scenario, ruleset and everything but its settings are not read: the
// list records them. Errors are *api.FieldError naming the field, as
// Settings' are.
func RejudgeSettings(base loadgen.Settings, s api.RunSpec, env Env) (loadgen.Settings, error) {
	ls, _, err := layerSettings(s, confNames{mlperf: env.MLPerfConfName, user: env.UserConfName}, base, false)
	return ls, err
}
