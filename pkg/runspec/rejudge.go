package runspec

import (
	"math"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
)

// TokenBounds are the token-latency settings a rejudge may change: nil
// leaves the sample list's value.
type TokenBounds struct {
	UseTokenLatencies *bool
	TTFTLatencyMs     *float64
	TPOTLatencyMs     *float64
}

// RejudgeSettings builds the settings to judge a recorded sample list
// with: the list's own settings (base), then the token bounds and the
// overrides that are set, then Validate. Errors are *api.FieldError naming
// the field, as Settings' are.
func RejudgeSettings(base loadgen.Settings, o api.RunSettings, tb TokenBounds) (loadgen.Settings, error) {
	ls, src := base, map[string]string{}
	if tb.UseTokenLatencies != nil {
		ls.UseTokenLatencies = *tb.UseTokenLatencies
	}
	for _, b := range []struct {
		field string
		ms    *float64
		dst   *uint64
	}{{"ttft_latency_ms", tb.TTFTLatencyMs, &ls.ServerTTFTLatencyNs}, {"tpot_latency_ms", tb.TPOTLatencyMs, &ls.ServerTPOTLatencyNs}} {
		if b.ms == nil {
			continue
		}
		if !positive(*b.ms) || *b.ms*1e6 >= math.MaxInt64 {
			return ls, fieldErr(b.field, "must be a positive number of ms, got %v", *b.ms)
		}
		*b.dst = uint64(*b.ms * 1e6)
	}
	if err := applyOverrides(o, &ls, src); err != nil {
		return ls, err
	}
	if err := ls.Validate(); err != nil {
		return ls, settingsFieldErr(err, src)
	}
	return ls, nil
}
