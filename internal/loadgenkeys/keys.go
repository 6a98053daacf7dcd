// Package loadgenkeys holds, for tests, the MLLOG keys the C++ LoadGen
// 6.0.17 writes to mlperf_log_detail.txt, in its order, for a run's
// scenario, mode and settings. The lists are written from LoadGen's source
// (loadgen.cc StartTest, RunPerformanceMode, RunAccuracyMode, IssueQueries
// and GenerateQueries; version.cc LogLoadgenVersion; test_settings_internal.cc
// LogRequestedTestSettings and LogEffectiveSettings; logging.cc
// Logger::LogContentionAndAllocations; results.cc
// PerformanceSummary::LogDetail), not from netloadgen's output, so a test
// comparing the two finds where netloadgen departs.
//
// Occasional lines (error_* and warning_generic_message, which LoadGen
// writes where something happens) are not in the lists: a test leaves them
// out before comparing, and checks their place on its own.
package loadgenkeys

// Run describes the run whose keys are wanted.
type Run struct {
	// Scenario is LoadGen's name: SingleStream, MultiStream, Server or
	// Offline.
	Scenario string
	// Accuracy: an AccuracyOnly run; Sets is then how many loadable sets it
	// ran (at least 1).
	Accuracy bool
	Sets     int
	// Tokens: use_token_latencies is on.
	Tokens bool
	// Invalid: a performance run whose result is INVALID
	// (result_invalid_reason is written).
	Invalid bool
}

// Detail returns every key of the run's detail log, in order, occasional
// lines left out.
func Detail(r Run) []string {
	keys := append(StartTest(), Requested(r.Scenario, r.Tokens)...)
	keys = append(keys, Effective()...)
	if r.Accuracy {
		keys = append(keys, "generic_message") // "Starting accuracy mode"
		for range max(r.Sets, 1) {
			keys = append(keys, IssueQueries()...)
		}
		return keys
	}
	keys = append(keys, "generic_message") // "Starting performance mode"
	keys = append(keys, IssueQueries()...)
	return append(keys, Results(r.Scenario, r.Tokens, r.Invalid)...)
}

// StartTest is what StartTest writes before the settings: LogLoadgenVersion
// (loadgen_git_status_message is followed by the error
// error_uncommitted_loadgen_changes only when LoadGen was built from a
// modified tree), then the test, SUT and QSL keys.
func StartTest() []string {
	return []string{
		"loadgen_version", "loadgen_build_date_local", "loadgen_build_date_utc", "loadgen_git_commit_date",
		"loadgen_git_log_message", "loadgen_git_status_message", "loadgen_file_sha1",
		"test_datetime", "sut_name", "get_sut_name_duration_ns", "qsl_name",
		"qsl_reported_total_count", "qsl_reported_performance_count",
	}
}

// Requested is LogRequestedTestSettings: scenario and mode, the scenario's
// own settings, the overrides, and with use_token_latencies the token keys
// (the TTFT and TPOT bounds for every scenario but Offline).
func Requested(scenario string, tokens bool) []string {
	keys := []string{"requested_scenario", "requested_test_mode"}
	switch scenario {
	case "SingleStream":
		keys = append(keys, "requested_single_stream_expected_latency_ns", "requested_single_stream_target_latency_percentile")
	case "MultiStream":
		keys = append(keys, "requested_multi_stream_expected_latency_ns", "requested_multi_stream_target_latency_percentile",
			"requested_multi_stream_samples_per_query")
	case "Server":
		keys = append(keys, "requested_server_target_qps", "requested_server_target_latency_ns",
			"requested_server_target_latency_percentile", "requested_server_coalesce_queries",
			"requested_server_find_peak_qps_decimals_of_precision", "requested_server_find_peak_qps_boundary_step_size",
			"requested_server_max_async_queries", "requested_server_num_issue_query_threads")
	case "Offline":
		keys = append(keys, "requested_offline_expected_qps")
	}
	keys = append(keys,
		"requested_min_duration_ms", "requested_max_duration_ms", "requested_min_query_count", "requested_max_query_count",
		"requested_qsl_rng_seed", "requested_sample_index_rng_seed", "requested_schedule_rng_seed",
		"requested_accuracy_log_rng_seed", "requested_accuracy_log_probability", "requested_accuracy_log_sampling_target",
		"requested_print_timestamps", "requested_performance_issue_unique", "requested_performance_issue_same",
		"requested_performance_issue_same_index", "requested_performance_sample_count_override",
		"requested_accuracy_sample_count_override", "requested_sample_concatenate_permutation")
	if tokens {
		keys = append(keys, "requested_use_token_latencies")
		if scenario != "Offline" {
			keys = append(keys, "requested_server_ttft_latency", "requested_server_tpot_latency")
		}
	}
	return keys
}

