package search

import (
	"context"
	"time"
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
