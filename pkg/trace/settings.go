package trace

import (
	"errors"
	"fmt"
	"math"
)

// ErrInvalidSettings is wrapped by every error about settings LoadGen would
// reject, or accept only to crash or misbehave on: this package's and
// pkg/loadgen's (whose messages name the setting by its LoadGen name). Both
// are LoadGen's TestSettings, so the text names them so: it is the one most
// settings errors, pkg/loadgen's, have always begun with.
var ErrInvalidSettings = errors.New("invalid test settings")

// Requested are the LoadGen TestSettings that decide the trace, as requested
// (test_settings.h), under their LoadGen names: the subset of a run's
// settings this package reads, from which EffectiveSettings derives the
// Effective ones. Fields LoadGen does not read for the chosen scenario are
// ignored, as LoadGen ignores them.
type Requested struct {
	Scenario Scenario

	SingleStreamExpectedLatencyNs float64 // single_stream_expected_latency_ns
	MultiStreamExpectedLatencyNs  float64 // multi_stream_expected_latency_ns
	MultiStreamSamplesPerQuery    uint64  // multi_stream_samples_per_query
	ServerTargetQPS               float64 // server_target_qps
	OfflineExpectedQPS            float64 // offline_expected_qps

	// Carried into Effective for the engine; they do not change the trace.
	SingleStreamTargetLatencyPercentile float64 // single_stream_target_latency_percentile
	MultiStreamTargetLatencyPercentile  float64 // multi_stream_target_latency_percentile
	ServerTargetLatencyNs               uint64  // server_target_latency_ns
	ServerTargetLatencyPercentile       float64 // server_target_latency_percentile
	ServerMaxAsyncQueries               uint64  // server_max_async_queries (0 = unbounded)

	MinDurationMs uint64 // min_duration_ms
	MaxDurationMs uint64 // max_duration_ms (0 = none); not used in generation
	MinQueryCount uint64 // min_query_count
	MaxQueryCount uint64 // max_query_count (0 = none); not used in generation

	QSLRNGSeed         uint64 // qsl_rng_seed
	SampleIndexRNGSeed uint64 // sample_index_rng_seed
	ScheduleRNGSeed    uint64 // schedule_rng_seed

	SampleConcatenatePermutation bool   // sample_concatenate_permutation ("equal issue")
	PerformanceIssueUnique       bool   // performance_issue_unique
	PerformanceIssueSame         bool   // performance_issue_same (TEST04)
	PerformanceIssueSameIndex    uint64 // performance_issue_same_index, into the loaded set

	PerformanceSampleCountOverride uint64 // performance_sample_count_override (0 = the QSL's)

	// Shape, not a LoadGen setting, replaces Server's Poisson schedule
	// (shape.go); nil: LoadGen's.
	Shape Shape
}

// DefaultSettings returns LoadGen's TestSettings defaults (test_settings.h).
func DefaultSettings() Requested {
	return Requested{
		Scenario:                            SingleStream,
		SingleStreamExpectedLatencyNs:       1_000_000,
		MultiStreamExpectedLatencyNs:        8_000_000,
		MultiStreamSamplesPerQuery:          8,
		ServerTargetQPS:                     1,
		OfflineExpectedQPS:                  1,
		SingleStreamTargetLatencyPercentile: 0.90,
		MultiStreamTargetLatencyPercentile:  0.99,
		ServerTargetLatencyNs:               100_000_000,
		ServerTargetLatencyPercentile:       0.99,
		MinDurationMs:                       10_000,
		MinQueryCount:                       100,
	}
}

// QSL is what the trace needs to know of the query sample library: its
// TotalSampleCount() and PerformanceSampleCount().
type QSL struct {
	TotalSampleCount       uint64
	PerformanceSampleCount uint64
}

// Effective holds LoadGen's effective settings (TestSettingsInternal,
// test_settings_internal.cc), the values its detail log prints as
// effective_*.
type Effective struct {
	Scenario                Scenario
	TargetQPS               float64
	TargetLatencyNs         uint64
	TargetLatencyPercentile float64
	MaxAsyncQueries         uint64 // 0 = unbounded (Server default)
	SamplesPerQuery         uint64
	TargetDurationMs        uint64 // 0 for Offline
	MinDurationMs           uint64
	MaxDurationMs           uint64
	MinQueryCount           uint64
	MaxQueryCount           uint64
	MinSampleCount          uint64
	PerformanceSampleCount  uint64

	QSLRNGSeed         uint64
	SampleIndexRNGSeed uint64
	ScheduleRNGSeed    uint64

	SampleConcatenatePermutation bool
	PerformanceIssueUnique       bool
	PerformanceIssueSame         bool
	PerformanceIssueSameIndex    uint64
}

