package mlperflog

import (
	"fmt"
	"strconv"
	"time"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// The helpers below write the standard keys of a LoadGen run in LoadGen's
// order (LOADGEN-REFERENCE.md §6.2): version, identity, requested and
// effective settings, the mode's message, the loaded set and generation
// keys, the logger counters, power_begin/power_end, then the results. Each
// writes its group at one time; the first error stops the group.

// Version fills the version and environment keys. LoadGen writes its own
// build here; netloadgen writes its own (the checker does not compare them).
type Version struct {
	LoadgenVersion   string            // loadgen_version
	BuildDateLocal   string            // loadgen_build_date_local
	BuildDateUTC     string            // loadgen_build_date_utc
	GitCommitDate    string            // loadgen_git_commit_date
	GitLogMessage    string            // loadgen_git_log_message
	GitStatusMessage string            // loadgen_git_status_message
	FileSHA1         map[string]string // loadgen_file_sha1
}

// Identity fills the test, SUT and QSL keys.
type Identity struct {
	// TestDatetime is written as LoadGen's test_datetime: "%FT%TZ" of the
	// time in its own location (LoadGen uses local time and still writes Z).
	TestDatetime        time.Time
	SUTName             string        // sut_name; a network run's contains "Network SUT"
	GetSUTNameDuration  time.Duration // get_sut_name_duration_ns
	QSLName             string        // qsl_name
	QSLTotalCount       uint64        // qsl_reported_total_count
	QSLPerformanceCount uint64        // qsl_reported_performance_count
}

// kv is one key and value of a group.
type kv struct {
	key   string
	value any
}

func (d *DetailLog) logAll(at time.Duration, kvs []kv) error {
	for _, e := range kvs {
		if err := d.Log(at, e.key, e.value); err != nil {
			return err
		}
	}
	return nil
}

// LogVersion writes the loadgen_* version keys.
func (d *DetailLog) LogVersion(at time.Duration, v Version) error {
	sha := v.FileSHA1
	if sha == nil {
		sha = map[string]string{}
	}
	return d.logAll(at, []kv{
		{"loadgen_version", v.LoadgenVersion},
		{"loadgen_build_date_local", v.BuildDateLocal},
		{"loadgen_build_date_utc", v.BuildDateUTC},
		{"loadgen_git_commit_date", v.GitCommitDate},
		{"loadgen_git_log_message", v.GitLogMessage},
		{"loadgen_git_status_message", v.GitStatusMessage},
		{"loadgen_file_sha1", sha},
	})
}

// FormatTestDatetime formats t as LoadGen's test_datetime ("%FT%TZ").
func FormatTestDatetime(t time.Time) string { return t.Format("2006-01-02T15:04:05Z") }

// FormatPowerTime formats t as LoadGen's power_begin/power_end: UTC,
// "MM-DD-YYYY HH:MM:SS.mmm" (milliseconds truncated).
func FormatPowerTime(t time.Time) string { return t.UTC().Format("01-02-2006 15:04:05.000") }

// LogIdentity writes test_datetime, sut_name, get_sut_name_duration_ns,
// qsl_name and the QSL's reported counts.
func (d *DetailLog) LogIdentity(at time.Duration, id Identity) error {
	return d.logAll(at, []kv{
		{"test_datetime", FormatTestDatetime(id.TestDatetime)},
		{"sut_name", id.SUTName},
		{"get_sut_name_duration_ns", id.GetSUTNameDuration},
		{"qsl_name", id.QSLName},
		{"qsl_reported_total_count", id.QSLTotalCount},
		{"qsl_reported_performance_count", id.QSLPerformanceCount},
	})
}

// LogRequestedSettings writes the requested_* keys: scenario and mode, the
// scenario's own settings, then the overrides every scenario logs.
func (d *DetailLog) LogRequestedSettings(at time.Duration, r *Requested) error {
	if r == nil {
		return fmt.Errorf("%w: nil requested settings", ErrInvalidEvent)
	}
	kvs := []kv{
		{"requested_scenario", r.Scenario.String()},
		{"requested_test_mode", r.Mode.String()},
	}
	switch r.Scenario {
	case trace.SingleStream:
		kvs = append(kvs,
			kv{"requested_single_stream_expected_latency_ns", r.SingleStreamExpectedLatencyNs},
			kv{"requested_single_stream_target_latency_percentile", r.SingleStreamTargetLatencyPercentile})
	case trace.MultiStream:
		kvs = append(kvs,
			kv{"requested_multi_stream_expected_latency_ns", r.MultiStreamExpectedLatencyNs},
			kv{"requested_multi_stream_target_latency_percentile", r.MultiStreamTargetLatencyPercentile},
			kv{"requested_multi_stream_samples_per_query", r.MultiStreamSamplesPerQuery})
	case trace.Server:
		kvs = append(kvs,
			kv{"requested_server_target_qps", r.ServerTargetQPS},
			kv{"requested_server_target_latency_ns", r.ServerTargetLatencyNs},
			kv{"requested_server_target_latency_percentile", r.ServerTargetLatencyPercentile},
			kv{"requested_server_coalesce_queries", r.ServerCoalesceQueries},
			kv{"requested_server_find_peak_qps_decimals_of_precision", r.ServerFindPeakQPSDecimalsOfPrecision},
			kv{"requested_server_find_peak_qps_boundary_step_size", r.ServerFindPeakQPSBoundaryStepSize},
			kv{"requested_server_max_async_queries", r.ServerMaxAsyncQueries},
			kv{"requested_server_num_issue_query_threads", r.ServerNumIssueQueryThreads})
	case trace.Offline:
		kvs = append(kvs, kv{"requested_offline_expected_qps", r.OfflineExpectedQPS})
	}
	kvs = append(kvs,
		kv{"requested_min_duration_ms", r.MinDurationMs},
		kv{"requested_max_duration_ms", r.MaxDurationMs},
		kv{"requested_min_query_count", r.MinQueryCount},
		kv{"requested_max_query_count", r.MaxQueryCount},
		kv{"requested_qsl_rng_seed", r.QSLRNGSeed},
		kv{"requested_sample_index_rng_seed", r.SampleIndexRNGSeed},
		kv{"requested_schedule_rng_seed", r.ScheduleRNGSeed},
		kv{"requested_accuracy_log_rng_seed", r.AccuracyLog.RNGSeed},
		kv{"requested_accuracy_log_probability", r.AccuracyLog.Probability},
		kv{"requested_accuracy_log_sampling_target", r.AccuracyLog.SamplingTarget},
		kv{"requested_print_timestamps", r.PrintTimestamps},
		kv{"requested_performance_issue_unique", r.PerformanceIssueUnique},
		kv{"requested_performance_issue_same", r.PerformanceIssueSame},
		kv{"requested_performance_issue_same_index", r.PerformanceIssueSameIndex},
		kv{"requested_performance_sample_count_override", r.PerformanceSampleCountOverride},
		kv{"requested_accuracy_sample_count_override", r.AccuracySampleCountOverride},
		kv{"requested_sample_concatenate_permutation", r.SampleConcatenatePermutation})
	// LogRequestedTestSettings writes the token keys only with token
	// latencies on, and the TTFT and TPOT bounds for every scenario that
	// has a first token (all but Offline), whether or not they judge it.
	if r.UseTokenLatencies {
		kvs = append(kvs, kv{"requested_use_token_latencies", true})
		if r.Scenario != trace.Offline {
			kvs = append(kvs,
				kv{"requested_server_ttft_latency", r.ServerTTFTLatencyNs},
				kv{"requested_server_tpot_latency", r.ServerTPOTLatencyNs})
		}
	}
	return d.logAll(at, kvs)
}

// LogEffectiveSettings writes the effective_* keys, in LoadGen 6.0.17's
// order (LOADGEN-REFERENCE.md §6.2).
func (d *DetailLog) LogEffectiveSettings(at time.Duration, s *Effective) error {
	if s == nil {
		return fmt.Errorf("%w: nil settings", ErrInvalidEvent)
	}
	return d.logAll(at, []kv{
		{"effective_scenario", s.Scenario.String()},
		{"effective_test_mode", s.Mode.String()},
		{"effective_samples_per_query", s.SamplesPerQuery},
		{"effective_target_qps", s.TargetQPS},
		{"effective_target_latency_ns", s.TargetLatencyNs},
		{"effective_target_latency_percentile", s.TargetLatencyPercentile},
		{"effective_max_async_queries", s.MaxAsyncQueries},
		{"effective_target_duration_ms", s.TargetDurationMs},
		{"effective_min_duration_ms", s.MinDurationMs},
		{"effective_max_duration_ms", s.MaxDurationMs},
		{"effective_min_query_count", s.MinQueryCount},
		{"effective_max_query_count", s.MaxQueryCount},
		{"effective_min_sample_count", s.MinSampleCount},
		{"effective_qsl_rng_seed", s.QSLRNGSeed},
		{"effective_sample_index_rng_seed", s.SampleIndexRNGSeed},
		{"effective_schedule_rng_seed", s.ScheduleRNGSeed},
		{"effective_accuracy_log_rng_seed", s.AccuracyLog.RNGSeed},
		{"effective_accuracy_log_probability", s.AccuracyLog.Probability},
		{"effective_accuracy_log_sampling_target", s.AccuracyLog.SamplingTarget},
		{"effective_print_timestamps", s.PrintTimestamps},
		{"effective_performance_issue_unique", s.PerformanceIssueUnique},
		{"effective_performance_issue_same", s.PerformanceIssueSame},
		{"effective_performance_issue_same_index", s.PerformanceIssueSameIndex},
		{"effective_performance_sample_count", s.PerformanceSampleCount},
		{"effective_accuracy_sample_count", s.AccuracySampleCount},
		{"effective_sample_concatenate_permutation", s.SampleConcatenatePermutation},
	})
}

// LogModeStart writes LoadGen's generic_message at the start of a mode:
// "Starting performance mode" or "Starting accuracy mode".
func (d *DetailLog) LogModeStart(at time.Duration, m trace.Mode) error {
	msg := "Starting performance mode"
	if m == trace.AccuracyOnly {
		msg = "Starting accuracy mode"
	}
	return d.Log(at, "generic_message", msg)
}

// LogLoadedSet writes loaded_qsl_set: the QSL indices loaded, in load order.
func (d *DetailLog) LogLoadedSet(at time.Duration, set []int) error {
	if set == nil {
		set = []int{}
	}
	return d.Log(at, "loaded_qsl_set", set)
}

// LogGenerated writes generated_query_count, generated_samples_per_query and
// generated_query_duration (ns) for a pre-generated trace.
func (d *DetailLog) LogGenerated(at time.Duration, queries, samplesPerQuery uint64, duration time.Duration) error {
	return d.logAll(at, []kv{
		{"generated_query_count", queries},
		{"generated_samples_per_query", samplesPerQuery},
		{"generated_query_duration", duration},
	})
}

// LoggerCounterKeys are the six contention counters LoadGen's logger
// writes after every run of queries (Logger::LogContentionAndAllocations,
// between generated_query_duration and power_begin), in its order.
var LoggerCounterKeys = []string{
	"logger_swap_request_slots_retry_count",
	"logger_swap_request_slots_retry_retry_count",
	"logger_swap_request_slots_retry_reencounter_count",
	"logger_start_reading_entries_retry_count",
	"logger_tls_total_log_cas_fail_count",
	"logger_tls_total_swap_buffers_slot_retry_count",
}

// LogLoggerCounters writes LoadGen's logger contention counters, each 0:
// they count the retries of LoadGen's lock-free per-thread log buffers,
// and netloadgen's detail log is one writer under a mutex, which never
// retries. They are written so the file has LoadGen's keys, key for key.
func (d *DetailLog) LogLoggerCounters(at time.Duration) error {
	kvs := make([]kv, len(LoggerCounterKeys))
	for i, k := range LoggerCounterKeys {
		kvs[i] = kv{k, 0}
	}
	return d.logAll(at, kvs)
}

// LogPowerBegin writes power_begin (the wall-clock start of the timed run).
func (d *DetailLog) LogPowerBegin(at time.Duration, t time.Time) error {
	return d.Log(at, "power_begin", FormatPowerTime(t))
}

// LogPowerEnd writes power_end (the wall-clock end of the timed run).
func (d *DetailLog) LogPowerEnd(at time.Duration, t time.Time) error {
	return d.Log(at, "power_end", FormatPowerTime(t))
}

// LogResults writes LoadGen's result keys for s (results.cc LogDetail), with
// num_errors (the error events written so far) last of LoadGen's keys, then
// netloadgen's own keys, prefixed "netloadgen_".
func (d *DetailLog) LogResults(at time.Duration, s *Summary) error {
	if err := s.check(); err != nil {
		return err
	}
	validity := "INVALID"
	if s.Valid() {
		validity = "VALID"
	}
	kvs := []kv{{"result_validity", validity}}
	if s.Settings.Scenario == trace.Server {
		kvs = append(kvs, kv{"result_perf_constraints_met", s.PerfConstraintsMet})
	}
	kvs = append(kvs,
		kv{"result_min_duration_met", s.MinDurationMet},
		kv{"result_min_queries_met", s.MinQueriesMet},
		kv{"early_stopping_met", s.EarlyStoppingMet()})
	if !s.Valid() {
		kvs = append(kvs, kv{"result_invalid_reason", invalidReason(s)})
	}
	if s.Tokens != nil {
		ttft, tpot := tokenEarlyStoppingTexts(s)
		kvs = append(kvs,
			kv{"early_stopping_ttft_result", oneLineNewlines(ttft)},
			kv{"early_stopping_tpot_result", oneLineNewlines(tpot)})
	} else {
		kvs = append(kvs, kv{"early_stopping_result", oneLineNewlines(earlyStoppingText(s))})
	}
	kvs = append(kvs, kv{"result_query_count", s.QueryCount})
	es := s.EarlyStopping
	if t := s.Tokens; t != nil {
		// early_stopping_latency_ss/_ms are the last estimates LoadGen
		// made: TTFT's, after TPOT's (none when TPOT failed).
		es = EarlyStopping{}
		if t.TTFTEstimate != nil {
			es = *t.TTFTEstimate
		}
	}
	var estimate time.Duration
	if es.Estimate != nil {
		estimate = es.Estimate.Latency
	}
	switch s.Settings.Scenario {
	case trace.Server:
		kvs = append(kvs,
			kv{"result_overlatency_query_count", s.OverLatencyCount},
			kv{"result_scheduled_samples_per_sec", s.ScheduledSamplesPerSecond},
			kv{"result_completed_samples_per_sec", s.CompletedSamplesPerSecond})
	case trace.SingleStream:
		var ms time.Duration
		if es.Estimate99 != nil {
			ms = es.Estimate99.Latency
		}
		kvs = append(kvs,
			kv{"result_qps_with_loadgen_overhead", s.QPSWithLoadgenOverhead},
			kv{"result_qps_without_loadgen_overhead", s.QPSWithoutLoadgenOverhead},
			kv{"early_stopping_latency_ss", estimate},
			kv{"early_stopping_latency_ms", ms})
	case trace.MultiStream:
		q := &s.QueryLatencies
		kvs = append(kvs,
			kv{"result_min_query_latency_ns", q.Min},
			kv{"result_max_query_latency_ns", q.Max},
			kv{"result_mean_query_latency_ns", q.Mean})
		for i, p := range latencyPercentiles {
			kvs = append(kvs, kv{"result_" + percentileLabel(p, 2) + "_percentile_per_query_latency_ns", q.P[i]})
		}
		kvs = append(kvs, kv{"early_stopping_latency_ms", estimate})
	case trace.Offline:
		kvs = append(kvs, kv{"result_samples_per_second", s.SamplesPerSecond})
	}
	l := &s.SampleLatencies
	kvs = append(kvs,
		kv{"result_min_latency_ns", l.Min},
		kv{"result_max_latency_ns", l.Max},
		kv{"result_mean_latency_ns", l.Mean})
	for i, p := range latencyPercentiles {
		kvs = append(kvs, kv{"result_" + percentileLabel(p, 2) + "_percentile_latency_ns", l.P[i]})
	}
	if s.Tokens != nil {
		kvs = append(kvs, tokenKVs(s)...)
	}
	if in := s.Inferred; in != nil {
		// After the token keys, before num_errors (results.cc LogDetail).
		switch s.Settings.Scenario {
		case trace.Server:
			kvs = append(kvs, kv{"result_inferred_completed_tokens_per_second", in.CompletedTokensPerSecond})
		case trace.Offline:
			kvs = append(kvs, kv{"result_inferred_tokens_per_second", in.TokensPerSecond})
		}
	}
	if err := d.logAll(at, kvs); err != nil {
		return err
	}
	if err := d.Log(at, "num_errors", d.Errors()); err != nil {
		return err
	}
	return d.logAll(at, networkKVs(&s.Network))
}

// tokenKVs are LoadGen 6.0.17's token result keys, in its order.
func tokenKVs(s *Summary) []kv {
	t := s.Tokens
	if s.Settings.Scenario == trace.Offline {
		return []kv{{"result_tokens_per_second", t.TokensPerSecond}}
	}
	kvs := []kv{
		{"result_first_token_min_latency_ns", t.FirstToken.Min},
		{"result_first_token_max_latency_ns", t.FirstToken.Max},
		{"result_first_token_mean_latency_ns", t.FirstToken.Mean},
	}
	for i, p := range latencyPercentiles {
		kvs = append(kvs, kv{"result_first_token_" + percentileLabel(p, 2) + "_percentile_latency_ns", t.FirstToken.P[i]})
	}
	kvs = append(kvs,
		kv{"result_token_throughput_with_loadgen_overhead", t.TokenThroughputWithLoadgenOverhead},
		kv{"result_token_throughput", t.TokenThroughput})
	for i, p := range latencyPercentiles {
		kvs = append(kvs, kv{"result_time_per_output_token_" + percentileLabel(p, 2) + "_percentile_ns", t.TPOT.P[i]})
	}
	return append(kvs,
		kv{"result_time_to_output_token_min", t.TPOT.Min},
		kv{"result_time_to_output_token_max", t.TPOT.Max},
		kv{"result_time_to_output_token_mean", t.TPOT.Mean},
		kv{"result_completed_tokens_per_second", t.CompletedTokensPerSecond})
}

// networkKVs are netloadgen's own result keys.
func networkKVs(n *Network) []kv {
	var kvs []kv
	if n.Ruleset != "" {
		kvs = append(kvs, kv{"netloadgen_ruleset", n.Ruleset})
	}
	kvs = append(kvs, kv{"netloadgen_failed_samples", n.FailedSamples})
	if len(n.FirstErrors) > 0 {
		kvs = append(kvs, kv{"netloadgen_first_errors", n.FirstErrors})
	}
	if len(n.Failures) > 0 {
		kvs = append(kvs, kv{"netloadgen_failures", n.Failures})
	}
	for _, c := range n.Constraints {
		kvs = append(kvs, kv{"netloadgen_constraint_met", map[string]string{
			"name": c.Name, "met": strconv.FormatBool(c.Met), "recommendation": c.Recommendation}})
	}
	if l := n.IssueLateness; l != nil {
		kvs = append(kvs,
			kv{"netloadgen_issue_lateness_min_ns", l.Min},
			kv{"netloadgen_issue_lateness_max_ns", l.Max},
			kv{"netloadgen_issue_lateness_mean_ns", l.Mean})
		for i, p := range latencyPercentiles {
			kvs = append(kvs, kv{"netloadgen_issue_lateness_" + percentileLabel(p, 2) + "_percentile_ns", l.P[i]})
		}
	}
	for _, f := range n.Extra {
		kvs = append(kvs, kv{"netloadgen_" + f.Key, f.Value})
	}
	return kvs
}

// oneLineNewlines turns line breaks into spaces, as LoadGen does for
// early_stopping_result.
func oneLineNewlines(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == '\n' {
			b[i] = ' '
		}
	}
	return string(b)
}
