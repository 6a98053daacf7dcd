package runspec

import (
	"errors"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/api"
)

// settings.issuers builds the engine's issuers; the scenarios that are one
// sequence of queries refuse it, naming the field and why.
func TestSettingsIssuers(t *testing.T) {
	decode := func(scenario, settings string) (api.RunSpec, error) {
		return Decode(strings.NewReader(`{"target": "http://h:1", "model": "m", "scenario": "`+scenario+`", "settings": `+settings+`}`), api.Limits{})
	}
	for _, c := range []struct {
		scenario, settings string
		want               int
	}{
		{"Server", `{"issuers": 3}`, 3},
		{"Offline", `{"issuers": 2}`, 2},
		{"SingleStream", `{"issuers": 2, "concurrency": 8}`, 2},
		{"Server", `{}`, 0},
	} {
		spec, err := decode(c.scenario, c.settings)
		if err != nil {
			t.Fatalf("%s %s: %v", c.scenario, c.settings, err)
		}
		ls, err := Settings(spec)
		if err != nil {
			t.Fatalf("%s %s: %v", c.scenario, c.settings, err)
		}
		if ls.Engine.Issuers != c.want {
			t.Errorf("%s %s: engine.issuers %d, want %d", c.scenario, c.settings, ls.Engine.Issuers, c.want)
		}
	}
	for _, c := range []struct{ scenario, settings, want string }{
		{"SingleStream", `{"issuers": 2}`, "one sequence of queries"},
		{"MultiStream", `{"issuers": 2}`, "one sequence of queries"},
		{"Server", `{"issuers": 0}`, "[1, 256]"},
		{"Server", `{"issuers": 257}`, "[1, 256]"},
		{"SingleStream", `{"issuers": 4, "concurrency": 3}`, "concurrency must be at least the issuers"},
	} {
		spec, err := decode(c.scenario, c.settings)
		if err == nil {
			_, err = Settings(spec)
		}
		var fe *api.FieldError
		if !errors.As(err, &fe) || fe.Field != "settings.issuers" || !strings.Contains(fe.Message, c.want) {
			t.Errorf("%s %s: %v, want a field error on settings.issuers saying %q", c.scenario, c.settings, err, c.want)
		}
	}
}