// EffectiveSettings derives LoadGen's effective settings from the requested
// ones and the QSL's counts, line for line as TestSettingsInternal does. It
// refuses settings on which LoadGen would divide by zero, overflow a
// conversion, index out of range or log error_invalid_test_settings.
func EffectiveSettings(req Requested, qsl QSL) (Effective, error) {
	if err := validate(req, qsl); err != nil {
		return Effective{}, err
	}
	e := Effective{
		Scenario:                     req.Scenario,
		SamplesPerQuery:              1,
		TargetDurationMs:             req.MinDurationMs,
		MinDurationMs:                req.MinDurationMs,
		MaxDurationMs:                req.MaxDurationMs,
		MinQueryCount:                req.MinQueryCount,
		MaxQueryCount:                req.MaxQueryCount,
		QSLRNGSeed:                   req.QSLRNGSeed,
		SampleIndexRNGSeed:           req.SampleIndexRNGSeed,
		ScheduleRNGSeed:              req.ScheduleRNGSeed,
		SampleConcatenatePermutation: req.SampleConcatenatePermutation,
		PerformanceIssueUnique:       req.PerformanceIssueUnique,
		PerformanceIssueSame:         req.PerformanceIssueSame,
		PerformanceIssueSameIndex:    req.PerformanceIssueSameIndex,
	}
	switch req.Scenario {
	case SingleStream:
		e.TargetQPS = 1e9 / req.SingleStreamExpectedLatencyNs
		e.MaxAsyncQueries = 1
		e.TargetLatencyPercentile = req.SingleStreamTargetLatencyPercentile
	case MultiStream:
		e.TargetQPS = 1e9 / req.MultiStreamExpectedLatencyNs
		e.MaxAsyncQueries = 1
		e.TargetLatencyPercentile = req.MultiStreamTargetLatencyPercentile
		e.SamplesPerQuery = req.MultiStreamSamplesPerQuery
	case Server:
		e.TargetQPS = req.ServerTargetQPS
		e.TargetLatencyNs = req.ServerTargetLatencyNs
		e.TargetLatencyPercentile = req.ServerTargetLatencyPercentile
		e.MaxAsyncQueries = req.ServerMaxAsyncQueries
	case Offline:
		e.TargetQPS = req.OfflineExpectedQPS
		e.TargetLatencyPercentile = 0.99 // unused; LoadGen sets it to avoid garbage
		e.MaxAsyncQueries = 1
	}

	e.PerformanceSampleCount = qsl.PerformanceSampleCount
	if req.PerformanceSampleCountOverride != 0 {
		e.PerformanceSampleCount = req.PerformanceSampleCountOverride
	}

	if req.Scenario == Offline {
		// kSlack = 1.1 makes the one query last longer than min_duration at
		// the expected rate. Evaluated as LoadGen does: (1.1 * s) * qps.
		targetSampleCount := truncUint64(float64(1.1*msToSeconds(e.TargetDurationMs)) * e.TargetQPS)
		if req.PerformanceIssueUnique {
			e.SamplesPerQuery = e.PerformanceSampleCount
		} else {
			e.SamplesPerQuery = max(e.MinQueryCount, targetSampleCount)
		}
		e.MinQueryCount = 1
		e.TargetDurationMs = 0
	}

	if req.Scenario == SingleStream && req.SampleConcatenatePermutation {
		// A slack of 2 for skewed data sets (3D-UNet), then a whole number of
		// passes over the QSL-reported performance count. LoadGen adds a full
		// pass even when the count is already a multiple.
		expected := truncUint64(float64(2.0*msToSeconds(e.TargetDurationMs)) * e.TargetQPS)
		e.MinQueryCount = max(e.MinQueryCount, expected)
		e.MinQueryCount += qsl.PerformanceSampleCount - e.MinQueryCount%qsl.PerformanceSampleCount
	}

	e.MinSampleCount = e.MinQueryCount * e.SamplesPerQuery
	return e, nil
}

// truncUint64 is C++'s double to uint64_t conversion (truncation), made
// total: values past the range saturate instead of being undefined, and are
// then refused by Generate as too large.
func truncUint64(v float64) uint64 {
	switch {
	case !(v > 0):
		return 0
	case v >= 0x1p64:
		return math.MaxUint64
	}
	return uint64(v)
}

// msToSeconds is std::chrono::duration<double>(milliseconds(ms)).count():
// a division by 1000, not a multiplication by 0.001.
func msToSeconds(ms uint64) float64 {
	return float64(ms) / 1000
}

func validate(req Requested, qsl QSL) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalidSettings}, args...)...)
	}
	positive := func(v float64) bool { return v > 0 && !math.IsInf(v, 0) }
	switch req.Scenario {
	case SingleStream:
		if !positive(req.SingleStreamExpectedLatencyNs) {
			return bad("single_stream_expected_latency_ns must be a positive finite number, got %v", req.SingleStreamExpectedLatencyNs)
		}
	case MultiStream:
		if !positive(req.MultiStreamExpectedLatencyNs) {
			return bad("multi_stream_expected_latency_ns must be a positive finite number, got %v", req.MultiStreamExpectedLatencyNs)
		}
		if req.MultiStreamSamplesPerQuery == 0 {
			return bad("multi_stream_samples_per_query must be at least 1")
		}
	case Server:
		if !positive(req.ServerTargetQPS) {
			return bad("server_target_qps must be a positive finite number, got %v", req.ServerTargetQPS)
		}
	case Offline:
		if !positive(req.OfflineExpectedQPS) {
			return bad("offline_expected_qps must be a positive finite number, got %v", req.OfflineExpectedQPS)
		}
	default:
		return bad("unknown scenario %d", int(req.Scenario))
	}
	if qsl.TotalSampleCount == 0 {
		return bad("QSL total sample count must be at least 1")
	}
	if qsl.PerformanceSampleCount == 0 {
		return bad("QSL performance sample count must be at least 1")
	}
	perf := qsl.PerformanceSampleCount
	if req.PerformanceSampleCountOverride != 0 {
		perf = req.PerformanceSampleCountOverride
	}
	if req.PerformanceIssueUnique && req.PerformanceIssueSame {
		return bad("performance_issue_unique and performance_issue_same cannot both be set")
	}
	if req.PerformanceIssueSame && req.PerformanceIssueSameIndex >= min(perf, qsl.TotalSampleCount) {
		return bad("performance_issue_same_index %d must be below the loaded sample count %d",
			req.PerformanceIssueSameIndex, min(perf, qsl.TotalSampleCount))
	}
	return nil
}
