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

// The active run's token bounds show as gauges, and samples over them
// count live (a one-token sample's TPOT never does); the next run starts
// without them.
func TestTokenBoundMetrics(t *testing.T) {
	m, reg := newTest(t)
	if err := m.RunStarted("r1", "Server", "llm", "http://h:1", 2); err != nil {
		t.Fatal(err)
	}
	if err := m.SetTokenBounds(450*time.Millisecond, 40*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	o := m.Observer().(loadgen.TokenObserver)
	o.Tokens(0, 3, 10, 500*time.Millisecond, 30*time.Millisecond, nil) // TTFT over
	o.Tokens(1, 3, 10, 400*time.Millisecond, 50*time.Millisecond, nil) // TPOT over
	o.Tokens(2, 3, 10, 450*time.Millisecond, 40*time.Millisecond, nil) // at both bounds: within
	o.Tokens(3, 1, 10, 100*time.Millisecond, time.Second, nil)         // one token: no TPOT
	check := func(name string, want float64) {
		t.Helper()
		if got := value(t, reg, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	check("loadgend_ttft_bound_seconds", 0.45)
	check("loadgend_tpot_bound_seconds", 0.04)
	check("loadgend_ttft_over_bound_samples_total", 1)
	check("loadgend_tpot_over_bound_samples_total", 1)
	if err := m.RunEnded("r1", StateDone); err != nil {
		t.Fatal(err)
	}
	check("loadgend_ttft_bound_seconds", 0)
	o.Tokens(4, 3, 10, time.Hour, time.Hour, nil)
	check("loadgend_ttft_over_bound_samples_total", 1)
	if err := m.SetTokenBounds(time.Second, time.Second); err == nil {
		t.Error("token bounds without an active run accepted")
	}
}
