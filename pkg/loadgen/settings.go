package loadgen

import (
	"fmt"
	"math"
	"time"

	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// Ruleset selects which MLPerf behaviour a run follows where the v0.5 papers
// and rules differ from LoadGen 6.0 (MLPERF.md). Every result records it.
type Ruleset string

const (
	// RulesetV05: the papers and the v0.5 rules. MultiStream issues on fixed
	// interval ticks with the skipped-interval rule; no early stopping.
	RulesetV05 Ruleset = "v0.5"
	// RulesetLoadGen6: LoadGen 6.0.17. MultiStream is a closed loop; the
	// early-stopping criteria of LOADGEN-REFERENCE.md §5 apply.
	RulesetLoadGen6 Ruleset = "loadgen6"
)

// Settings are LoadGen's TestSettings under their LoadGen names and units
// (test_settings.h: ns, ms, fractions), the v0.5-only MultiStream fields, the
// ruleset, and the engine's own knobs. Build them with DefaultSettings or
// NewSettings, then adjust fields or apply config files.
type Settings struct {
	Ruleset Ruleset `json:"ruleset"`
	// Task names the preset the settings were built from ("" if none); it
	// decides the official minimums a compliant-length run must meet.
	Task     string         `json:"task,omitempty"`
	Scenario trace.Scenario `json:"scenario"` // LoadGen's enum: 0 SingleStream, 1 MultiStream, 2 Server, 3 Offline
	Mode     trace.Mode     `json:"mode"`

	SingleStreamExpectedLatencyNs       float64 `json:"single_stream_expected_latency_ns"`
	SingleStreamTargetLatencyPercentile float64 `json:"single_stream_target_latency_percentile"`
	MultiStreamExpectedLatencyNs        float64 `json:"multi_stream_expected_latency_ns"`
	MultiStreamTargetLatencyPercentile  float64 `json:"multi_stream_target_latency_percentile"`
	MultiStreamSamplesPerQuery          uint64  `json:"multi_stream_samples_per_query"`
	// MultiStreamTargetQPS is v0.5's fixed issue frequency: ticks are
	// 1/MultiStreamTargetQPS apart (50 ms at 20 Hz). Unused by loadgen6.
	MultiStreamTargetQPS float64 `json:"multi_stream_target_qps"`
	// MultiStreamMaxAsyncQueries is v0.5's outstanding-query limit; the
	// engine supports LoadGen's value 1 only.
	MultiStreamMaxAsyncQueries uint64 `json:"multi_stream_max_async_queries"`

	ServerTargetQPS                      float64 `json:"server_target_qps"`
	ServerTargetLatencyNs                uint64  `json:"server_target_latency_ns"`
	ServerTargetLatencyPercentile        float64 `json:"server_target_latency_percentile"`
	ServerCoalesceQueries                bool    `json:"server_coalesce_queries"`
	ServerFindPeakQPSDecimalsOfPrecision int     `json:"server_find_peak_qps_decimals_of_precision"`
	ServerFindPeakQPSBoundaryStepSize    float64 `json:"server_find_peak_qps_boundary_step_size"`
	// ServerMaxAsyncQueries ends the run early (LoadGen's "too many
	// outstanding queries") when more queries are outstanding; 0 = no limit.
	ServerMaxAsyncQueries      uint64 `json:"server_max_async_queries"`
	ServerNumIssueQueryThreads uint64 `json:"server_num_issue_query_threads"`

	OfflineExpectedQPS float64 `json:"offline_expected_qps"`

	SampleConcatenatePermutation bool   `json:"sample_concatenate_permutation"`
	MinDurationMs                uint64 `json:"min_duration_ms"`
	MaxDurationMs                uint64 `json:"max_duration_ms"`
	MinQueryCount                uint64 `json:"min_query_count"`
	MaxQueryCount                uint64 `json:"max_query_count"`

	QSLRNGSeed                uint64  `json:"qsl_rng_seed"`
	SampleIndexRNGSeed        uint64  `json:"sample_index_rng_seed"`
	ScheduleRNGSeed           uint64  `json:"schedule_rng_seed"`
	AccuracyLogRNGSeed        uint64  `json:"accuracy_log_rng_seed"`
	AccuracyLogProbability    float64 `json:"accuracy_log_probability"`
	AccuracyLogSamplingTarget uint64  `json:"accuracy_log_sampling_target"`

	Test05                   bool   `json:"test05"`
	Test05QSLRNGSeed         uint64 `json:"test05_qsl_rng_seed"`
	Test05SampleIndexRNGSeed uint64 `json:"test05_sample_index_rng_seed"`
	Test05ScheduleRNGSeed    uint64 `json:"test05_schedule_rng_seed"`

	PrintTimestamps                bool   `json:"print_timestamps"`
	PerformanceIssueUnique         bool   `json:"performance_issue_unique"`
	PerformanceIssueSame           bool   `json:"performance_issue_same"`
	PerformanceIssueSameIndex      uint64 `json:"performance_issue_same_index"`
	PerformanceSampleCountOverride uint64 `json:"performance_sample_count_override"`
	AccuracySampleCountOverride    uint64 `json:"accuracy_sample_count_override"`

	// Shape, when set, is a Server run's schedule instead of LoadGen's
	// Poisson one (trace.Shape: stages, a trace file, a mix; issue 31).
	// Such a run is no LoadGen scenario. Not JSON: the spec's fields that
	// built it (stages, trace, mix, ...) are what is kept.
	Shape trace.Shape `json:"-"`

	// Sessions, when set with Shape (pkg/shape.Sessions, which is both),
	// are multi-turn sessions of a generative run (issue 31): the Shape
	// counts their planned turns, Sessions times them (sessions.go).
	Sessions Sessions `json:"-"`

	// UseTokenLatencies judges a Server run by its time to first token
	// and time per output token at the target percentile, against
	// ServerTTFTLatencyNs and ServerTPOTLatencyNs, instead of by query
	// latency against ServerTargetLatencyNs (which may then be 0, as
	// mlperf.conf sets it for the LLM tasks). The JSON keys are LoadGen's
	// TestSettings names; the values are ns, as there.
	UseTokenLatencies   bool   `json:"use_token_latencies"`
	ServerTTFTLatencyNs uint64 `json:"server_ttft_latency"`
	ServerTPOTLatencyNs uint64 `json:"server_tpot_latency"`
	// InferTokenLatencies (gptj) reports token figures inferred from
	// sample latencies: TokenLatencyScalingFactor tokens per sample.
	InferTokenLatencies       bool   `json:"infer_token_latencies"`
	TokenLatencyScalingFactor uint64 `json:"token_latency_scaling_factor"`

	Engine EngineSettings `json:"engine"`
}

// EngineSettings are netloadgen's own knobs; LoadGen has no equivalent.
type EngineSettings struct {
	// SpinThresholdNs: the issuer sleeps on a timer until this close to a
	// due time, then yields in a loop (runtime.Gosched) until it is due.
	// Its timer is a timerfd (pkg/hrtimer), tens of µs late at worst where
	// Go's own wake up to ~1 ms late (the netpoller waits in whole ms), so
	// the default is 0: no spinning. Spinning costs about rate × threshold
	// of one core; BenchmarkServerIssue measures the trade.
	SpinThresholdNs int64 `json:"spin_threshold_ns"`
	// DrainTimeoutMs bounds the wait for outstanding responses once issuing
	// stops; samples still unanswered then count as failed.
	DrainTimeoutMs uint64 `json:"drain_timeout_ms"`
	// EarlyVerdict stops a run as soon as its verdict is INVALID whatever
	// the remaining samples do (see Result.EarlyVerdict). It counts
	// samples over the latency bound or, with use_token_latencies, over
	// the TTFT and the TPOT bound, each against its own allowance.
	EarlyVerdict bool `json:"early_verdict"`
	// MaxErrorMessages is how many failure messages the result keeps.
	MaxErrorMessages int `json:"max_error_messages"`
	// WarmupMs sends the scenario's load for this long on the same SUT
	// before the timed run, and discards it (0: no warm-up; see
	// Result.Warmup). perf_analyzer's --warmup-request-count.
	WarmupMs uint64 `json:"warmup_ms,omitempty"`
	// Concurrency, when positive, replaces the scenario's issuing with a
	// closed loop of that many outstanding queries (SingleStream's trace:
	// one sample per query, chosen as SingleStream chooses them): each
	// completion sends the next query at once. It is not an MLPerf
	// scenario, and its result has no MLPerf verdict (Result.ClosedLoop).
	Concurrency int `json:"concurrency,omitempty"`
	// SLO are the user's per-sample objectives of a generative run
	// (--slo): the result's tokens.goodput_samples_per_second is the rate
	// of samples meeting them. They never change the verdict.
	SLO genai.SLO `json:"slo,omitzero"`
	// Issuers splits the issuing of Server, Offline and closed-loop
	// concurrency runs between this many issuers (0 and 1: one): issuer k
	// of N issues the queries i with i mod N = k of the one trace (Offline:
	// its samples split the same way), each on its own OS thread through
	// its own SUT (WithIssuerSUTs), into the one record. The trace, the
	// statistics and the logs do not depend on it. SingleStream and
	// MultiStream are one sequence of queries, each issued after the
	// previous one: they cannot be split.
	Issuers int `json:"issuers,omitempty"`
}

// MaxIssuers bounds Engine.Issuers: an issuer is an OS thread, a client and
// its share of the connections.
const MaxIssuers = 256

// MaxConcurrency bounds Engine.Concurrency: outstanding queries are
// outstanding requests, each holding a connection's slot.
const MaxConcurrency = 4096

// Engine defaults.
const (
	DefaultSpinThreshold    = 0
	DefaultDrainTimeout     = 10 * time.Second
	DefaultMaxErrorMessages = 10
)

// DefaultSettings returns LoadGen's TestSettings defaults (LOADGEN-REFERENCE
// §1.1; v0.5's header defaults for the MultiStream fields it had) for the
// ruleset, with PerformanceOnly mode and the engine defaults. loadgen6's
// seeds are the official ones (OfficialQSLRNGSeed, ...), which LoadGen
// takes from its built-in mlperf.conf; v0.5's stay 0, as its users passed
// their own mlperf.conf.
func DefaultSettings(r Ruleset) Settings {
	s := Settings{
		Ruleset:                              r,
		Scenario:                             trace.SingleStream,
		Mode:                                 trace.PerformanceOnly,
		SingleStreamExpectedLatencyNs:        1_000_000,
		SingleStreamTargetLatencyPercentile:  0.90,
		MultiStreamExpectedLatencyNs:         8_000_000,
		MultiStreamTargetLatencyPercentile:   0.99,
		MultiStreamSamplesPerQuery:           8,
		MultiStreamTargetQPS:                 10,
		MultiStreamMaxAsyncQueries:           1,
		ServerTargetQPS:                      1,
		ServerTargetLatencyNs:                100_000_000,
		ServerTargetLatencyPercentile:        0.99,
		ServerFindPeakQPSDecimalsOfPrecision: 1,
		ServerFindPeakQPSBoundaryStepSize:    1,
		OfflineExpectedQPS:                   1,
		MinDurationMs:                        10_000,
		MinQueryCount:                        100,
		ServerTTFTLatencyNs:                  100_000_000,
		ServerTPOTLatencyNs:                  100_000_000,
		Engine: EngineSettings{
			SpinThresholdNs:  int64(DefaultSpinThreshold),
			DrainTimeoutMs:   uint64(DefaultDrainTimeout / time.Millisecond),
			MaxErrorMessages: DefaultMaxErrorMessages,
		},
	}
	if r == RulesetV05 {
		// v0.5 test_settings.h: multi_stream_target_latency_percentile=0.9,
		// multi_stream_samples_per_query=4.
		s.MultiStreamTargetLatencyPercentile = 0.9
		s.MultiStreamSamplesPerQuery = 4
	} else {
		s.QSLRNGSeed, s.SampleIndexRNGSeed, s.ScheduleRNGSeed = OfficialQSLRNGSeed, OfficialSampleIndexRNGSeed, OfficialScheduleRNGSeed
	}
	return s
}

// TargetPercentile is the tail percentile the scenario is judged at.
func (s Settings) TargetPercentile() float64 {
	switch s.Scenario {
	case trace.SingleStream:
		return s.SingleStreamTargetLatencyPercentile
	case trace.MultiStream:
		return s.MultiStreamTargetLatencyPercentile
	case trace.Server:
		return s.ServerTargetLatencyPercentile
	}
	return 0.99 // Offline: unused, as in LoadGen
}

// MultiStreamInterval is v0.5's tick spacing, max_async/target_qps (v0.5
// test_settings_internal.cc), rounded to the nanosecond.
func (s Settings) MultiStreamInterval() time.Duration {
	if s.MultiStreamTargetQPS <= 0 {
		return 0
	}
	return time.Duration(math.Round(float64(s.MultiStreamMaxAsyncQueries) * 1e9 / s.MultiStreamTargetQPS))
}

// Validate checks the settings the engine will use; the error names the
// setting. The engine runs performance mode only.
func (s Settings) Validate() error {
	bad := func(name, format string, args ...any) error {
		return fmt.Errorf("%w: %s: "+format, append([]any{trace.ErrInvalidSettings, name}, args...)...)
	}
	finitePos := func(v float64) bool { return v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) }
	fraction := func(v float64) bool { return v > 0 && v < 1 }
	switch s.Ruleset {
	case RulesetV05, RulesetLoadGen6:
	default:
		return bad("ruleset", "%q is not %q or %q", s.Ruleset, RulesetV05, RulesetLoadGen6)
	}
	if s.Mode != trace.PerformanceOnly {
		return bad("mode", "%v is not supported by the engine (PerformanceOnly only; peak search is pkg/search)", s.Mode)
	}
	switch s.Scenario {
	case trace.SingleStream:
		if !finitePos(s.SingleStreamExpectedLatencyNs) {
			return bad("single_stream_expected_latency_ns", "must be positive and finite, got %v", s.SingleStreamExpectedLatencyNs)
		}
		if !fraction(s.SingleStreamTargetLatencyPercentile) {
			return bad("single_stream_target_latency_percentile", "must be a fraction in (0, 1), got %v", s.SingleStreamTargetLatencyPercentile)
		}
	case trace.MultiStream:
		if s.MultiStreamSamplesPerQuery == 0 {
			return bad("multi_stream_samples_per_query", "must be at least 1")
		}
		if !fraction(s.MultiStreamTargetLatencyPercentile) {
			return bad("multi_stream_target_latency_percentile", "must be a fraction in (0, 1), got %v", s.MultiStreamTargetLatencyPercentile)
		}
		if s.Ruleset == RulesetV05 {
			if !finitePos(s.MultiStreamTargetQPS) {
				return bad("multi_stream_target_qps", "must be positive and finite, got %v", s.MultiStreamTargetQPS)
			}
			if s.MultiStreamMaxAsyncQueries != 1 {
				return bad("multi_stream_max_async_queries", "only 1 is supported, got %d", s.MultiStreamMaxAsyncQueries)
			}
			if s.MultiStreamInterval() <= 0 {
				return bad("multi_stream_target_qps", "gives an interval under 1 ns")
			}
		} else if !finitePos(s.MultiStreamExpectedLatencyNs) {
			return bad("multi_stream_expected_latency_ns", "must be positive and finite, got %v", s.MultiStreamExpectedLatencyNs)
		}
	case trace.Server:
		if !finitePos(s.ServerTargetQPS) {
			return bad("server_target_qps", "must be positive and finite, got %v", s.ServerTargetQPS)
		}
		// With token latencies the bound is TTFT and TPOT; LoadGen's LLM
		// settings leave target_latency 0.
		if (s.ServerTargetLatencyNs == 0 && !s.UseTokenLatencies) || s.ServerTargetLatencyNs > math.MaxInt64 {
			return bad("server_target_latency_ns", "must be positive, got %d", s.ServerTargetLatencyNs)
		}
		if !fraction(s.ServerTargetLatencyPercentile) {
			return bad("server_target_latency_percentile", "must be a fraction in (0, 1), got %v", s.ServerTargetLatencyPercentile)
		}
		if s.ServerCoalesceQueries {
			return bad("server_coalesce_queries", "not supported by the engine")
		}
		if s.ServerNumIssueQueryThreads != 0 {
			return bad("server_num_issue_query_threads", "not supported: one scheduler goroutine issues every query")
		}
	case trace.Offline:
		if !finitePos(s.OfflineExpectedQPS) {
			return bad("offline_expected_qps", "must be positive and finite, got %v", s.OfflineExpectedQPS)
		}
	default:
		return bad("scenario", "unknown scenario %d", int(s.Scenario))
	}
	if err := s.checkTokenLatencies(); err != nil {
		return err
	}
	if s.AccuracyLogProbability < 0 || s.AccuracyLogProbability > 1 || math.IsNaN(s.AccuracyLogProbability) {
		return bad("accuracy_log_probability", "must be a fraction in [0, 1], got %v", s.AccuracyLogProbability)
	}
	const maxMs = uint64(math.MaxInt64 / int64(time.Millisecond))
	if s.MinDurationMs > maxMs {
		return bad("min_duration_ms", "too large: %d", s.MinDurationMs)
	}
	if s.MaxDurationMs > maxMs {
		return bad("max_duration_ms", "too large: %d", s.MaxDurationMs)
	}
	if s.Engine.SpinThresholdNs < 0 {
		return bad("engine.spin_threshold_ns", "must not be negative, got %d", s.Engine.SpinThresholdNs)
	}
	if s.Engine.DrainTimeoutMs == 0 || s.Engine.DrainTimeoutMs > maxMs {
		return bad("engine.drain_timeout_ms", "must be positive and below %d, got %d", maxMs, s.Engine.DrainTimeoutMs)
	}
	if s.Engine.WarmupMs > maxMs {
		return bad("engine.warmup_ms", "must be at most %d, got %d", maxMs, s.Engine.WarmupMs)
	}
	if s.Engine.MaxErrorMessages < 0 {
		return bad("engine.max_error_messages", "must not be negative, got %d", s.Engine.MaxErrorMessages)
	}
	if err := s.checkIssuers(); err != nil {
		return err
	}
	return s.checkConcurrency()
}

