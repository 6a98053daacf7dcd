package search

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// transientServer is a fake endpoint of capacity 400 QPS: a trial above it
// fails after running its full 3 s; the trials listed in slow meet a
// transient and fail after runFor instead (early when runFor is short).
type transientServer struct {
	slow   map[int]bool
	runFor time.Duration
	seen   []TrialRequest
}

func (s *transientServer) trials() TrialFunc {
	return func(ctx context.Context, req TrialRequest) (TrialResult, error) {
		s.seen = append(s.seen, req)
		tr := TrialResult{Pass: req.Target <= 400, Achieved: req.Target, Metric: req.Target, Percentile: 0.99,
			Duration: 4 * time.Second, RunDuration: 3 * time.Second, Verdict: "INVALID"}
		if s.slow[req.Index] {
			tr.Pass, tr.RunDuration, tr.EarlyVerdict = false, s.runFor, "latency bound exceeded"
		}
		return tr, nil
	}
}

func peakPlanner(t *testing.T) Planner {
	t.Helper()
	p, err := NewFindPeak(FindPeakConfig{Start: 100, StepSize: 1, Precision: 25})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Trial 2 (200 QPS, the first boundary trial) meets a transient: 0.1 s
// into a 3 s trial is early, so it runs again, and the search goes on to
// the steady-state peak, with both trials in the record and the summary.
func TestRetryRunsAnEarlyFailureAgain(t *testing.T) {
	dir := t.TempDir()
	srv := &transientServer{slow: map[int]bool{2: true}, runFor: 100 * time.Millisecond}
	res, err := Run(t.Context(), Config{Planner: peakPlanner(t), Trials: srv.trials(), Dir: dir,
		Retry: Retry{Times: 1, Within: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Found || res.Peak < 375 || res.Peak > 400 {
		t.Fatalf("peak %v (found %v), want the steady state's, within 25 of 400; trials %+v", res.Peak, res.Found, res.Trials)
	}
	first, retry := res.Trials[1], res.Trials[2]
	if first.Target != 200 || first.Pass || first.RetriedAs != 3 || retry.RetryOf != 2 || retry.Target != 200 || !retry.Pass {
		t.Errorf("trials 2 and 3: %+v / %+v; want 200 QPS failed, retried as 3, which passed", first, retry)
	}
	if res.RetryFailedTrials != 1 {
		t.Errorf("retry_failed_trials %d in the record, want 1", res.RetryFailedTrials)
	}
	got, err := Load(dir)
	if err != nil || got.Trials[1].RetriedAs != 3 || got.Trials[2].RetryOf != 2 || got.Trials[1].RunS != 0.1 {
		t.Fatalf("search.json: %v, %+v", err, got)
	}
	sum, _ := os.ReadFile(filepath.Join(dir, SummaryFile))
	for _, want := range []string{"Retry: trial 2 at 200 stopped by its early verdict after 0.1 s of its timed run", "trial 3 ran it again and passed: the retry changed the outcome", "boundary, retry of 2"} {
		if !strings.Contains(string(sum), want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
}

// The same transient found late in the trial (2 s of a 3 s run) is the
// server's: no retry, and the failure bounds the search.
func TestRetryLeavesALateFailure(t *testing.T) {
	srv := &transientServer{slow: map[int]bool{2: true}, runFor: 2 * time.Second}
	res, err := Run(t.Context(), Config{Planner: peakPlanner(t), Trials: srv.trials(), Retry: Retry{Times: 1, Within: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range res.Trials {
		if tr.RetryOf != 0 || tr.RetriedAs != 0 {
			t.Errorf("trial %d retried: %+v", tr.Index, tr)
		}
	}
	if !res.Found || res.Peak >= 200 {
		t.Errorf("peak %v, want below the 200 QPS that failed", res.Peak)
	}
	if strings.Contains(Summary(res), "Retry:") {
		t.Errorf("summary tells of a retry:\n%s", Summary(res))
	}
}

// A retry that fails early too is retried again while Times allows, then
// its failure stands.
func TestRetryStopsAfterTimes(t *testing.T) {
	srv := &transientServer{slow: map[int]bool{2: true, 3: true, 4: true}, runFor: 100 * time.Millisecond}
	res, err := Run(t.Context(), Config{Planner: peakPlanner(t), Trials: srv.trials(), Retry: Retry{Times: 2, Within: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Trials[3].RetryOf != 3 || res.Trials[3].RetriedAs != 0 || res.Trials[4].Target == 200 {
		t.Fatalf("trials %+v; want 2 retried as 3, 3 as 4, then the search moves on", res.Trials)
	}
	if res.Peak >= 200 {
		t.Errorf("peak %v: three failures at 200 must bound it", res.Peak)
	}
	if !strings.Contains(Summary(res), "trial 4 ran it again and failed again: the failure stands") {
		t.Errorf("summary:\n%s", Summary(res))
	}
}

// With no retry (Times 0, whatever Within says), the search is today's:
// the same trials and peak as a Config that has never heard of retries.
func TestRetryOffIsTodaysSearch(t *testing.T) {
	run := func(r Retry) *Result {
		srv := &transientServer{slow: map[int]bool{2: true}, runFor: 100 * time.Millisecond}
		res, err := Run(t.Context(), Config{Planner: peakPlanner(t), Trials: srv.trials(), Retry: r})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	today, off := run(Retry{}), run(Retry{Times: 0, Within: time.Hour})
	if !reflect.DeepEqual(today.Trials, off.Trials) || today.Peak != off.Peak || today.EndReason != off.EndReason {
		t.Errorf("retry off changed the search:\n%+v\n%+v", today.Trials, off.Trials)
	}
	if today.Peak >= 200 {
		t.Errorf("peak %v: without retries the transient at 200 bounds it", today.Peak)
	}
}

// v0.5: a verifying trial retried is not one of the verifying runs; the
// retry that passed is.
func TestRetryInVerifyingRuns(t *testing.T) {
	p, _ := NewVerify(VerifyConfig{Start: 100, Upper: 800, Precision: 25, Runs: 3})
	var srv transientServer
	early := 0
	trials := func(ctx context.Context, req TrialRequest) (TrialResult, error) {
		tr, _ := srv.trials()(ctx, req)
		if req.Phase == PhaseVerify && early == 0 {
			early = req.Index
			tr.Pass, tr.RunDuration = false, 50*time.Millisecond
		}
		return tr, nil
	}
	res, err := Run(t.Context(), Config{Planner: p, Trials: TrialFunc(trials), Retry: Retry{Times: 1, Within: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Found || len(res.Verifying) != 3 {
		t.Fatalf("found %v, verifying %v: %s", res.Found, res.Verifying, res.EndReason)
	}
	for _, i := range res.Verifying {
		if i == early {
			t.Errorf("verifying trials %v include trial %d, which was retried", res.Verifying, early)
		}
	}
	if res.Verifying[0] != early+1 {
		t.Errorf("verifying trials %v; want the retry %d first", res.Verifying, early+1)
	}
}

// A sweep judges nothing: its trials are never retried.
func TestRetryNotInASweep(t *testing.T) {
	p, _ := NewSweep([]float64{200, 800}, false)
	srv := &transientServer{slow: map[int]bool{1: true}, runFor: 10 * time.Millisecond}
	res, err := Run(t.Context(), Config{Planner: p, Mode: ModeSweep, Trials: srv.trials(), Retry: Retry{Times: 1, Within: time.Second}})
	if err != nil || len(res.Trials) != 2 {
		t.Fatalf("%v, %d trials, want 2", err, len(res.Trials))
	}
}

// A retry counts against max trials, and is not run past it.
func TestRetryWithinMaxTrials(t *testing.T) {
	srv := &transientServer{slow: map[int]bool{2: true}, runFor: 100 * time.Millisecond}
	res, err := Run(t.Context(), Config{Planner: peakPlanner(t), Trials: srv.trials(), MaxTrials: 2, Retry: Retry{Times: 1, Within: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trials) != 2 || res.Trials[1].RetriedAs != 0 {
		t.Errorf("trials %+v; want 2, the second not retried (no room)", res.Trials)
	}
}
