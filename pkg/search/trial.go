package search

import (
	"context"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/stats"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// TrialRequest is one trial the driver asks a TrialRunner for.
type TrialRequest struct {
	Index  int // from 1
	Target float64
	Phase  Phase
	// Scout asks for a short trial (Step.Scout); Stage is the trial's
	// stage in a scout search (StageScout, StageVerify; "" in a full one).
	Scout bool
	Stage string
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
	// Duration is the whole trial's wall time; RunDuration its timed run's
	// (the engine's duration: no connect, probe or warm-up), 0 if not known.
	Duration    time.Duration
	RunDuration time.Duration
	// MinDuration is the minimum duration the trial was run with: a scout
	// trial's is short (0: not known). A retry's "early" is a share of it.
	MinDuration time.Duration
	// EarlyVerdict says why the trial was stopped before its end ("" if it
	// was not).
	EarlyVerdict string
	// Criteria are the run's criteria one by one (nil: not known); Pass is
	// decided from some of them (Passes).
	Criteria *Criteria
	// LatencyBound is the latency constraint's bound at Percentile (Server;
	// 0 where the constraint is another, v0.5 MultiStream's intervals).
	LatencyBound time.Duration
	// Latency are the sample latencies at p50, p90, p99 (nil: not known);
	// OverBound the samples over the bound.
	Latency   *Percentiles
	OverBound int64
	// TailAnswered, LatencyAnswered are TailLatency and Latency over the
	// answered samples only (TailAnswered < 0, LatencyAnswered nil: none
	// answered, or not known); FailedSamples the samples that failed.
	// The tables show these: a failed sample's latency is LoadGen's
	// INT64_MAX, which TailLatency and Latency keep.
	TailAnswered    time.Duration
	LatencyAnswered *Percentiles
	FailedSamples   int64
	// Tokens are a Server trial's TTFT and TPOT at Percentile against
	// their bounds with use_token_latencies (the latency constraint then);
	// Goodput its samples meeting the SLO (nil: none).
	Tokens  *TokenFigures
	Goodput *GoodputFigures
}

// Criteria are a trial's run judged criterion by criterion, as result.json
// has them (pkg/loadgen/RESULT.md): the run is VALID when all hold.
type Criteria struct {
	// LatencyMet is the latency constraint (result_perf_constraints_met):
	// Server's latency at the percentile within the bound, v0.5
	// MultiStream's skipped intervals.
	LatencyMet bool `json:"latency_met"`
	// EarlyStoppingMet is loadgen6's early stopping (true under v0.5,
	// which has none).
	EarlyStoppingMet bool `json:"early_stopping_met"`
	MinDurationMet   bool `json:"min_duration_met"`
	MinQueriesMet    bool `json:"min_queries_met"`
	NoFailedSamples  bool `json:"no_failed_samples"`
}

// How a search judges its trials (Result.JudgedBy).
const (
	// JudgedByLatency: loadgen6's FindPeakPerformance checks the latency
	// constraint only (netloadgen adds no failed samples).
	JudgedByLatency = "latency_constraint"
	// JudgedByValidity: v0.5 takes a trial that is a VALID run.
	JudgedByValidity = "valid_run"
)

// JudgedBy is how a search under ruleset judges its trials (Passes).
func JudgedBy(ruleset string) string {
	if ruleset == string(loadgen.RulesetV05) {
		return JudgedByValidity
	}
	return JudgedByLatency
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
// an endpoint that drops requests does not sustain the load. With token
// latencies the latency constraint is TTFT and TPOT (result.json's
// token_latencies), under both rulesets.
func Passes(r *loadgen.Result) bool {
	if met, ok := tokenConstraintMet(r); ok {
		if r.Ruleset == loadgen.RulesetV05 {
			return met && r.MinDurationMet && r.MinQueriesMet && r.EarlyStoppingMet && r.NoFailedSamples
		}
		return met && r.NoFailedSamples
	}
	if r.Ruleset == loadgen.RulesetV05 {
		return r.Valid
	}
	return r.PerfConstraintsMet && r.NoFailedSamples
}

// TrialResultOf is what the search takes from a finished run that lasted d,
// judged by j.
func TrialResultOf(r *loadgen.Result, d time.Duration, j Judge) TrialResult {
	tr := TrialResult{Pass: j.Passes(r), Verdict: r.Validity, Achieved: r.CompletedSamplesPerSec, Duration: d, RunDuration: time.Duration(r.DurationNs),
		MinDuration: time.Duration(r.Effective.MinDurationMs) * time.Millisecond,
		Criteria: &Criteria{LatencyMet: r.PerfConstraintsMet, EarlyStoppingMet: r.EarlyStoppingMet,
			MinDurationMet: r.MinDurationMet, MinQueriesMet: r.MinQueriesMet, NoFailedSamples: r.NoFailedSamples}}
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
		tr.LatencyBound = time.Duration(r.Effective.TargetLatencyNs)
		if at, ok := r.SampleLatency.At(tr.Percentile); ok {
			tr.TailLatency = at
		}
	}
	tr.Latency, tr.OverBound = percentilesOf(r.SampleLatency), r.OverLatencyCount
	answeredFigures(&tr, r)
	if met, ok := tokenConstraintMet(r); ok {
		tr.Criteria.LatencyMet = met
	}
	if ev := r.EarlyVerdict; ev != nil && ev.Stopped {
		tr.EarlyVerdict = ev.Reason
	}
	figures(&tr, r)
	return tr
}

// answeredFigures fills tr's answered-only latencies from r's answered
// tables (the query latency's for MultiStream's tail, as TailLatency).
func answeredFigures(tr *TrialResult, r *loadgen.Result) {
	tr.FailedSamples, tr.TailAnswered = r.SamplesFailed, -1
	tail := r.SampleLatencyAnswered
	if r.Scenario == trace.MultiStream.String() {
		tail = r.QueryLatencyAnswered
	}
	if tail != nil {
		if at, ok := tail.At(tr.Percentile); ok {
			tr.TailAnswered = at
		}
	}
	if a := r.SampleLatencyAnswered; a != nil {
		tr.LatencyAnswered = percentilesOf(*a)
	}
}

// FailedPercentile stands for a percentile that lands on a failed sample.
const FailedPercentile = -1

// percentilesOf is p50, p90 and p99 of s in ms; nil when any is missing
// (no sample completed).
func percentilesOf(s loadgen.LatencyStats) *Percentiles {
	var v [3]float64
	for i, p := range []float64{0.50, 0.90, 0.99} {
		at, ok := s.At(p)
		if !ok {
			return nil
		}
		v[i] = float64(at) / 1e6
		if at == stats.FailedLatency {
			v[i] = FailedPercentile
		}
	}
	return &Percentiles{P50: v[0], P90: v[1], P99: v[2]}
}
