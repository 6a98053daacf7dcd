package mlperflog

import "github.com/netloadgen/netloadgen/pkg/trace"

// AccuracyLogSettings are LoadGen's accuracy-log sampling settings
// (accuracy_log_rng_seed, accuracy_log_probability as a fraction,
// accuracy_log_sampling_target), the same requested and effective.
type AccuracyLogSettings struct {
	RNGSeed        uint64
	Probability    float64
	SamplingTarget uint64
}

// Effective are the effective settings of a run as LoadGen logs them
// (TestSettingsInternal): the summary's "Test Parameters Used" and the detail
// log's effective_* keys. They are the trace's Effective settings and what
// else LoadGen logs beside them, as Requested is for the requested_* keys.
type Effective struct {
	trace.Effective
	Mode                trace.Mode
	AccuracyLog         AccuracyLogSettings
	PrintTimestamps     bool
	AccuracySampleCount uint64
	// Token latencies (use_token_latencies, server_ttft_latency,
	// server_tpot_latency in ns): with them on, "Test Parameters Used"
	// lists the TTFT and TPOT bounds in place of target_latency.
	UseTokenLatencies   bool
	ServerTTFTLatencyNs uint64
	ServerTPOTLatencyNs uint64
}

// Requested are the settings as the user asked for them (TestSettings), logged
// as requested_* keys. Which scenario-specific keys appear follows LoadGen's
// LogRequestedTestSettings; fields of other scenarios are ignored.
type Requested struct {
	trace.Requested
	Mode trace.Mode

	ServerCoalesceQueries                bool    // server_coalesce_queries
	ServerFindPeakQPSDecimalsOfPrecision int     // server_find_peak_qps_decimals_of_precision
	ServerFindPeakQPSBoundaryStepSize    float64 // server_find_peak_qps_boundary_step_size
	ServerNumIssueQueryThreads           uint64  // server_num_issue_query_threads

	AccuracyLog                 AccuracyLogSettings
	PrintTimestamps             bool
	AccuracySampleCountOverride uint64 // accuracy_sample_count_override (0 = the QSL's)
	UseTokenLatencies           bool   // use_token_latencies (requested_use_token_latencies is logged only when true)
	ServerTTFTLatencyNs         uint64 // server_ttft_latency (logged with token latencies, every scenario but Offline)
	ServerTPOTLatencyNs         uint64 // server_tpot_latency
}
