package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"

	"github.com/netloadgen/netloadgen/internal/suggest"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// scheduleCommand prints the trace LoadGen 6.0.17 would generate for the
// given TestSettings, in the reference-vector format (pkg/trace.Write).
// Flags carry LoadGen's defaults; exit status 2 names a bad flag.
func scheduleCommand(args []string, stdout, stderr io.Writer) int {
	req, qsl, printed, err := parseScheduleFlags(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(stdout, "usage: loadgend schedule [flags]")
		fs, _ := scheduleFlagSet()
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "loadgend schedule: %v\n", err)
		return 2
	}
	tr, err := trace.New(req, qsl)
	if errors.Is(err, trace.ErrInvalidSettings) {
		fmt.Fprintf(stderr, "loadgend schedule: %v\n", err)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "loadgend schedule: %v\n", err)
		return 1
	}
	if err := trace.WriteSamples(stdout, tr, printed); err != nil {
		fmt.Fprintf(stderr, "loadgend schedule: writing the trace: %v\n", err)
		return 1
	}
	return 0
}

// scheduleFlags holds the parsed flag values before they become settings.
type scheduleFlags struct {
	scenario                   string
	targetQPS, expectedLatency float64
	spq                        uint64
	minDurationMs, maxDuration uint64
	minQueries, maxQueries     uint64
	total, perf, perfOverride  uint64
	qslSeed, sampleSeed        uint64
	scheduleSeed               uint64
	concat, unique, same       bool
	sameIndex                  uint64
	printed                    int
}

