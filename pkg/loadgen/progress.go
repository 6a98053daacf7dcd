package loadgen

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// Progress is a snapshot of a run in flight. Counters are atomics the hot
// path updates anyway; only the live percentiles cost a histogram merge,
// paid by the caller that polls.
type Progress struct {
	Started  bool `json:"started"`
	Finished bool `json:"finished"`
	// PlannedQueries is the trace's query count (an upper bound for SS/MS,
	// which stop once min count and duration are met).
	PlannedQueries   int   `json:"planned_queries"`
	IssuedQueries    int64 `json:"issued_queries"`
	CompletedQueries int64 `json:"completed_queries"`
	// InFlightQueries are issued and neither completed nor failed by the
	// drain (which does not count them completed).
	InFlightQueries  int64 `json:"in_flight_queries"`
	CompletedSamples int64 `json:"completed_samples"`
	FailedSamples    int64 `json:"failed_samples"`
	// OverLatencySamples counts Server samples over the bound, failed ones
	// included (0 for other scenarios).
	OverLatencySamples int64         `json:"over_latency_samples"`
	Elapsed            time.Duration `json:"elapsed_ns"`
	// ExpectedEnd is when issuing should end, from the start: the last
	// scheduled query (Server), the target duration (SS/MS) or the Offline
	// query's size at the expected rate.
	ExpectedEnd      time.Duration `json:"expected_end_ns"`
	MaxIssueLateness time.Duration `json:"max_issue_lateness_ns"`
	// Live latency percentiles over the completed samples (HDR, 3 digits).
	P50 time.Duration `json:"p50_ns"`
	P90 time.Duration `json:"p90_ns"`
	P99 time.Duration `json:"p99_ns"`
	// Failures are the failed samples so far by kind, as Result.Failures
	// names and sorts them, without examples (Example ""); nil when none
	// failed. A count may trail FailedSamples by the failures being
	// counted at that moment.
	Failures []Failure `json:"failures,omitempty"`
	// Tokens are a generative run's token figures so far; nil until a
	// sample is answered with tokens.
	Tokens *LiveTokens `json:"tokens,omitempty"`
}

// LiveTokens are a generative run's token figures while it goes, over the
// samples answered so far with at least one token: TTFT and TPOT
// percentiles from histograms (within 0.1%; the result's are exact, and
// TPOT counts samples of two tokens or more, as the result's does), and the
// output tokens over the time since the start.
type LiveTokens struct {
	Samples      int64 `json:"samples"`
	OutputTokens int64 `json:"output_tokens"`
	// OutputTokensPerSecond is OutputTokens over Progress.Elapsed: the run
	// so far, as the result's output_tokens_per_second is at the end.
	OutputTokensPerSecond float64       `json:"output_tokens_per_second"`
	TTFTP50               time.Duration `json:"ttft_p50_ns"`
	TTFTP99               time.Duration `json:"ttft_p99_ns"`
	TPOTP50               time.Duration `json:"tpot_p50_ns"`
	TPOTP99               time.Duration `json:"tpot_p99_ns"`
}

// Progress returns a snapshot; safe to call from any goroutine at any time.
func (r *Run) Progress() Progress {
	p := Progress{PlannedQueries: r.n, Finished: r.finished.Load()}
	start := r.startedAt.Load()
	if m := r.merge; m != nil {
		// A merged run's record starts at a fixed instant; its workers'
		// start is the one elapsed time counts from.
		start = m.liveStart.Load()
	}
	if start == nil {
		return p
	}
	p.Started = true
	p.IssuedQueries = r.queriesIssued()
	p.CompletedQueries = r.queriesDone()
	// A query the drain gave up on is failed, not in flight.
	p.InFlightQueries = p.IssuedQueries - p.CompletedQueries - r.drainedQ.Load()
	p.CompletedSamples = r.samplesDone()
	p.FailedSamples = r.failedS.Load()
	if r.bound > 0 {
		p.OverLatencySamples = r.samples.Over()
	}
	p.Elapsed = r.clock.Now().Sub(*start)
	p.ExpectedEnd = r.expectedEnd()
	p.MaxIssueLateness = time.Duration(r.maxLateness.Load())
	qs, q := [3]float64{0.50, 0.90, 0.99}, [3]time.Duration{}
	_ = r.live.Quantiles(qs[:], q[:]) // fractions within [0, 1], room for each
	p.P50, p.P90, p.P99 = q[0], q[1], q[2]
	p.Failures = r.failures.snapshot()
	p.Tokens = r.liveTokens(p.Elapsed)
	return p
}

// liveTokens are the token figures so far, nil before the first sample
// answered with tokens. The histograms' merge is the poller's cost, not
// the completions'.
func (r *Run) liveTokens(elapsed time.Duration) *LiveTokens {
	t := r.tok.Load()
	if t == nil || t.liveSamples.Load() == 0 {
		return nil
	}
	lt := &LiveTokens{Samples: t.liveSamples.Load(), OutputTokens: t.liveTokens.Load()}
	if elapsed > 0 {
		lt.OutputTokensPerSecond = float64(lt.OutputTokens) / elapsed.Seconds()
	}
	qs, v := [2]float64{0.50, 0.99}, [2]time.Duration{}
	_ = t.ttft.Quantiles(qs[:], v[:]) // fractions within [0, 1], room for each
	lt.TTFTP50, lt.TTFTP99 = v[0], v[1]
	_ = t.tpot.Quantiles(qs[:], v[:])
	lt.TPOTP50, lt.TPOTP99 = v[0], v[1]
	return lt
}

func (r *Run) expectedEnd() time.Duration {
	e := r.tr.Settings
	switch e.Scenario {
	case trace.Server:
		return r.tr.LastScheduled()
	case trace.Offline:
		return time.Duration(float64(e.SamplesPerQuery) / e.TargetQPS * float64(time.Second))
	}
	return time.Duration(e.TargetDurationMs) * time.Millisecond
}

// LatencySnapshot is the live latency histogram's counts so far (every
// completed sample; a copy): the difference of two is the latencies of the
// samples completed between them, which is how a live view shows latency
// per second. Safe to call from any goroutine; it merges the shards.
func (r *Run) LatencySnapshot() *hdrhistogram.Snapshot {
	return r.live.Snapshot().Export()
}