// checkIssuers: more than one issuer splits a trace whose queries do not
// wait for each other.
func (s Settings) checkIssuers() error {
	n := s.Engine.Issuers
	switch {
	case n < 0 || n > MaxIssuers:
		return fmt.Errorf("%w: issuers: must be in [1, %d], got %d", trace.ErrInvalidSettings, MaxIssuers, n)
	case n > 1 && s.Engine.Concurrency == 0 && (s.Scenario == trace.SingleStream || s.Scenario == trace.MultiStream):
		return fmt.Errorf("%w: issuers: %s is one sequence of queries, each issued when the previous one has completed, so it cannot be split between %d issuers; use 1 (Server, Offline and engine.concurrency runs can be split)",
			trace.ErrInvalidSettings, s.Scenario, n)
	}
	return nil
}

// checkTokenLatencies: the engine judges token latencies as LoadGen 6.0.17
// does in every scenario, and infers token rates from sample counts as
// LoadGen does (results.cc: token_latency_scaling_factor tokens a sample).
func (s Settings) checkTokenLatencies() error {
	bad := func(name, format string, args ...any) error {
		return fmt.Errorf("%w: %s: "+format, append([]any{trace.ErrInvalidSettings, name}, args...)...)
	}
	switch {
	case s.InferTokenLatencies && s.TokenLatencyScalingFactor == 0:
		// LoadGen leaves the factor uninitialized; 0 would infer nothing.
		return bad("token_latency_scaling_factor", "must be at least 1 with infer_token_latencies (the tokens a sample is counted as; gptj: 69), got 0")
	case !s.UseTokenLatencies:
		return nil
	case (s.Scenario == trace.SingleStream || s.Scenario == trace.MultiStream) && s.Ruleset != RulesetLoadGen6:
		// There LoadGen judges token latencies by early stopping alone,
		// which v0.5 does not have.
		return bad("use_token_latencies", "in %s is LoadGen 6.0.17's (judged by early stopping); use the ruleset loadgen6", s.Scenario)
	case s.Engine.Concurrency > 0:
		return bad("engine.concurrency", "a closed loop has no MLPerf verdict; turn use_token_latencies off")
	case s.Scenario == trace.Server && (s.ServerTTFTLatencyNs == 0 || s.ServerTTFTLatencyNs > math.MaxInt64):
		// In int64 ns, as the latencies they are compared with.
		return bad("server_ttft_latency", "must be positive and at most %d ns, got %d", int64(math.MaxInt64), s.ServerTTFTLatencyNs)
	case s.Scenario == trace.Server && (s.ServerTPOTLatencyNs == 0 || s.ServerTPOTLatencyNs > math.MaxInt64):
		return bad("server_tpot_latency", "must be positive and at most %d ns, got %d", int64(math.MaxInt64), s.ServerTPOTLatencyNs)
	}
	return nil
}

