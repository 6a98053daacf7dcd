package loadgen

import (
	"time"

	"github.com/netloadgen/netloadgen/pkg/serverview"
	"github.com/netloadgen/netloadgen/pkg/stats"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// Result is everything a finished run measured and concluded: what the
// LoadGen summary and detail logs print, plus netloadgen's own additions
// (failures, issue lateness, early verdict, compliance). Times are ns, from
// the run's start unless named otherwise; RESULT.md documents the JSON.
type Result struct {
	Ruleset  Ruleset `json:"ruleset"`
	Scenario string  `json:"scenario"`
	Mode     string  `json:"mode"`
	SUTName  string  `json:"sut_name"`
	Task     string  `json:"task,omitempty"`

	Requested Settings  `json:"requested_settings"`
	Effective Effective `json:"effective_settings"`

	QSLTotalSampleCount       int   `json:"qsl_reported_total_count"`
	QSLPerformanceSampleCount int   `json:"qsl_reported_performance_count"`
	LoadedSet                 []int `json:"loaded_qsl_set"`
	GeneratedQueryCount       int   `json:"generated_query_count"`
	GeneratedSamplesPerQuery  int   `json:"generated_samples_per_query"`
	GeneratedQueryDurationNs  int64 `json:"generated_query_duration_ns"`

	// StartTime and EndTime are wall-clock (power_begin / power_end,
	// test_datetime); DurationNs is measured on the run's clock.
	StartTime  time.Time `json:"start_time"`
	EndTime    time.Time `json:"end_time"`
	DurationNs int64     `json:"duration_ns"`

	EndReason  StopReason `json:"end_reason"`
	EndMessage string     `json:"end_message"`
	// DrainTimedOut: issuing stopped but some responses never came within
	// the drain timeout; those samples are counted in SamplesFailed.
	DrainTimedOut bool  `json:"drain_timed_out"`
	Unanswered    int64 `json:"unanswered_samples"`

	Validity           string `json:"result_validity"` // "VALID", "INVALID" or "N/A"
	Valid              bool   `json:"valid"`
	MinDurationMet     bool   `json:"result_min_duration_met"`
	MinQueriesMet      bool   `json:"result_min_queries_met"`
	PerfConstraintsMet bool   `json:"result_perf_constraints_met"`
	// HasPerfConstraints: Server, and v0.5 MultiStream (skipped intervals).
	HasPerfConstraints bool `json:"has_perf_constraints"`
	EarlyStoppingMet   bool `json:"early_stopping_met"`
	NoFailedSamples    bool `json:"no_failed_samples"`
	// InvalidReasons name each unmet criterion; Recommendations give
	// LoadGen's advice (its wording where it has one), in the same order.
	InvalidReasons  []string `json:"invalid_reasons,omitempty"`
	Recommendations []string `json:"recommendations,omitempty"`

	// EarlyStopping is loadgen6's early-stopping outcome (nil under v0.5
	// and for Offline).
	EarlyStopping *EarlyStoppingResult `json:"early_stopping,omitempty"`

	// CompliantLength: min duration and count are at least the official
	// values for the ruleset, scenario and task; NonCompliant says why not.
	CompliantLength bool     `json:"compliant_length"`
	NonCompliant    []string `json:"non_compliant,omitempty"`

	QueriesIssued    int64 `json:"result_query_count"`
	QueriesCompleted int64 `json:"queries_completed"`
	SamplesIssued    int64 `json:"samples_issued"`
	SamplesCompleted int64 `json:"samples_completed"` // answered successfully
	SamplesFailed    int64 `json:"samples_failed"`
	// OverLatencyCount: Server samples over the bound, failed included
	// (result_overlatency_query_count).
	OverLatencyCount int64 `json:"result_overlatency_query_count"`
	// ProtocolErrors counts done calls that matched no outstanding sample
	// (unknown query, bad range, second completion); LateCompletions those
	// after the drain ended. Neither changes a latency.
	ProtocolErrors  int64    `json:"protocol_errors"`
	LateCompletions int64    `json:"late_completions"`
	Errors          []string `json:"errors,omitempty"` // the first engine.max_error_messages
	// Failures count the failed samples by kind (outcome and status), most
	// first, each with its first message; at most MaxFailureKinds entries.
	Failures []Failure `json:"failures,omitempty"`
	// RequestsResent counts requests the SUT sent again because they
	// provably never reached the server (their connection was found
	// closed or reset before any byte was written; Resender). They are
	// not failures. A written request is never resent: if its connection
	// closes before the answer, its samples fail.
	RequestsResent int64 `json:"requests_resent"`

	FinalQueryScheduledTimeNs      int64 `json:"final_query_scheduled_time_ns"`
	FinalQueryIssuedTimeNs         int64 `json:"final_query_issued_time_ns"`
	FinalQueryAllSamplesDoneTimeNs int64 `json:"final_query_all_samples_done_time_ns"`

	// Metric is the scenario's headline number.
	Metric Metric `json:"metric"`
	// Throughputs as LoadGen computes them (0 where not applicable).
	CompletedSamplesPerSec    float64 `json:"result_completed_samples_per_sec"` // Server: (completed−1)/final done
	ScheduledSamplesPerSec    float64 `json:"result_scheduled_samples_per_sec"` // Server: (n−1)/final scheduled
	QPSWithLoadgenOverhead    float64 `json:"result_qps_with_loadgen_overhead"` // SS: (n−1)/final issued
	QPSWithoutLoadgenOverhead float64 `json:"result_qps_without_loadgen_overhead"`
	SamplesPerSecond          float64 `json:"result_samples_per_second"` // Offline: n/max latency
	// TargetQPS is the scheduled load: server_target_qps for Server.
	TargetQPS float64 `json:"target_qps"`

	SampleLatency LatencyStats `json:"sample_latency"`
	QueryLatency  LatencyStats `json:"query_latency"`
	// SampleLatencyAnswered and QueryLatencyAnswered are the same tables
	// over the answered samples (queries) only: count the answered ones,
	// failed the failed ones left out, no INT64_MAX anywhere. What a
	// person reads (the summary's own lines, the tables of a search, the
	// report) shows these with "N failed" beside them; the tables above
	// keep LoadGen's convention, which LoadGen's logs need. Nil in a
	// result.json written before they existed, and for a run with no
	// samples.
	SampleLatencyAnswered *LatencyStats `json:"sample_latency_answered,omitempty"`
	QueryLatencyAnswered  *LatencyStats `json:"query_latency_answered,omitempty"`
	// IssueLateness is actual issue − scheduled time per query; it is
	// already inside the Server latencies (charged to the SUT).
	IssueLateness LatencyStats `json:"issue_lateness"`
	// GeneratorBound is set when issue lateness is a material share of the
	// Server bound (GeneratorBoundShare); Warnings then name it. Warnings
	// never change the verdict.
	GeneratorBound *GeneratorBound `json:"generator_bound,omitempty"`
	Warnings       []string        `json:"warnings,omitempty"`

	// Headers are the run's request headers as shown, "Name: <redacted>"
	// for a value given literally and "Name: @env:VAR" for a reference:
	// never a value. The engine sends none; pkg/runner sets them.
	Headers []string `json:"headers,omitempty"`
	// TLS is the run's TLS settings, set by the network runner for an
	// https:// or grpcs:// target; the engine itself knows no transport.
	TLS *TLSInfo `json:"tls,omitempty"`
	// API is the generative API the run spoke (genai's names: "generate",
	// "generate-stream", "kserve-stream", "openai-chat",
	// "openai-completions"), asked for or found by the probe; empty for a
	// run of KServe tensor inference. pkg/runner sets it.
	API string `json:"api,omitempty"`
	// Server and ServerMetrics are what the server's own interfaces said
	// of the run: its statistics extension's delta, its Prometheus
	// metrics scraped during it (pkg/serverview). pkg/runner sets them.
	Server        *serverview.Server  `json:"server,omitempty"`
	ServerMetrics *serverview.Metrics `json:"server_metrics,omitempty"`

	MultiStreamV05 *MultiStreamTicks `json:"multi_stream_v05,omitempty"`
	EarlyVerdict   *EarlyVerdict     `json:"early_verdict,omitempty"`
	// Warmup is the warm-up sent before the timed run (engine.warmup_ms),
	// nil without one. Nothing above counts it.
	Warmup *Warmup `json:"warmup,omitempty"`
	// ClosedLoop is set for a closed-loop run (engine.concurrency): not an
	// MLPerf scenario, so Validity is ValidityNA and Valid false, with no
	// invalid_reasons or LoadGen advice.
	ClosedLoop *ClosedLoop `json:"closed_loop,omitempty"`
	// Shard is set for one shard of a distributed run (WithShard): the
	// counts are its shard's only, and its verdict is not the run's (the
	// run is judged on the merged record of every shard).
	Shard *Shard `json:"shard,omitempty"`
	// Workers are the workers of a distributed run, by shard: what each
	// issued and measured, and its clock as the coordinator measured it.
	// Nil for a run on one host.
	Workers []WorkerShard `json:"workers,omitempty"`
	// Tokens is what a generative run measured of its tokens (TokenResult);
	// nil when no sample carried any.
	Tokens *TokenResult `json:"tokens,omitempty"`

	// Sessions is a run with multi-turn sessions' figures (sessionresult.go).
	Sessions *SessionsResult `json:"sessions,omitempty"`
	// TokenLatencies is the token-latency verdict of a run with
	// use_token_latencies (LoadGen's TTFT/TPOT rules); nil without it.
	TokenLatencies *TokenLatencies `json:"token_latencies,omitempty"`
	// InferredTokens is the token rate a run with infer_token_latencies
	// infers from its sample count (Server and Offline); nil without it.
	InferredTokens *InferredTokens `json:"inferred_tokens,omitempty"`
	// LoadShape is set for a run with a load shape (Settings.Shape: stages,
	// a trace file, a mix), which is no LoadGen scenario: its verdict is
	// its SLO's, or N/A without one. Stages and Models are its parts, when
	// the shape has stages (StagedShape) or names models (ModelShape).
	LoadShape *LoadShape    `json:"load_shape,omitempty"`
	Stages    []StageResult `json:"stages,omitempty"`
	Models    []ModelResult `json:"models,omitempty"`
}

// InferredTokens is LoadGen 6.0.17's token rate inferred as
// token_latency_scaling_factor tokens a sample (results.cc LogSummary and
// LogDetail, the infer_token_latencies blocks): gptj's throughput in
// tokens, for a SUT that reports no token counts. LoadGen prints it for
// Server and Offline only.
type InferredTokens struct {
	ScalingFactor uint64 `json:"token_latency_scaling_factor"`
	// Server: factor × (samples − 1) / final_query_all_samples_done_time
	// (LoadGen's result_inferred_completed_tokens_per_second).
	CompletedTokensPerSecond float64 `json:"result_inferred_completed_tokens_per_second,omitempty"`
	// Offline: factor × samples / max latency
	// (result_inferred_tokens_per_second).
	TokensPerSecond float64 `json:"result_inferred_tokens_per_second,omitempty"`
}

// inferredTokensOf computes res.InferredTokens as LoadGen does: the
// integer product factor × count first (uint64, as in C++), then over the
// time in seconds. A Server run counts its completed samples, as
// CompletedSamplesPerSec does (in LoadGen every sample completes).
func inferredTokensOf(s Settings, res *Result) {
	if !s.InferTokenLatencies {
		return
	}
	per := func(n int64, ns int64) float64 {
		if n <= 0 || ns <= 0 {
			return 0
		}
		return float64(s.TokenLatencyScalingFactor*uint64(n)) / (float64(ns) / 1e9)
	}
	switch s.Scenario {
	case trace.Server:
		res.InferredTokens = &InferredTokens{ScalingFactor: s.TokenLatencyScalingFactor,
			CompletedTokensPerSecond: per(res.SamplesCompleted-1, res.FinalQueryAllSamplesDoneTimeNs)}
	case trace.Offline:
		it := &InferredTokens{ScalingFactor: s.TokenLatencyScalingFactor}
		if res.SampleLatency.MaxNs != int64(stats.FailedLatency) {
			it.TokensPerSecond = per(res.SamplesIssued, res.SampleLatency.MaxNs)
		}
		res.InferredTokens = it
	}
}

// ValidityNA is the validity of a run that has no MLPerf verdict: a
// closed loop, a shaped run without an SLO.
const ValidityNA = "N/A"

// ClosedLoop is what a closed-loop run measured beyond the latencies.
type ClosedLoop struct {
	// Concurrency is the number of queries kept outstanding;
	// MaxOutstanding the most the run ever had (never above it).
	Concurrency    int   `json:"concurrency"`
	MaxOutstanding int64 `json:"max_outstanding"`
	// CompletedSamplesPerSec is the throughput: samples answered
	// successfully per second, up to the last completion.
	CompletedSamplesPerSec float64 `json:"completed_samples_per_sec"`
}

// Effective are LoadGen's effective settings (effective_* in the detail log).
type Effective struct {
	Scenario                     string  `json:"effective_scenario"`
	SamplesPerQuery              uint64  `json:"effective_samples_per_query"`
	TargetQPS                    float64 `json:"effective_target_qps"`
	TargetLatencyNs              uint64  `json:"effective_target_latency_ns"`
	TargetLatencyPercentile      float64 `json:"effective_target_latency_percentile"`
	MaxAsyncQueries              uint64  `json:"effective_max_async_queries"`
	TargetDurationMs             uint64  `json:"effective_target_duration_ms"`
	MinDurationMs                uint64  `json:"effective_min_duration_ms"`
	MaxDurationMs                uint64  `json:"effective_max_duration_ms"`
	MinQueryCount                uint64  `json:"effective_min_query_count"`
	MaxQueryCount                uint64  `json:"effective_max_query_count"`
	MinSampleCount               uint64  `json:"effective_min_sample_count"`
	QSLRNGSeed                   uint64  `json:"effective_qsl_rng_seed"`
	SampleIndexRNGSeed           uint64  `json:"effective_sample_index_rng_seed"`
	ScheduleRNGSeed              uint64  `json:"effective_schedule_rng_seed"`
	PerformanceSampleCount       uint64  `json:"effective_performance_sample_count"`
	SampleConcatenatePermutation bool    `json:"effective_sample_concatenate_permutation"`
	PerformanceIssueUnique       bool    `json:"effective_performance_issue_unique"`
	PerformanceIssueSame         bool    `json:"effective_performance_issue_same"`
	PerformanceIssueSameIndex    uint64  `json:"effective_performance_issue_same_index"`
}

func effectiveOf(e trace.Effective) Effective {
	return Effective{
		Scenario: e.Scenario.String(), SamplesPerQuery: e.SamplesPerQuery, TargetQPS: e.TargetQPS,
		TargetLatencyNs: e.TargetLatencyNs, TargetLatencyPercentile: e.TargetLatencyPercentile,
		MaxAsyncQueries: e.MaxAsyncQueries, TargetDurationMs: e.TargetDurationMs, MinDurationMs: e.MinDurationMs,
		MaxDurationMs: e.MaxDurationMs, MinQueryCount: e.MinQueryCount, MaxQueryCount: e.MaxQueryCount,
		MinSampleCount: e.MinSampleCount, QSLRNGSeed: e.QSLRNGSeed, SampleIndexRNGSeed: e.SampleIndexRNGSeed,
		ScheduleRNGSeed: e.ScheduleRNGSeed, PerformanceSampleCount: e.PerformanceSampleCount,
		SampleConcatenatePermutation: e.SampleConcatenatePermutation, PerformanceIssueUnique: e.PerformanceIssueUnique,
		PerformanceIssueSame: e.PerformanceIssueSame, PerformanceIssueSameIndex: e.PerformanceIssueSameIndex,
	}
}

// Metric is a scenario's headline result.
type Metric struct {
	Name  string  `json:"name"` // e.g. "Completed samples per second", "90.0th percentile latency (ns)"
	Value float64 `json:"value"`
	Unit  string  `json:"unit"` // "samples/s", "ns", "samples/query"
}

// LatencyStats summarise exact latencies (stats.Latencies). A failed sample
// sorts above every real latency and shows as 9223372036854775807
// (stats.FailedLatency) wherever it lands.
type LatencyStats struct {
	Count  int   `json:"count"`
	Failed int   `json:"failed"`
	MinNs  int64 `json:"min_ns"`
	MaxNs  int64 `json:"max_ns"`
	MeanNs int64 `json:"mean_ns"` // of the successful ones, truncated like LoadGen
	// Percentiles: 50, 90, 95, 97, 99, 99.9 and the target percentile, as
	// sorted[floor(n·p)].
	Percentiles []Percentile `json:"percentiles,omitempty"`
}

// Answered is the table a person reads: answered (count the answered
// samples, failed the others) when the result has it; else LoadGen's s
// with failed 0, for a result.json written before answered tables: its
// failed samples are then inside count and percentiles, which read
// "failed" where they land on one.
func Answered(s LatencyStats, answered *LatencyStats) LatencyStats {
	if answered != nil {
		return *answered
	}
	s.Failed = 0
	return s
}

// Percentile is one exact percentile.
type Percentile struct {
	P         float64 `json:"p"` // a fraction: 0.99
	LatencyNs int64   `json:"latency_ns"`
}

// At returns the latency at percentile p if it was computed.
func (s LatencyStats) At(p float64) (time.Duration, bool) {
	for _, q := range s.Percentiles {
		if q.P == p {
			return time.Duration(q.LatencyNs), true
		}
	}
	return 0, false
}

// EarlyStoppingResult is loadgen6's early-stopping outcome (§5).
type EarlyStoppingResult struct {
	Met bool `json:"met"`
	// Text is LoadGen's early_stopping_result text (lines joined by \n).
	Text string `json:"text"`
	// SingleStream / MultiStream: the percentile estimate.
	Queries           int64   `json:"queries"`
	MinQueries        int64   `json:"min_queries,omitempty"`
	Discarded         int64   `json:"discarded,omitempty"`
	Percentile        float64 `json:"percentile,omitempty"`
	EstimateNs        int64   `json:"estimate_ns,omitempty"`     // early_stopping_latency_ss / _ms
	EstimateP99Ns     int64   `json:"estimate_p99_ns,omitempty"` // SingleStream's p99 estimate
	OverLatency       int64   `json:"over_latency,omitempty"`    // Server: t
	Required          int64   `json:"required,omitempty"`        // Server: h(t)+t
	MoreQueriesNeeded int64   `json:"more_queries_needed,omitempty"`
}

// MultiStreamTicks is v0.5 MultiStream's interval accounting.
type MultiStreamTicks struct {
	IntervalNs int64 `json:"interval_ns"`
	// QueriesWithSkips counts queries whose successor had to skip at least
	// one tick (query_intervals ≥ 2): the paper's "queries producing one or
	// more skipped intervals".
	QueriesWithSkips int64 `json:"queries_with_skipped_intervals"`
	// SkippedIntervals is the total of ticks passed over; each is one of the
	// rules document's "overtime queries" (002:63).
	SkippedIntervals int64 `json:"skipped_intervals"`
	OvertimeQueries  int64 `json:"overtime_queries"`
	MaxTicksAdvanced int64 `json:"max_ticks_advanced"`
	// IntervalsAtPercentile is sorted query_intervals[floor(n·p)]; the rule
	// fails when it is ≥ 2.
	IntervalsAtPercentile int64   `json:"intervals_at_percentile"`
	Percentile            float64 `json:"percentile"`
	Met                   bool    `json:"met"`
}

// EarlyVerdict records that a run was stopped once its verdict could no
// longer change. Allowances of -1 did not apply.
type EarlyVerdict struct {
	Stopped                  bool   `json:"stopped"`
	AtNs                     int64  `json:"at_ns"`
	Reason                   string `json:"reason"`
	CompletedSamples         int64  `json:"completed_samples"`
	FailedSamples            int64  `json:"failed_samples"`
	OverLatency              int64  `json:"over_latency"`
	PlannedSamples           int64  `json:"planned_samples"`
	AllowedOverPercentile    int64  `json:"allowed_over_percentile"`
	AllowedOverEarlyStopping int64  `json:"allowed_over_early_stopping"`
}

// TLSInfo is what result.json records of a run's TLS: its settings, never a
// certificate or a key.
type TLSInfo struct {
	InsecureSkipVerify bool   `json:"insecure_skip_verify"`
	ServerName         string `json:"server_name,omitempty"` // the name checked: the one given, else the target's host
	CustomCA           bool   `json:"custom_ca"`             // a CA was trusted besides the system's roots
	ClientCertificate  bool   `json:"client_certificate"`    // mutual TLS
}

// WorkerShard is one worker of a distributed run in its result.json.
type WorkerShard struct {
	Name string `json:"name"`
	// Shard k: the worker issued the queries i with i mod len(workers) = k.
	Shard            int   `json:"shard"`
	SamplesIssued    int64 `json:"samples_issued"`
	SamplesCompleted int64 `json:"samples_completed"`
	SamplesFailed    int64 `json:"samples_failed"`
	// Its issue lateness (issued − scheduled, on its own clock).
	IssueLatenessP50Ns int64 `json:"issue_lateness_p50_ns"`
	IssueLatenessP99Ns int64 `json:"issue_lateness_p99_ns"`
	IssueLatenessMaxNs int64 `json:"issue_lateness_max_ns"`
	// Its clock minus the coordinator's, and the bound on that estimate's
	// error (half the least round trip of the exchanges).
	ClockOffsetNs      int64 `json:"clock_offset_ns"`
	ClockUncertaintyNs int64 `json:"clock_uncertainty_ns"`
	// Lost: the worker was lost during the run (its samples not accounted
	// for count as failed).
	Lost bool `json:"lost,omitempty"`
}
