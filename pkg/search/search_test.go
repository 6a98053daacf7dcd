package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/stats"
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

// A loadgen6 search judges trials by the latency constraint alone, so its
// peak may be an INVALID run (here: early stopping not met). The summary
// shows every criterion of every trial, names the criterion the peak was
// judged by and says outright that the peak is INVALID as a single run;
// search.json keeps the criteria.
func TestSummaryNamesTheCriterionAndThePeaksOwnVerdict(t *testing.T) {
	dir := t.TempDir()
	p, _ := NewFindPeak(FindPeakConfig{Start: 1000, StepSize: 1, Decimals: 0, Precision: 600})
	trials := TrialFunc(func(_ context.Context, req TrialRequest) (TrialResult, error) {
		lat := req.Target <= 2200
		// Every trial above 1000 QPS misses early stopping, yet the search
		// passes it as LoadGen's FindPeakPerformance would.
		c := &Criteria{LatencyMet: lat, EarlyStoppingMet: req.Target <= 1000, MinDurationMet: true, MinQueriesMet: true, NoFailedSamples: true}
		v := "INVALID"
		if len(NotMet(c)) == 0 {
			v = "VALID"
		}
		return TrialResult{Pass: lat, Verdict: v, Criteria: c, Achieved: req.Target, Metric: req.Target,
			TailLatency: 3 * time.Millisecond, Percentile: 0.99, LatencyBound: 15 * time.Millisecond, Duration: time.Second}, nil
	})
	res, err := Run(t.Context(), Config{Planner: p, Trials: trials, Dir: dir, Ruleset: "loadgen6", Scenario: "Server",
		Algorithm: AlgoFindPeak, Unit: UnitQPS})
	if err != nil {
		t.Fatal(err)
	}
	// 1000 pass, 2000 pass, 4000 fail, 3000 fail, 2500 fail: [2000, 2500).
	if !res.Found || res.Peak != 2000 || res.JudgedBy != JudgedByLatency {
		t.Fatalf("result %+v", res)
	}
	if res.PeakRunVerdict != "INVALID" || !slices.Equal(res.PeakRunNotMet, []string{"early stopping"}) {
		t.Errorf("peak run verdict %q, not met %v", res.PeakRunVerdict, res.PeakRunNotMet)
	}
	sum, err := os.ReadFile(filepath.Join(dir, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	text := string(sum)
	for _, want := range []string{
		"Trials judged by the latency constraint (p99 ≤ 15 ms) with no failed samples.",
		"FindPeakPerformance (loadgen6) judges a trial by its latency constraint only",
		"p99 ≤ 15 ms  early stopping  min duration  min queries  no failed  run verdict  search pass",
		// One peak line: the figure to report (the trial's scheduled rate),
		// the target it was asked, the criterion, its own verdict.
		fmt.Sprintf("Peak: %s scheduled samples/s, the figure to report (trial %d, asked 2000 queries/s) by the latency constraint (p99 ≤ 15 ms) with no failed samples; as a single run it is INVALID: early stopping not met\n",
			fmtNum(res.Reported), res.PeakTrial),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("summary lacks %q:\n%s", want, text)
		}
	}
	if n := strings.Count(text, "\nPeak"); n != 1 || strings.Contains(text, "Reported") {
		t.Errorf("%d peak lines, or a second figure beside it:\n%s", n, text)
	}
	// The peak trial's row: latency yes, early stopping no, INVALID, pass yes.
	row := regexp.MustCompile(fmt.Sprintf(`(?m)^ *%d +boundary +2000 .*$`, res.PeakTrial)).FindString(text)
	if f := strings.Fields(row); len(f) != 14 || f[5] != "yes" || f[6] != "no" || f[7] != "yes" || f[8] != "yes" || f[9] != "yes" || f[10] != "INVALID" || f[11] != "yes" {
		t.Errorf("peak row %q", row)
	}
	raw, err := os.ReadFile(filepath.Join(dir, ResultFile))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		JudgedBy       string   `json:"judged_by"`
		Criterion      string   `json:"criterion"`
		PeakRunVerdict string   `json:"peak_run_verdict"`
		PeakRunNotMet  []string `json:"peak_run_not_met"`
		Trials         []struct {
			Verdict        string          `json:"verdict"`
			Pass           bool            `json:"pass"`
			LatencyBoundMs float64         `json:"latency_bound_ms"`
			Criteria       map[string]bool `json:"criteria"`
		} `json:"trials"`
	}
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	pk := rec.Trials[res.PeakTrial-1]
	want := map[string]bool{"latency_met": true, "early_stopping_met": false, "min_duration_met": true, "min_queries_met": true, "no_failed_samples": true}
	if rec.JudgedBy != "latency_constraint" || rec.Criterion != "the latency constraint (p99 ≤ 15 ms) with no failed samples" ||
		rec.PeakRunVerdict != "INVALID" || len(rec.PeakRunNotMet) != 1 || pk.LatencyBoundMs != 15 || !maps.Equal(pk.Criteria, want) || !pk.Pass || pk.Verdict != "INVALID" {
		t.Errorf("search.json:\n%s", raw)
	}
}

