package compliance

import (
	"fmt"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// Test names a compliance test.
type Test string

// The tests.
const (
	TEST01  Test = "TEST01"
	TEST04  Test = "TEST04"
	TEST05  Test = "TEST05"
	Caching Test = "caching"
)

// Tests lists every test, for usage text.
var Tests = []Test{TEST01, TEST04, TEST05, Caching}

// ParseTest accepts a test's name (TEST01 also as test01).
func ParseTest(s string) (Test, error) {
	for _, t := range Tests {
		if string(t) == s || (t != Caching && string(t) == upper(s)) {
			return t, nil
		}
	}
	return "", fmt.Errorf("compliance: unknown test %q (want TEST01, TEST04, TEST05 or caching)", s)
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// Values of the official audit.config files (LOADGEN-REFERENCE §7).
const (
	// Test01Seed is TEST01's accuracy_log_rng_seed.
	Test01Seed = 720381539243781796
	// Test01SamplingTarget is TEST01's accuracy_log_sampling_target for
	// resnet50 and most models.
	Test01SamplingTarget = 4096
	// Test04Index is TEST04's performance_issue_same_index.
	Test04Index = 3
)

// Default thresholds.
const (
	Test04Threshold     = 0.10
	Test05Threshold     = 0.05
	Test05FastThreshold = 0.20 // when the latency is at most 0.2 ms
	CachingThreshold    = 0.10
	// DuplicateFactor is how many times smaller the caching check's
	// duplicate set is than its unique one.
	DuplicateFactor = 8
)

// AuditSettings are the settings of the test's audited run: the built-in
// overrides of the test's audit.config, then audit (if any) on top, as
// LoadGen applies an audit.config (conf_type 2, model "*").
func AuditSettings(test Test, base loadgen.Settings, audit *loadgen.Config) (loadgen.Settings, error) {
	s := base
	s.Mode = trace.PerformanceOnly
	switch test {
	case TEST01:
		s.AccuracyLogRNGSeed = Test01Seed
		s.AccuracyLogSamplingTarget = Test01SamplingTarget
	case TEST04:
		s.PerformanceIssueUnique = false
		s.PerformanceIssueSame = true
		s.PerformanceIssueSameIndex = Test04Index
	case TEST05:
		s.Test05 = true
		if s.Test05QSLRNGSeed == 0 && s.Test05SampleIndexRNGSeed == 0 && s.Test05ScheduleRNGSeed == 0 {
			// No test05 seeds from an mlperf.conf: alternate seeds of our
			// own, different from the run's in each engine.
			s.Test05QSLRNGSeed = base.QSLRNGSeed + 1
			s.Test05SampleIndexRNGSeed = base.SampleIndexRNGSeed + 1
			s.Test05ScheduleRNGSeed = base.ScheduleRNGSeed + 1
		}
	case Caching:
	default:
		return s, fmt.Errorf("compliance: unknown test %q", test)
	}
	if audit != nil {
		if err := s.ApplyConfig(audit, loadgen.AuditConf, "*"); err != nil {
			return s, fmt.Errorf("audit.config: %w", err)
		}
		if s.Mode != trace.PerformanceOnly {
			return s, fmt.Errorf("audit.config: mode %v: the audited run must be PerformanceOnly (2)", s.Mode)
		}
	}
	return s, s.Validate()
}

// cachingSettings are the caching check's pair: every one of loaded samples
// once, then as many samples drawn from a set factor times smaller.
func cachingSettings(s loadgen.Settings, loaded, factor int) (unique, dup loadgen.Settings, err error) {
	if factor < 2 {
		return s, s, fmt.Errorf("compliance: duplicate factor %d: want at least 2", factor)
	}
	spq := 1
	if s.Scenario == trace.MultiStream {
		spq = int(s.MultiStreamSamplesPerQuery)
	}
	if loaded < factor || loaded < spq*2 {
		return s, s, fmt.Errorf("compliance: caching check: %d loaded samples are too few for a duplicate set %d times smaller", loaded, factor)
	}
	unique = s
	unique.PerformanceIssueUnique, unique.PerformanceIssueSame = true, false
	unique.SampleConcatenatePermutation = false
	dup = s
	dup.PerformanceIssueUnique, dup.PerformanceIssueSame = false, false
	dup.SampleConcatenatePermutation = false
	dup.PerformanceSampleCountOverride = uint64(max(loaded/factor, spq))
	// The same number of queries as the unique run, and no more.
	queries := uint64(loaded / spq)
	if s.Scenario == trace.Offline {
		queries = uint64(loaded)
	}
	dup.MinDurationMs = 0
	dup.MinQueryCount = queries
	dup.MaxQueryCount = queries
	if s.Scenario == trace.Offline {
		dup.MaxQueryCount = 0
	}
	return unique, dup, nil
}
