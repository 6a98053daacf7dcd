package search

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeTrials passes a trial when pass says so, writing a stand-in log file
// so the peak's files can be seen copied.
func fakeTrials(pass func(TrialRequest) bool) TrialFunc {
	return func(ctx context.Context, req TrialRequest) (TrialResult, error) {
		if err := ctx.Err(); err != nil {
			return TrialResult{}, err
		}
		if req.Dir != "" {
			if err := os.MkdirAll(req.Dir, 0o755); err != nil {
				return TrialResult{}, err
			}
			if err := os.WriteFile(filepath.Join(req.Dir, "mlperf_log_summary.txt"), []byte(req.Dir), 0o644); err != nil {
				return TrialResult{}, err
			}
		}
		ok := pass(req)
		v := "INVALID"
		if ok {
			v = "VALID"
		}
		// Metric varies per trial so "the minimum of the verifying runs"
		// is observable: lower for higher indices.
		return TrialResult{Pass: ok, Verdict: v, Achieved: req.Target, Metric: req.Target - float64(req.Index)/1000,
			TailLatency: time.Millisecond, Percentile: 0.99, Duration: time.Second}, nil
	}
}

func TestRunV05ReportsTheMinimumOfTheVerifyingRuns(t *testing.T) {
	dir := t.TempDir()
	p, _ := NewVerify(VerifyConfig{Start: 100})
	var starts, finishes int
	res, err := Run(t.Context(), Config{
		Planner: p, Trials: fakeTrials(func(r TrialRequest) bool { return r.Target <= 640 }), Dir: dir,
		Ruleset: "v0.5", Scenario: "Server", Algorithm: "v0.5 bisect+verify", Unit: "queries/s",
		Starting: func(TrialRequest, float64, float64) { starts++ },
		Finished: func(t Trial, r *Result) { finishes++ },
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Found || res.Peak > 640 || res.Peak < 630 || len(res.Verifying) != 5 {
		t.Fatalf("result %+v", res)
	}
	last := res.Trials[len(res.Trials)-1]
	if res.PeakTrial != last.Index || res.Reported != last.Metric {
		t.Errorf("reported %v from trial %d, want the minimum metric %v of trial %d", res.Reported, res.PeakTrial, last.Metric, last.Index)
	}
	if starts != len(res.Trials) || finishes != len(res.Trials) {
		t.Errorf("callbacks %d/%d for %d trials", starts, finishes, len(res.Trials))
	}
	got, err := Load(dir)
	if err != nil || got.Peak != res.Peak || len(got.Trials) != len(res.Trials) {
		t.Fatalf("Load = %+v, %v", got, err)
	}
	copied, err := os.ReadFile(filepath.Join(dir, "mlperf_log_summary.txt"))
	if err != nil || string(copied) != filepath.Join(dir, TrialDir(res.PeakTrial)) {
		t.Errorf("peak summary = %q, %v; want trial %d's", copied, err, res.PeakTrial)
	}
	sum, _ := os.ReadFile(filepath.Join(dir, SummaryFile))
	for _, want := range []string{"target", "achieved/s", "p99 ms", "verdict", "duration s", "Verifying trials", "total time"} {
		if !strings.Contains(string(sum), want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
	if n := strings.Count(string(sum), "\n"); n < len(res.Trials)+5 {
		t.Errorf("summary has %d lines for %d trials", n, len(res.Trials))
	}
}

// lyingPlanner claims a verified peak whatever the trials said.
type lyingPlanner struct{ n int }

func (l *lyingPlanner) Next() (Step, bool) {
	if l.n == 5 {
		return Step{}, false
	}
	l.n++
	return Step{Target: 10, Phase: PhaseVerify}, true
}
func (l *lyingPlanner) Record(bool)                {}
func (l *lyingPlanner) Bounds() (float64, float64) { return 0, 10 }
func (l *lyingPlanner) Outcome() Outcome {
	return Outcome{Found: true, Peak: 10, Verifying: 5, Reason: "lie"}
}

func TestRunNeverReportsAPeakItsVerifyingRunsFailed(t *testing.T) {
	// The 4th of 5 verifying trials fails (a flaky endpoint).
	res, err := Run(t.Context(), Config{Planner: &lyingPlanner{}, Trials: fakeTrials(func(r TrialRequest) bool { return r.Index != 4 })})
	if err != nil {
		t.Fatal(err)
	}
	if res.Found || res.Peak != 0 || len(res.Verifying) != 0 {
		t.Fatalf("reported %+v", res)
	}
}

func TestRunFlakyTrialsEndToEnd(t *testing.T) {
	for seed := range 50 {
		p, _ := NewVerify(VerifyConfig{Start: 10, Integer: true})
		res, err := Run(t.Context(), Config{Planner: p, Trials: fakeTrials(func(r TrialRequest) bool {
			// fails 1 trial in 3, deterministically by index and seed, near the truth
			return r.Target <= 30 && !(r.Target >= 27 && (r.Index+seed)%3 == 0)
		})})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Found {
			continue
		}
		byIndex := map[int]Trial{}
		for _, tr := range res.Trials {
			byIndex[tr.Index] = tr
		}
		for _, i := range res.Verifying {
			if tr := byIndex[i]; !tr.Pass || tr.Target != res.Peak {
				t.Fatalf("seed %d: peak %v with verifying trial %+v", seed, res.Peak, tr)
			}
		}
	}
}

func TestRunEndsOnMaxTrialsErrorsAndCancel(t *testing.T) {
	boom := errors.New("boom")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name    string
		ctx     context.Context
		trials  TrialRunner
		max     int
		wantErr error
		reason  string
	}{
		{"max trials", t.Context(), fakeTrials(func(r TrialRequest) bool { return r.Target < 1e9 }), 3, nil, "max trials"},
		{"trial error", t.Context(), TrialFunc(func(context.Context, TrialRequest) (TrialResult, error) { return TrialResult{}, boom }), 0, boom, "error"},
		{"cancelled", ctx, fakeTrials(func(TrialRequest) bool { return true }), 0, context.Canceled, "cancelled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := NewFindPeak(FindPeakConfig{Start: 1, StepSize: 1, Decimals: 1})
			dir := t.TempDir()
			res, err := Run(tc.ctx, Config{Planner: p, Trials: tc.trials, MaxTrials: tc.max, Dir: dir})
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if res == nil || res.Found || !strings.Contains(res.EndReason, tc.reason) {
				t.Fatalf("result %+v, want no peak and reason %q", res, tc.reason)
			}
			if tc.max > 0 && len(res.Trials) != tc.max {
				t.Errorf("%d trials, max %d", len(res.Trials), tc.max)
			}
			if _, err := Load(dir); err != nil {
				t.Errorf("no record written: %v", err)
			}
		})
	}
}