// A v0.5 search takes a VALID run: the summary says so, and its peak is
// VALID as a single run.
func TestSummaryV05JudgesByValidity(t *testing.T) {
	p, _ := NewVerify(VerifyConfig{Start: 10, Integer: true, Runs: 2})
	trials := TrialFunc(func(_ context.Context, req TrialRequest) (TrialResult, error) {
		ok := req.Target <= 12
		c := &Criteria{LatencyMet: ok, EarlyStoppingMet: true, MinDurationMet: true, MinQueriesMet: true, NoFailedSamples: true}
		v := map[bool]string{true: "VALID", false: "INVALID"}[ok]
		return TrialResult{Pass: ok, Verdict: v, Criteria: c, Percentile: 0.99, Duration: time.Second}, nil
	})
	res, err := Run(t.Context(), Config{Planner: p, Trials: trials, Ruleset: "v0.5", Scenario: "MultiStream", Algorithm: AlgoV05MultiStream, Unit: UnitStreams})
	if err != nil || !res.Found || res.Peak != 12 {
		t.Fatalf("%+v, %v", res, err)
	}
	text := Summary(res)
	for _, want := range []string{
		"Trials judged by a VALID run: the latency constraint, min duration, min query count and no failed samples (v0.5).",
		fmt.Sprintf("Peak: 12 samples/query (trial %d) by a VALID run: the latency constraint, min duration, min query count and no failed samples; as a single run it is VALID\n", res.PeakTrial),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("summary lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "INVALID:") || res.PeakRunVerdict != "VALID" || res.PeakRunNotMet != nil {
		t.Errorf("a VALID peak reported otherwise (%q, %v):\n%s", res.PeakRunVerdict, res.PeakRunNotMet, text)
	}
}

// TrialResultOf keeps each criterion of the run, and Passes decides as the
// ruleset's search does: loadgen6 on the latency constraint (with no failed
// samples), v0.5 on the run's validity.
func TestTrialResultOfKeepsEachCriterion(t *testing.T) {
	r := &loadgen.Result{Ruleset: loadgen.RulesetLoadGen6, Scenario: "Server", Validity: "INVALID",
		PerfConstraintsMet: true, EarlyStoppingMet: false, MinDurationMet: true, MinQueriesMet: false, NoFailedSamples: true}
	r.Effective.TargetLatencyNs, r.Effective.TargetLatencyPercentile = 15e6, 0.99
	tr := TrialResultOf(r, time.Second, Judge{})
	want := Criteria{LatencyMet: true, MinDurationMet: true, NoFailedSamples: true}
	if !tr.Pass || tr.Verdict != "INVALID" || tr.Criteria == nil || *tr.Criteria != want || tr.LatencyBound != 15*time.Millisecond {
		t.Errorf("loadgen6: %+v", tr)
	}
	if got := NotMet(tr.Criteria); !slices.Equal(got, []string{"min query count", "early stopping"}) {
		t.Errorf("not met %v", got)
	}
	r.Ruleset = loadgen.RulesetV05
	if TrialResultOf(r, time.Second, Judge{}).Pass {
		t.Error("v0.5 passed an INVALID run")
	}
}

// With token latencies a trial is judged by TTFT and TPOT (result.json's
// token_latencies), not query latency, under both rulesets; its record
// carries the figures and the summary names the two bounds.
func TestTrialJudgedByTokenLatencies(t *testing.T) {
	tok := func(ttft, tpot int64) *loadgen.TokenLatencies {
		return &loadgen.TokenLatencies{Percentile: 0.99, TTFTBoundNs: 450e6, TPOTBoundNs: 40e6,
			TTFTAtPercentileNs: ttft, TTFTMet: ttft <= 450e6, TPOTAtPercentileNs: tpot, TPOTMet: tpot <= 40e6, EarlyStoppingMet: true}
	}
	// Query latency misses its bound of 0 (mlperf.conf's target_latency
	// for the LLM tasks): it must not decide.
	r := &loadgen.Result{Ruleset: loadgen.RulesetLoadGen6, Scenario: "Server", Validity: "INVALID",
		PerfConstraintsMet: false, EarlyStoppingMet: true, MinDurationMet: true, MinQueriesMet: true, NoFailedSamples: true,
		TokenLatencies: tok(300e6, 30e6)}
	r.Effective.TargetLatencyPercentile = 0.99
	j := Judge{By: JudgedByTokenLatency}
	tr := TrialResultOf(r, time.Second, j)
	want := TokenFigures{TTFTMs: 300, TTFTBoundMs: 450, TTFTMet: true, TPOTMs: 30, TPOTBoundMs: 40, TPOTMet: true}
	if !tr.Pass || tr.Tokens == nil || *tr.Tokens != want || !tr.Criteria.LatencyMet {
		t.Errorf("within both bounds: pass %v, tokens %+v, criteria %+v", tr.Pass, tr.Tokens, tr.Criteria)
	}
	r.TokenLatencies = tok(300e6, 41e6)
	if tr := TrialResultOf(r, time.Second, j); tr.Pass || tr.Criteria.LatencyMet {
		t.Errorf("over the TPOT bound passed: %+v", tr)
	}
	r.Ruleset, r.TokenLatencies = loadgen.RulesetV05, tok(300e6, 30e6)
	if !TrialResultOf(r, time.Second, j).Pass {
		t.Error("v0.5: a trial within both token bounds, all else met, failed")
	}
	r.MinQueriesMet = false
	if TrialResultOf(r, time.Second, j).Pass {
		t.Error("v0.5: a trial short of its queries passed")
	}

	r.Ruleset, r.MinQueriesMet, r.TokenLatencies = loadgen.RulesetLoadGen6, true, tok(int64(stats.FailedLatency), 30e6)
	if tr := TrialResultOf(r, time.Second, j); tr.Pass || tr.Tokens == nil || tr.Tokens.TTFTMs != FailedPercentile {
		t.Errorf("a failed sample at the TTFT percentile: pass %v, tokens %+v, want a fail at %v ms", tr.Pass, tr.Tokens, FailedPercentile)
	}

	p, _ := NewFindPeak(FindPeakConfig{Start: 10, StepSize: 1, Decimals: 0, Precision: 5})
	trials := TrialFunc(func(_ context.Context, req TrialRequest) (TrialResult, error) {
		r := &loadgen.Result{Ruleset: loadgen.RulesetLoadGen6, Scenario: "Server", Validity: "INVALID", NoFailedSamples: true,
			TokenLatencies: tok(int64(req.Target*20e6), 30e6)}
		r.Effective.TargetLatencyPercentile = 0.99
		return TrialResultOf(r, time.Second, j), nil
	})
	res, err := Run(t.Context(), Config{Planner: p, Trials: trials, Ruleset: "loadgen6", Scenario: "Server", Algorithm: AlgoFindPeak, Unit: UnitQPS, Judge: j})
	if err != nil || !res.Found || res.Peak < 20 || res.Peak > 22.5 {
		t.Fatalf("peak %v (TTFT 20 ms per QPS, bound 450 ms: 22.5), %v", res.Peak, err)
	}
	if want := "the token latency constraint (p99 TTFT ≤ 450 ms and TPOT ≤ 40 ms) with no failed samples"; res.Criterion != want {
		t.Errorf("criterion %q, want %q", res.Criterion, want)
	}
	if pk, _ := res.PeakRecord(); pk.TokenLatencies == nil || pk.TokenLatencies.TTFTBoundMs != 450 {
		t.Errorf("peak trial's record lacks its token figures: %+v", pk)
	}
}