func scheduleFlagSet() (*flag.FlagSet, *scheduleFlags) {
	d := trace.DefaultSettings()
	v := &scheduleFlags{}
	fs := flag.NewFlagSet("schedule", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported on one line by the caller
	fs.StringVar(&v.scenario, "scenario", d.Scenario.String(), "SingleStream, MultiStream, Server or Offline")
	fs.Float64Var(&v.targetQPS, "target-qps", d.ServerTargetQPS, "server_target_qps (Server) or offline_expected_qps (Offline)")
	fs.Float64Var(&v.expectedLatency, "expected-latency-ns", 0, "single_stream_expected_latency_ns (default 1e6) or multi_stream_expected_latency_ns (default 8e6)")
	fs.Uint64Var(&v.spq, "samples-per-query", d.MultiStreamSamplesPerQuery, "multi_stream_samples_per_query (MultiStream)")
	fs.Uint64Var(&v.minDurationMs, "min-duration-ms", d.MinDurationMs, "min_duration_ms")
	fs.Uint64Var(&v.maxDuration, "max-duration-ms", d.MaxDurationMs, "max_duration_ms (0 = none; does not change the trace)")
	fs.Uint64Var(&v.minQueries, "min-query-count", d.MinQueryCount, "min_query_count")
	fs.Uint64Var(&v.maxQueries, "max-query-count", d.MaxQueryCount, "max_query_count (0 = none; does not change the trace)")
	fs.Uint64Var(&v.total, "total-samples", 1024, "QSL TotalSampleCount")
	fs.Uint64Var(&v.perf, "performance-samples", 1024, "QSL PerformanceSampleCount")
	fs.Uint64Var(&v.perfOverride, "performance-sample-count-override", 0, "performance_sample_count_override (0 = the QSL's)")
	fs.Uint64Var(&v.qslSeed, "qsl-seed", 0, "qsl_rng_seed")
	fs.Uint64Var(&v.sampleSeed, "sample-seed", 0, "sample_index_rng_seed")
	fs.Uint64Var(&v.scheduleSeed, "schedule-seed", 0, "schedule_rng_seed")
	fs.BoolVar(&v.concat, "concat-perm", false, "sample_concatenate_permutation (equal issue)")
	fs.BoolVar(&v.unique, "issue-unique", false, "performance_issue_unique")
	fs.BoolVar(&v.same, "issue-same", false, "performance_issue_same")
	fs.Uint64Var(&v.sameIndex, "issue-same-index", 0, "performance_issue_same_index (into the loaded set)")
	fs.IntVar(&v.printed, "max-printed-samples", trace.PrintedSamplesPerQuery, "QSL indices printed per query (0 = all; the reference vectors print 16)")
	return fs, v
}

// parseScheduleFlags returns the trace's settings and QSL, and how many
// indices a query line prints.
func parseScheduleFlags(args []string) (trace.Requested, trace.QSL, int, error) {
	fs, v := scheduleFlagSet()
	if err := fs.Parse(args); err != nil {
		return trace.Requested{}, trace.QSL{}, 0, suggest.FlagError(fs, err)
	}
	if fs.NArg() > 0 {
		return trace.Requested{}, trace.QSL{}, 0, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if v.printed < 0 {
		return trace.Requested{}, trace.QSL{}, 0, fmt.Errorf("-max-printed-samples must be 0 (all) or more, got %d", v.printed)
	}
	req, qsl, err := scheduleSettings(fs, v)
	return req, qsl, v.printed, err
}

// scheduleSettings turns the parsed flags into the trace's settings.
func scheduleSettings(fs *flag.FlagSet, v *scheduleFlags) (trace.Requested, trace.QSL, error) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	req := trace.DefaultSettings()
	sc, err := trace.ParseScenario(v.scenario)
	if err != nil {
		return req, trace.QSL{}, fmt.Errorf("-scenario: %q is not SingleStream, MultiStream, Server or Offline", v.scenario)
	}
	req.Scenario = sc
	positive := func(x float64) bool { return x > 0 && !math.IsInf(x, 0) }
	if !positive(v.targetQPS) {
		return req, trace.QSL{}, fmt.Errorf("-target-qps must be a positive finite number, got %v", v.targetQPS)
	}
	req.ServerTargetQPS, req.OfflineExpectedQPS = v.targetQPS, v.targetQPS
	if set["expected-latency-ns"] {
		if !positive(v.expectedLatency) {
			return req, trace.QSL{}, fmt.Errorf("-expected-latency-ns must be a positive finite number, got %v", v.expectedLatency)
		}
		req.SingleStreamExpectedLatencyNs, req.MultiStreamExpectedLatencyNs = v.expectedLatency, v.expectedLatency
	}
	if v.spq == 0 {
		return req, trace.QSL{}, errors.New("-samples-per-query must be at least 1")
	}
	if v.total == 0 {
		return req, trace.QSL{}, errors.New("-total-samples must be at least 1")
	}
	if v.perf == 0 {
		return req, trace.QSL{}, errors.New("-performance-samples must be at least 1")
	}
	if v.unique && v.same {
		return req, trace.QSL{}, errors.New("-issue-unique and -issue-same cannot both be set")
	}
	req.MultiStreamSamplesPerQuery = v.spq
	req.MinDurationMs, req.MaxDurationMs = v.minDurationMs, v.maxDuration
	req.MinQueryCount, req.MaxQueryCount = v.minQueries, v.maxQueries
	req.PerformanceSampleCountOverride = v.perfOverride
	req.QSLRNGSeed, req.SampleIndexRNGSeed, req.ScheduleRNGSeed = v.qslSeed, v.sampleSeed, v.scheduleSeed
	req.SampleConcatenatePermutation = v.concat
	req.PerformanceIssueUnique, req.PerformanceIssueSame = v.unique, v.same
	req.PerformanceIssueSameIndex = v.sameIndex
	qsl := trace.QSL{TotalSampleCount: v.total, PerformanceSampleCount: v.perf}
	loaded := min(v.total, v.perf)
	if v.perfOverride != 0 {
		loaded = min(v.total, v.perfOverride)
	}
	if v.same && v.sameIndex >= loaded {
		return req, qsl, fmt.Errorf("-issue-same-index %d must be below the loaded sample count %d", v.sameIndex, loaded)
	}
	return req, qsl, nil
}