// checkConcurrency: a closed loop issues SingleStream's trace, performance
// only, N queries at a time.
func (s Settings) checkConcurrency() error {
	bad := func(name, format string, args ...any) error {
		return fmt.Errorf("%w: %s: "+format, append([]any{trace.ErrInvalidSettings, name}, args...)...)
	}
	c := s.Engine.Concurrency
	switch {
	case c == 0:
		return nil
	case c < 0 || c > MaxConcurrency:
		return bad("engine.concurrency", "must be in [1, %d], got %d", MaxConcurrency, c)
	case s.Scenario != trace.SingleStream:
		return bad("engine.concurrency", "a closed loop issues SingleStream's samples; the scenario is %s", s.Scenario)
	case s.Mode != trace.PerformanceOnly:
		return bad("engine.concurrency", "a closed loop is a performance run; the mode is %s", s.Mode)
	}
	return nil
}

// TraceSettings converts the settings to what pkg/trace generates from. With
// test05 set the three seeds are replaced by the test05 seeds, as StartTest
// did (LOADGEN-REFERENCE §7.3). For v0.5 MultiStream the expected latency is
// the tick interval, so the trace holds the 2×min_duration of ticks that
// LoadGen's generation rule gives; its sample indices follow LoadGen 6.0's
// algorithm (the v0.5 generator's draws are not reproduced).
func (s Settings) TraceSettings() trace.Requested {
	t := trace.Requested{
		Scenario:                            s.Scenario,
		SingleStreamExpectedLatencyNs:       s.SingleStreamExpectedLatencyNs,
		MultiStreamExpectedLatencyNs:        s.MultiStreamExpectedLatencyNs,
		MultiStreamSamplesPerQuery:          s.MultiStreamSamplesPerQuery,
		ServerTargetQPS:                     s.ServerTargetQPS,
		OfflineExpectedQPS:                  s.OfflineExpectedQPS,
		SingleStreamTargetLatencyPercentile: s.SingleStreamTargetLatencyPercentile,
		MultiStreamTargetLatencyPercentile:  s.MultiStreamTargetLatencyPercentile,
		ServerTargetLatencyNs:               s.ServerTargetLatencyNs,
		ServerTargetLatencyPercentile:       s.ServerTargetLatencyPercentile,
		ServerMaxAsyncQueries:               s.ServerMaxAsyncQueries,
		MinDurationMs:                       s.MinDurationMs,
		MaxDurationMs:                       s.MaxDurationMs,
		MinQueryCount:                       s.MinQueryCount,
		MaxQueryCount:                       s.MaxQueryCount,
		QSLRNGSeed:                          s.QSLRNGSeed,
		SampleIndexRNGSeed:                  s.SampleIndexRNGSeed,
		ScheduleRNGSeed:                     s.ScheduleRNGSeed,
		SampleConcatenatePermutation:        s.SampleConcatenatePermutation,
		PerformanceIssueUnique:              s.PerformanceIssueUnique,
		PerformanceIssueSame:                s.PerformanceIssueSame,
		PerformanceIssueSameIndex:           s.PerformanceIssueSameIndex,
		PerformanceSampleCountOverride:      s.PerformanceSampleCountOverride,
		Shape:                               s.Shape,
	}
	if s.Test05 {
		t.QSLRNGSeed = s.Test05QSLRNGSeed
		t.SampleIndexRNGSeed = s.Test05SampleIndexRNGSeed
		t.ScheduleRNGSeed = s.Test05ScheduleRNGSeed
	}
	if s.Scenario == trace.MultiStream && s.Ruleset == RulesetV05 {
		t.MultiStreamExpectedLatencyNs = float64(s.MultiStreamInterval())
	}
	if s.Engine.Concurrency > 1 {
		// N queries outstanding complete about N times as many per
		// second: the trace holds N times SingleStream's queries.
		t.SingleStreamExpectedLatencyNs /= float64(s.Engine.Concurrency)
	}
	return t
}
