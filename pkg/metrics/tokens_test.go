package metrics

import (
	"math"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
)

// The engine's token hook feeds the token histograms and counters: TTFT
// per sample, TPOT per sample of two tokens or more, every gap to ITL.
func TestTokenMetrics(t *testing.T) {
	m, reg := newTest(t)
	o, ok := m.Observer().(loadgen.TokenObserver)
	if !ok {
		t.Fatal("the observer does not watch tokens")
	}
	o.Tokens(0, 3, 100, 20*time.Millisecond, 5*time.Millisecond, []time.Duration{4 * time.Millisecond, 6 * time.Millisecond})
	o.Tokens(1, 1, 50, 30*time.Millisecond, 0, nil)
	check := func(name string, want float64) {
		t.Helper()
		if got := value(t, reg, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	check("loadgend_output_tokens_total", 4)
	check("loadgend_input_tokens_total", 150)
	for _, c := range []struct {
		name  string
		count uint64
		sum   float64
	}{
		{"loadgend_ttft_seconds", 2, 0.050},
		{"loadgend_tpot_seconds", 1, 0.005},
		{"loadgend_itl_seconds", 2, 0.010},
	} {
		h := hist(t, reg, c.name)
		if h.GetSampleCount() != c.count || math.Abs(h.GetSampleSum()-c.sum) > 1e-12 {
			t.Errorf("%s: count %d sum %v, want %d and %v", c.name, h.GetSampleCount(), h.GetSampleSum(), c.count, c.sum)
		}
		if h.GetSchema() != 4 || len(h.GetPositiveSpan()) == 0 {
			t.Errorf("%s: not a native histogram (schema %d)", c.name, h.GetSchema())
		}
	}
}