// Effective is TestSettingsInternal::LogEffectiveSettings: the same keys
// for every scenario.
func Effective() []string {
	return []string{
		"effective_scenario", "effective_test_mode", "effective_samples_per_query", "effective_target_qps",
		"effective_target_latency_ns", "effective_target_latency_percentile", "effective_max_async_queries",
		"effective_target_duration_ms", "effective_min_duration_ms", "effective_max_duration_ms",
		"effective_min_query_count", "effective_max_query_count", "effective_min_sample_count",
		"effective_qsl_rng_seed", "effective_sample_index_rng_seed", "effective_schedule_rng_seed",
		"effective_accuracy_log_rng_seed", "effective_accuracy_log_probability", "effective_accuracy_log_sampling_target",
		"effective_print_timestamps", "effective_performance_issue_unique", "effective_performance_issue_same",
		"effective_performance_issue_same_index", "effective_performance_sample_count",
		"effective_accuracy_sample_count", "effective_sample_concatenate_permutation",
	}
}

// IssueQueries is one loaded set's run of queries: LoadSamplesToRam's
// loaded_qsl_set, GenerateQueries' three keys, then, once the queries are
// done, Logger::LogContentionAndAllocations' six counters and
// power_begin/power_end.
func IssueQueries() []string {
	return []string{
		"loaded_qsl_set",
		"generated_query_count", "generated_samples_per_query", "generated_query_duration",
		"logger_swap_request_slots_retry_count", "logger_swap_request_slots_retry_retry_count",
		"logger_swap_request_slots_retry_reencounter_count", "logger_start_reading_entries_retry_count",
		"logger_tls_total_log_cas_fail_count", "logger_tls_total_swap_buffers_slot_retry_count",
		"power_begin", "power_end",
	}
}

// percentiles are LoadGen's latency_percentiles as results.cc labels them.
var percentiles = []string{"50.00", "90.00", "95.00", "97.00", "99.00", "99.90"}

// Results is PerformanceSummary::LogDetail, which a performance run writes
// last: validity, early stopping, the scenario's figures, the sample
// latencies, the token figures, and num_errors.
func Results(scenario string, tokens, invalid bool) []string {
	keys := []string{"result_validity"}
	if scenario == "Server" { // HasPerfConstraints
		keys = append(keys, "result_perf_constraints_met")
	}
	keys = append(keys, "result_min_duration_met", "result_min_queries_met", "early_stopping_met")
	if invalid {
		keys = append(keys, "result_invalid_reason")
	}
	if tokens {
		keys = append(keys, "early_stopping_ttft_result", "early_stopping_tpot_result")
	} else {
		keys = append(keys, "early_stopping_result")
	}
	keys = append(keys, "result_query_count")
	switch scenario {
	case "SingleStream":
		keys = append(keys, "result_qps_with_loadgen_overhead", "result_qps_without_loadgen_overhead",
			"early_stopping_latency_ss", "early_stopping_latency_ms")
	case "MultiStream":
		keys = append(keys, "result_min_query_latency_ns", "result_max_query_latency_ns", "result_mean_query_latency_ns")
		for _, p := range percentiles {
			keys = append(keys, "result_"+p+"_percentile_per_query_latency_ns")
		}
		keys = append(keys, "early_stopping_latency_ms")
	case "Server":
		keys = append(keys, "result_overlatency_query_count", "result_scheduled_samples_per_sec", "result_completed_samples_per_sec")
	case "Offline":
		keys = append(keys, "result_samples_per_second")
	}
	keys = append(keys, "result_min_latency_ns", "result_max_latency_ns", "result_mean_latency_ns")
	for _, p := range percentiles {
		keys = append(keys, "result_"+p+"_percentile_latency_ns")
	}
	if tokens {
		keys = append(keys, tokenResults(scenario)...)
	}
	return append(keys, "num_errors")
}

// tokenResults are LogDetail's token keys: Offline's token rate, or the
// first-token table, the token throughputs, the TPOT table and the
// completed token rate of every other scenario.
func tokenResults(scenario string) []string {
	if scenario == "Offline" {
		return []string{"result_tokens_per_second"}
	}
	keys := []string{"result_first_token_min_latency_ns", "result_first_token_max_latency_ns", "result_first_token_mean_latency_ns"}
	for _, p := range percentiles {
		keys = append(keys, "result_first_token_"+p+"_percentile_latency_ns")
	}
	keys = append(keys, "result_token_throughput_with_loadgen_overhead", "result_token_throughput")
	for _, p := range percentiles {
		keys = append(keys, "result_time_per_output_token_"+p+"_percentile_ns")
	}
	return append(keys, "result_time_to_output_token_min", "result_time_to_output_token_max",
		"result_time_to_output_token_mean", "result_completed_tokens_per_second")
}
