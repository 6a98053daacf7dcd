package mlperflog

import (
	"errors"
	"fmt"
	"time"

	"github.com/netloadgen/netloadgen/pkg/stats"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// Errors returned by this package; test with errors.Is.
var (
	// ErrInvalidSummary: a Summary that cannot be written (nil, an unknown
	// scenario or mode, or the early-stopping result its scenario needs is
	// missing).
	ErrInvalidSummary = errors.New("mlperflog: invalid summary")
	// ErrUnsupportedValue: a detail-log value of a type LoadGen never logs.
	ErrUnsupportedValue = errors.New("mlperflog: unsupported detail value")
	// ErrInvalidEvent: a detail-log event with an empty key or a negative time.
	ErrInvalidEvent = errors.New("mlperflog: invalid detail event")
	// ErrClosed: a write to a log after Close.
	ErrClosed = errors.New("mlperflog: log closed")
)

// latencyPercentiles are the percentiles LoadGen's summary and detail log list
// for every run (results.h latency_percentiles), as fractions.
var latencyPercentiles = [6]float64{0.50, 0.90, 0.95, 0.97, 0.99, 0.999}

// LatencyStats is LoadGen's latency table: min, max, mean and the latencies at
// the 50, 90, 95, 97, 99 and 99.9 percentiles (P[i] at those, in that order),
// in nanoseconds. LoadGen's mean is an integer (truncated) mean.
type LatencyStats struct {
	Min, Max, Mean time.Duration
	P              [6]time.Duration
}

// NewLatencyStats computes the table from exact latencies with LoadGen's
// percentile rule (stats.Latencies.Percentile). A failed sample appears as
// stats.FailedLatency; the mean is that of the completed samples.
func NewLatencyStats(l stats.Latencies) (LatencyStats, error) {
	s, err := l.Summary()
	if err != nil {
		return LatencyStats{}, fmt.Errorf("latency stats: %w", err)
	}
	out := LatencyStats{Min: s.Min, Max: s.Max, Mean: s.Mean}
	ps, err := l.Percentiles(latencyPercentiles[:])
	if err != nil {
		return LatencyStats{}, fmt.Errorf("latency stats: %w", err)
	}
	copy(out.P[:], ps)
	return out, nil
}

// EarlyStopping holds the early-stopping verdicts of a run, as pkg/stats
// computes them. Which ones a summary needs depends on the scenario:
// Server needs Server; SingleStream needs Estimate (at the target percentile)
// and Estimate99 (LoadGen's extra p99 estimate); MultiStream needs Estimate
// (over query latencies); Offline needs none and always passes.
type EarlyStopping struct {
	Server     *stats.ServerEarlyStopping
	Estimate   *stats.PercentileEstimate
	Estimate99 *stats.PercentileEstimate
}

// Constraint is a validity condition netloadgen adds to LoadGen's (for
// example the v0.5 MultiStream skipped-interval rule). An unmet one makes the
// run INVALID and its Recommendation is listed among the summary's
// Recommendations and in result_invalid_reason.
type Constraint struct {
	Name           string
	Met            bool
	Recommendation string
}

// Field is one extra key/value line of netloadgen's own summary section;
// the detail log writes it as "netloadgen_<Key>". Keys should be snake_case.
type Field struct {
	Key, Value string
}

// Network holds what netloadgen measures beyond LoadGen. None of it is
// LoadGen's: it is written after LoadGen's content, labelled as ours.
type Network struct {
	// Ruleset is "loadgen6" or "v0.5" (MLPERF.md); empty leaves it out.
	Ruleset string
	// FailedSamples counts samples whose request failed. Any makes the run
	// INVALID (MLPERF.md, Mapping queries onto the network).
	FailedSamples int64
	// FirstErrors are the first few failure messages, one line each.
	FirstErrors []string
	// Failures are the failed samples by kind, one line each, most first
	// ("190 failed: error HTTP 500 (e.g. server: HTTP 500: boom)").
	Failures []string
	// IssueLateness is actual issue time minus scheduled time over all
	// queries, when measured (nil otherwise).
	IssueLateness *LatencyStats
	// AnsweredSampleLatencies is the sample latency table over the
	// answered samples only, when any failed (nil otherwise): the "In
	// readable units:" line shows it, with FailedSamples beside it, in
	// place of LoadGen's table whose tail is the failed samples'
	// INT64_MAX. LoadGen's lines above keep LoadGen's table.
	AnsweredSampleLatencies *LatencyStats
	// Constraints are further validity conditions of ours.
	Constraints []Constraint
	// Extra are further lines of ours (protocol, target, batching, ...).
	Extra []Field
	// Warnings are ours about the run, not reasons of its verdict (e.g. the
	// load generator was the bottleneck); one "Warning : " line each.
	Warnings []string
	// Headlines are the section's first lines after the ruleset, "Key :
	// Value", unindented: what a reader should see first (the run stopped
	// early, the endpoint is saturated). A key must not begin as a line an
	// official tool anchors on (see writeNetwork).
	Headlines []Field
	// MinDurationNote, when set and min duration is not met, is listed
	// among the Recommendations right after LoadGen's own min-duration
	// advice, marked as ours: which flag or field to change, and to what.
	MinDurationNote string
	// InvalidNote, when set and the run is INVALID, is listed among the
	// Recommendations right after LoadGen's perf-constraints advice (at the
	// end when there is none), marked as ours; LoadGen's lines stay as they are.
	InvalidNote string
}

// Summary is everything mlperf_log_summary.txt shows, and the result part of
// mlperf_log_detail.txt. The engine fills it; this package only formats it.
type Summary struct {
	// SUTName is the SUT's name; a network run's must contain "Network SUT"
	// for the submission checker (MLPERF.md).
	SUTName string
	// Settings are the effective settings; Scenario and Mode come from here.
	Settings Effective

	// Headline and additional numbers; only the scenario's own are written.
	// TargetPercentileLatency: SingleStream sample latency, MultiStream query
	// latency, at Settings.TargetLatencyPercentile.
	TargetPercentileLatency   time.Duration
	CompletedSamplesPerSecond float64 // Server: (completed−1)/final_query_all_samples_done_time (loadgen.Result)
	ScheduledSamplesPerSecond float64 // Server: (n−1)/final_query_scheduled_time
	SamplesPerSecond          float64 // Offline: n/max_latency
	QPSWithLoadgenOverhead    float64 // SingleStream: (n−1)/final_query_issued_time
	QPSWithoutLoadgenOverhead float64 // SingleStream: 1/mean latency

	// LoadGen's validity conditions (LOADGEN-REFERENCE.md §4).
	// PerfConstraintsMet is read for Server only. MinQueriesMet covers both
	// the query and the sample minimum.
	MinDurationMet     bool
	MinQueriesMet      bool
	PerfConstraintsMet bool
	EarlyStopping      EarlyStopping

	// QueryCount is result_query_count (queries issued); OverLatencyCount is
	// result_overlatency_query_count (Server).
	QueryCount       int64
	OverLatencyCount int64

	// SampleLatencies is the per-sample table; QueryLatencies the per-query
	// table, written for MultiStream only.
	SampleLatencies LatencyStats
	QueryLatencies  LatencyStats

	// Tokens holds the token-latency figures of a run with
	// use_token_latencies (nil without): LoadGen then judges a Server run
	// by TTFT and TPOT, and logs its token lines and keys.
	Tokens *TokenLatencies
	// Inferred holds the token rate of a run with infer_token_latencies
	// (nil without): LoadGen prints it for Server and Offline only.
	Inferred *InferredTokens

	// Warnings and Errors are the counts of warning and error lines of the
	// detail log (DetailLog.Warnings, DetailLog.Errors): the summary footer.
	Warnings, Errors int

	Network Network
}

// TokenLatencies is what LoadGen 6.0.17 logs of a run with
// use_token_latencies (results.cc): but for Offline the first-token (TTFT)
// and time-per-output-token (TPOT) tables, early stopping on both and the
// token rates, and for Server their constraints; for Offline its tokens
// per second.
type TokenLatencies struct {
	FirstToken, TPOT LatencyStats
	// TTFTMet and TPOTMet: the percentiles within their bounds (Server);
	// Summary.PerfConstraintsMet must be their conjunction.
	TTFTMet, TPOTMet bool
	// Early stopping (Server): TPOT is judged first; TTFT is nil when TPOT
	// failed (LoadGen's && short-circuits: an empty text).
	TPOTEarlyStopping, TTFTEarlyStopping *stats.ServerEarlyStopping
	// Early stopping (SingleStream, MultiStream): the percentile estimates
	// (Estimate, and SingleStream's Estimate99) of the TPOT and the TTFT
	// arrays (MultiStream: of the query latencies, both), TPOT first; TTFT
	// nil when TPOT failed. Its estimates are early_stopping_latency_ss
	// and _ms.
	TPOTEstimate, TTFTEstimate *EarlyStopping
	// FirstTokenTarget (SingleStream, MultiStream) is the first-token
	// latency at the target percentile, the summary's "th first token
	// percentile latency" line.
	FirstTokenTarget time.Duration
	// TPSWithoutLoadgenOverhead (SingleStream): tokens / (mean latency s ×
	// samples); "TPS w/" is TokenThroughputWithLoadgenOverhead.
	TPSWithoutLoadgenOverhead float64
	// Server: tokens / final done time, / final issued time, and / (mean
	// latency ns × samples); Offline: tokens / max latency.
	CompletedTokensPerSecond           float64
	TokenThroughputWithLoadgenOverhead float64
	TokenThroughput                    float64
	TokensPerSecond                    float64
}

// InferredTokens is LoadGen 6.0.17's token rate inferred as
// token_latency_scaling_factor tokens a sample (results.cc, the
// infer_token_latencies blocks of LogSummary and LogDetail).
type InferredTokens struct {
	// Server: factor × (samples − 1) / final done time; Offline: factor ×
	// samples / max latency.
	CompletedTokensPerSecond float64
	TokensPerSecond          float64
}

// EarlyStoppingMet reports LoadGen's early-stopping verdict for the scenario.
func (s *Summary) EarlyStoppingMet() bool {
	if t := s.Tokens; t != nil {
		met := func(e *EarlyStopping) bool { return e != nil && e.Estimate != nil && e.Estimate.Met }
		switch s.Settings.Scenario {
		case trace.Server:
			return t.TPOTEarlyStopping != nil && t.TPOTEarlyStopping.Met && t.TTFTEarlyStopping != nil && t.TTFTEarlyStopping.Met
		case trace.SingleStream, trace.MultiStream:
			return met(t.TPOTEstimate) && met(t.TTFTEstimate)
		}
		return true
	}
	switch s.Settings.Scenario {
	case trace.Server:
		return s.EarlyStopping.Server != nil && s.EarlyStopping.Server.Met
	case trace.SingleStream, trace.MultiStream:
		return s.EarlyStopping.Estimate != nil && s.EarlyStopping.Estimate.Met
	}
	return true
}

// loadgenValid is LoadGen's own verdict (results.cc): min duration, min
// queries, the Server latency constraint and early stopping.
func (s *Summary) loadgenValid() bool {
	ok := s.MinDurationMet && s.MinQueriesMet && s.EarlyStoppingMet()
	if s.Settings.Scenario == trace.Server {
		ok = ok && s.PerfConstraintsMet
	}
	return ok
}

// Valid reports the run's result: LoadGen's verdict, and no failed samples,
// and every netloadgen constraint met.
func (s *Summary) Valid() bool {
	if !s.loadgenValid() || s.Network.FailedSamples > 0 {
		return false
	}
	for _, c := range s.Network.Constraints {
		if !c.Met {
			return false
		}
	}
	return true
}

// check reports what would make the summary unwritable.
func (s *Summary) check() error {
	if s == nil {
		return fmt.Errorf("%w: nil", ErrInvalidSummary)
	}
	sc := s.Settings.Scenario
	if sc < trace.SingleStream || sc > trace.Offline {
		return fmt.Errorf("%w: unknown scenario %d", ErrInvalidSummary, int(sc))
	}
	if !s.Settings.Mode.Valid() {
		return fmt.Errorf("%w: unknown mode %d", ErrInvalidSummary, int(s.Settings.Mode))
	}
	es := s.EarlyStopping
	if s.Tokens != nil {
		t := s.Tokens
		switch {
		case sc == trace.Server && t.TPOTEarlyStopping == nil:
			return fmt.Errorf("%w: Server with token latencies needs Tokens.TPOTEarlyStopping", ErrInvalidSummary)
		case (sc == trace.SingleStream || sc == trace.MultiStream) && (t.TPOTEstimate == nil || t.TPOTEstimate.Estimate == nil):
			return fmt.Errorf("%w: %v with token latencies needs Tokens.TPOTEstimate", ErrInvalidSummary, sc)
		case sc == trace.SingleStream && t.TPOTEstimate.Estimate.Met && t.TPOTEstimate.Estimate99 == nil:
			return fmt.Errorf("%w: SingleStream with token latencies needs Tokens.TPOTEstimate.Estimate99", ErrInvalidSummary)
		}
		return nil
	}
	switch {
	case sc == trace.Server && es.Server == nil:
		return fmt.Errorf("%w: Server needs EarlyStopping.Server", ErrInvalidSummary)
	case (sc == trace.SingleStream || sc == trace.MultiStream) && es.Estimate == nil:
		return fmt.Errorf("%w: %v needs EarlyStopping.Estimate", ErrInvalidSummary, sc)
	case sc == trace.SingleStream && es.Estimate.Met && es.Estimate99 == nil:
		return fmt.Errorf("%w: SingleStream needs EarlyStopping.Estimate99", ErrInvalidSummary)
	}
	return nil
}

// failedLatencyNs is how a failed sample's latency appears in the tables.
const failedLatencyNs = stats.FailedLatency
