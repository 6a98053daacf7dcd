package search

import (
	"context"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// TrialRequest is one trial the driver asks a TrialRunner for.
type TrialRequest struct {
	Index  int // from 1
	Target float64
	Phase  Phase
	// Dir is where the trial writes its logs ("" writes none).
	Dir string
}

// TrialResult is what a search needs of a finished trial.
type TrialResult struct {
	// Pass is the verdict the algorithm decides on (v0.5: VALID; loadgen6:
	// the latency constraint met with no failed samples).
	Pass bool
	// Verdict is the run's own validity, "VALID" or "INVALID".
	Verdict string
	// Achieved is completed samples per second; Metric the run's reported
	// figure (Server: scheduled samples per second; MultiStream: samples
	// per query).
	Achieved, Metric float64
	TailLatency      time.Duration
	Percentile       float64
	Duration         time.Duration
	// EarlyVerdict says why the trial was stopped before its end ("" if it
	// was not).
	EarlyVerdict string
}

// TrialRunner carries out trials.
type TrialRunner interface {
	RunTrial(ctx context.Context, req TrialRequest) (TrialResult, error)
}

// TrialFunc adapts a function to TrialRunner.
type TrialFunc func(ctx context.Context, req TrialRequest) (TrialResult, error)

// RunTrial calls f.
func (f TrialFunc) RunTrial(ctx context.Context, req TrialRequest) (TrialResult, error) {
	return f(ctx, req)
}

// Passes is the verdict a search decides on. v0.5: the run is VALID.
// loadgen6: FindPeakPerformance checks only the latency constraint
// (loadgen.cc:1000-1033); netloadgen also requires no failed samples, since
// an endpoint that drops requests does not sustain the load.
func Passes(r *loadgen.Result) bool {
	if r.Ruleset == loadgen.RulesetV05 {
		return r.Valid
	}
	return r.PerfConstraintsMet && r.NoFailedSamples
}

// TrialResultOf is what the search takes from a finished run that lasted d.
func TrialResultOf(r *loadgen.Result, d time.Duration) TrialResult {
	tr := TrialResult{Pass: Passes(r), Verdict: r.Validity, Achieved: r.CompletedSamplesPerSec, Duration: d}
	switch r.Scenario {
	case trace.MultiStream.String():
		tr.Metric = float64(r.Effective.SamplesPerQuery)
		tr.Percentile = r.Effective.TargetLatencyPercentile
		tr.Achieved = float64(r.SamplesCompleted) / max(float64(r.DurationNs)/1e9, 1e-9)
		if at, ok := r.QueryLatency.At(tr.Percentile); ok {
			tr.TailLatency = at
		}
	default:
		tr.Metric = r.ScheduledSamplesPerSec
		tr.Percentile = r.Effective.TargetLatencyPercentile
		if at, ok := r.SampleLatency.At(tr.Percentile); ok {
			tr.TailLatency = at
		}
	}
	if ev := r.EarlyVerdict; ev != nil && ev.Stopped {
		tr.EarlyVerdict = ev.Reason
	}
	return tr
}
