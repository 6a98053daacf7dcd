package search

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// A sweep runs every rate in order, whatever the trials' verdicts, and
// finds no peak; its record says mode sweep and its summary is the
// latency-vs-load table and plot.
func TestSweepRunsEveryRateInOrder(t *testing.T) {
	p, err := NewSweep([]float64{300, 100, 200}, false)
	if err != nil {
		t.Fatal(err)
	}
	var asked []float64
	trials := TrialFunc(func(_ context.Context, req TrialRequest) (TrialResult, error) {
		asked = append(asked, req.Target)
		// Saturated at 150/s: the sweep must go on without the stop flag.
		return TrialResult{Pass: req.Target < 250, Verdict: "VALID", Achieved: min(req.Target, 150),
			Latency: &Percentiles{P50: 1, P90: 2, P99: req.Target / 100}, OverBound: int64(req.Target)}, nil
	})
	res, err := Run(context.Background(), Config{Planner: p, Trials: trials, Mode: ModeSweep, Unit: UnitQPS})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(asked); got != 3 || asked[0] != 300 || asked[1] != 100 || asked[2] != 200 {
		t.Fatalf("asked %v, want [300 100 200]", asked)
	}
	if res.Mode != ModeSweep || res.Found || res.EndReason != "completed: 3 rates swept" {
		t.Errorf("record: mode %q found %v end %q", res.Mode, res.Found, res.EndReason)
	}
	if res.Lower != 200 || res.Upper != 300 {
		t.Errorf("bracket [%v, %v), want [200, 300)", res.Lower, res.Upper)
	}
	s := Summary(res)
	for _, w := range []string{"      3           200        150.0  1.00 ms  2.00 ms  2.00 ms         200    VALID", "300/s │" + strings.Repeat("█", plotWidth) + " 3.00 ms"} {
		if !strings.Contains(s, w) {
			t.Errorf("summary lacks %q:\n%s", w, s)
		}
	}
}

func TestSweepStopsWhenSaturated(t *testing.T) {
	p, err := NewSweep([]float64{100, 200, 400}, true)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	trials := TrialFunc(func(_ context.Context, req TrialRequest) (TrialResult, error) {
		n++
		return TrialResult{Achieved: min(req.Target, 150)}, nil // 200 asked, 150 done: 75%
	})
	res, err := Run(context.Background(), Config{Planner: p, Trials: trials, Mode: ModeSweep})
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 || !strings.Contains(res.EndReason, "stopped after trial 2: completed 150 samples/s of 200 asked") {
		t.Errorf("%d trials, end %q; want 2 and a saturation stop", n, res.EndReason)
	}
}

func TestSweepRefusesBadRates(t *testing.T) {
	for _, rates := range [][]float64{nil, {100, 0}, {-1}, make([]float64, MaxSweepRates+1)} {
		if _, err := NewSweep(rates, false); !errors.Is(err, ErrConfig) {
			t.Errorf("rates %v: %v, want ErrConfig", rates, err)
		}
	}
}

func TestFmtMs(t *testing.T) {
	for ms, want := range map[float64]string{0.25: "250 µs", 1.5: "1.50 ms", 12.5: "12.5 ms", 2500: "2.50 s", FailedPercentile: "failed"} {
		if got := fmtMs(ms); got != want {
			t.Errorf("fmtMs(%v) = %q, want %q", ms, got, want)
		}
	}
}

// TestSweepOfSpeedsSaysSo: a sweep of a trace's speeds is labelled as
// one, its column the speed, not a rate asked.
func TestSweepOfSpeedsSaysSo(t *testing.T) {
	res := &Result{Mode: ModeSweep, Unit: UnitSpeed, Trials: []Trial{{Index: 1, Target: 2, Achieved: 40, Latency: &Percentiles{P50: 1, P90: 2, P99: 3}}}}
	s := Summary(res)
	if !strings.Contains(s, "1 trace speeds") || !strings.Contains(s, "p99 vs trace speed") || !strings.Contains(s, "2x ") ||
		strings.Contains(s, "rate asked") || strings.Contains(s, "2/s") {
		t.Errorf("summary:\n%s", s)
	}
	// Judged as a load shape, not by LoadGen's bound, even with one set.
	res.Trials[0].LatencyBoundMs, res.Trials[0].Percentile = 100, 0.99
	if s := Summary(res); !strings.Contains(s, "Verdict: each trial's own, as a load shape's: its SLO's (--slo), or N/A") || strings.Contains(s, "the bound is") {
		t.Errorf("a sweep of speeds' verdict line:\n%s", s)
	}
	res.Unit = UnitQPS
	if s := Summary(res); !strings.Contains(s, "rate asked") || !strings.Contains(s, "the bound is") {
		t.Errorf("a sweep of rates lost its column or its bound:\n%s", s)
	}
}

// A sweep of speeds ends saying it swept speeds.
func TestSpeedSweepEndsAsOne(t *testing.T) {
	for _, c := range []struct {
		new  func([]float64) (*Sweep, error)
		want string
	}{
		{func(r []float64) (*Sweep, error) { return NewSweep(r, false) }, "completed: 2 rates swept"},
		{NewSpeedSweep, "completed: 2 trace speeds swept"},
	} {
		s, err := c.new([]float64{1, 4})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Outcome().Reason; got != c.want {
			t.Errorf("outcome %q, want %q", got, c.want)
		}
	}
}
