package loadgen

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// ErrInvalidConfig is wrapped by every mlperf.conf / user.conf error; the
// message names the file and line.
var ErrInvalidConfig = errors.New("invalid config")

// ConfigKind is LoadGen's conf_type: which file a Config is, which decides
// the keys it may set under loadgen6 (LOADGEN-REFERENCE §1.3).
type ConfigKind int

const (
	// MLPerfConf is mlperf.conf (conf_type 0): the only file whose seeds,
	// accuracy_log_probability and test05 keys LoadGen 6.0 reads.
	MLPerfConf ConfigKind = iota
	// UserConf is user.conf (conf_type 1), applied after mlperf.conf.
	UserConf
	// AuditConf is a compliance audit.config (conf_type 2), applied last with
	// model "*".
	AuditConf
)

// Config is one parsed LoadGen config file: `model.scenario.key = value`
// lines, where model and scenario may be `*`.
type Config struct {
	Name    string
	entries map[string]configEntry
}

type configEntry struct {
	value string
	line  int
}

// configKeys are the key names LoadGen 6.0 or v0.5 read, plus
// target_duration, which mlperf.conf sets and nothing reads.
var configKeys = map[string]bool{
	"mode": true, "min_duration": true, "max_duration": true, "min_query_count": true, "max_query_count": true,
	"qsl_rng_seed": true, "sample_index_rng_seed": true, "schedule_rng_seed": true,
	"accuracy_log_rng_seed": true, "accuracy_log_probability": true, "accuracy_log_sampling_target": true,
	"print_timestamps": true, "performance_issue_unique": true, "performance_issue_same": true,
	"performance_issue_same_index": true, "performance_sample_count_override": true,
	"accuracy_sample_count_override": true, "target_latency_percentile": true, "target_latency": true,
	"target_qps": true, "samples_per_query": true, "max_async_queries": true, "coalesce_queries": true,
	"sample_concatenate_permutation": true, "use_token_latencies": true, "ttft_latency": true,
	"tpot_latency": true, "infer_token_latencies": true, "token_latency_scaling_factor": true,
	"test05": true, "test05_qsl_rng_seed": true, "test05_sample_index_rng_seed": true,
	"test05_schedule_rng_seed": true, "target_duration": true,
}

var configScenarios = map[string]bool{"*": true, "SingleStream": true, "MultiStream": true, "Server": true, "Offline": true}

// ParseConfig reads a config in LoadGen's syntax: per line, whitespace
// separated tokens `key = value`; a token that is exactly `#` starts a
// comment (so `#text` is an error, as in LoadGen); the value must be an
// integer (decimal, 0x hex, 0 octal) or a floating-point number. A key
// repeated in one file takes its last value, as LoadGen's map does.
//
// Stricter than LoadGen, which ignores them: unknown key names, unknown
// scenarios, lines with a key but no value, and tokens after the value
// (LoadGen would take the last token as the value) are errors naming the line.
func ParseConfig(name string, r io.Reader) (*Config, error) {
	c := &Config{Name: name, entries: map[string]configEntry{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || fields[0] == "#" {
			continue
		}
		bad := func(format string, args ...any) error {
			return fmt.Errorf("%w: %s:%d: "+format, append([]any{ErrInvalidConfig, name, line}, args...)...)
		}
		if len(fields) < 2 || fields[1] != "=" {
			return nil, bad("expected 'key = value' (spaces around '=', comments start with '# '), got %q", sc.Text())
		}
		if len(fields) < 3 {
			return nil, bad("key %q has no value", fields[0])
		}
		if len(fields) > 3 && fields[3] != "#" {
			return nil, bad("unexpected %q after the value of %q", fields[3], fields[0])
		}
		key, value := fields[0], fields[2]
		parts := strings.Split(key, ".")
		if len(parts) < 3 || parts[0] == "" {
			return nil, bad("key %q is not model.scenario.name", key)
		}
		scenario, kname := parts[len(parts)-2], parts[len(parts)-1]
		if !configScenarios[scenario] {
			return nil, bad("key %q: unknown scenario %q (want SingleStream, MultiStream, Server, Offline or *)", key, scenario)
		}
		if !configKeys[kname] {
			return nil, bad("key %q: unknown setting %q", key, kname)
		}
		if !isConfigNumber(value) {
			return nil, bad("value of %q needs to be an integer or a double, got %q", key, value)
		}
		c.entries[key] = configEntry{value: value, line: line}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidConfig, name, err)
	}
	return c, nil
}

// isConfigNumber is LoadGen's check: the whole token parses as strtoul(…, 0)
// or as strtod.
func isConfigNumber(v string) bool {
	if _, n, _ := parseCUint(v); n == len(v) {
		return true
	}
	if strings.ContainsRune(v, '_') {
		return false
	}
	_, err := strconv.ParseFloat(v, 64)
	return err == nil || errors.Is(err, strconv.ErrRange)
}

// parseCUint parses the longest prefix of v that strtoull(v, nullptr, 0)
// would read (optional '+', then 0x hex, 0 octal or decimal digits) and
// returns its value, the bytes consumed and whether it overflowed.
func parseCUint(v string) (val uint64, n int, overflow bool) {
	i := 0
	if i < len(v) && v[i] == '+' {
		i++
	}
	base := uint64(10)
	if i+1 < len(v) && v[i] == '0' && (v[i+1] == 'x' || v[i+1] == 'X') && i+2 < len(v) && hexDigit(v[i+2]) >= 0 {
		base, i = 16, i+2
	} else if i < len(v) && v[i] == '0' {
		base = 8
	}
	start := i
	for ; i < len(v); i++ {
		d := hexDigit(v[i])
		if d < 0 || uint64(d) >= base {
			break
		}
		hi, lo := bits.Mul64(val, base)
		lo2, carry := bits.Add64(lo, uint64(d), 0)
		if hi != 0 || carry != 0 {
			overflow = true
		}
		val = lo2
	}
	if i == start {
		return 0, 0, false
	}
	return val, i, overflow
}

func hexDigit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// configLookup resolves keys for one model and file in LoadGen's order.
type configLookup struct {
	c     *Config
	model string
	err   error
}

// find returns the value of key for scenario, trying model.scenario.key,
// *.scenario.key, model.*.key, *.*.key in that order (lookupkv): the most
// specific key wins, whatever the order of the lines.
func (l *configLookup) find(scenario, key string) (configEntry, bool) {
	for _, k := range [...]string{
		l.model + "." + scenario + "." + key,
		"*." + scenario + "." + key,
		l.model + ".*." + key,
		"*.*." + key,
	} {
		if e, ok := l.c.entries[k]; ok {
			return e, true
		}
	}
	return configEntry{}, false
}

func (l *configLookup) fail(e configEntry, key, format string, args ...any) {
	if l.err == nil {
		l.err = fmt.Errorf("%w: %s:%d: %s: "+format, append([]any{ErrInvalidConfig, l.c.Name, e.line, key}, args...)...)
	}
}

// uint reads an integer key (strtoull × integer multiplier). Unlike LoadGen,
// a value that is not wholly an integer ("6e5", which strtoull reads as 6) or
// is negative is an error rather than a silent surprise.
func (l *configLookup) uint(scenario, key string, mult uint64, dst *uint64) bool {
	e, ok := l.find(scenario, key)
	if !ok {
		return false
	}
	v, n, overflow := parseCUint(e.value)
	if n != len(e.value) {
		l.fail(e, key, "needs an integer, got %q", e.value)
		return false
	}
	hi, lo := bits.Mul64(v, mult)
	if overflow || hi != 0 {
		l.fail(e, key, "value %q is out of range", e.value)
		return false
	}
	*dst = lo
	return true
}

// float reads a double key (strtod × multiplier).
func (l *configLookup) float(scenario, key string, mult float64, dst *float64) bool {
	e, ok := l.find(scenario, key)
	if !ok {
		return false
	}
	v, err := strconv.ParseFloat(e.value, 64)
	if err != nil {
		if u, n, of := parseCUint(e.value); n == len(e.value) && !of {
			v, err = float64(u), nil // octal/hex integers strtod would also read
		}
	}
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		l.fail(e, key, "needs a finite number, got %q", e.value)
		return false
	}
	*dst = v * mult
	return true
}

// flag reads a boolean key. LoadGen tests most with != 0, a few with == 1.
func (l *configLookup) flag(scenario, key string, onlyOne bool, dst *bool) bool {
	var v uint64
	if !l.uint(scenario, key, 1, &v) {
		return false
	}
	if onlyOne {
		*dst = v == 1
	} else {
		*dst = v != 0
	}
	return true
}

// ApplyConfig applies a parsed config for the given model (use "*" for
// audit.config) to the settings, for their Scenario and Ruleset, exactly as
// LoadGen's FromConfig reads keys: general keys under the run's scenario,
// scenario-specific keys under their fixed scenario name, each only if
// found. Apply mlperf.conf first, then user.conf (whose values then win
// for the keys it sets), then audit.config.
//
// Under loadgen6 only an MLPerfConf sets the seeds, accuracy_log_probability
// and test05 keys; elsewhere LoadGen ignores them, and so does ApplyConfig.
// Under v0.5 every file sets every key v0.5 read (the user passed mlperf.conf
// itself), and the v0.5 units apply: SingleStream.target_latency is integer
// ms, MultiStream.target_qps and max_async_queries set the tick rate.
func (s *Settings) ApplyConfig(c *Config, kind ConfigKind, model string) error {
	if c == nil {
		return fmt.Errorf("%w: nil config", ErrInvalidConfig)
	}
	l := &configLookup{c: c, model: model}
	sc := s.Scenario.String()
	var v uint64

	if l.uint(sc, "mode", 1, &v) {
		if v > uint64(trace.FindPeakPerformance) {
			e, _ := l.find(sc, "mode")
			l.fail(e, "mode", "must be 0-3, got %d", v)
		} else {
			s.Mode = trace.Mode(v)
		}
	}
	if s.Ruleset == RulesetV05 {
		s.applyV05(l, sc)
		return l.err
	}

	if kind == MLPerfConf {
		l.uint(sc, "qsl_rng_seed", 1, &s.QSLRNGSeed)
		l.uint(sc, "sample_index_rng_seed", 1, &s.SampleIndexRNGSeed)
		l.uint(sc, "schedule_rng_seed", 1, &s.ScheduleRNGSeed)
		l.float(sc, "accuracy_log_probability", 0.01, &s.AccuracyLogProbability)
		l.flag(sc, "test05", true, &s.Test05)
		l.uint(sc, "test05_qsl_rng_seed", 1, &s.Test05QSLRNGSeed)
		l.uint(sc, "test05_sample_index_rng_seed", 1, &s.Test05SampleIndexRNGSeed)
		l.uint(sc, "test05_schedule_rng_seed", 1, &s.Test05ScheduleRNGSeed)
	}
	l.flag(sc, "use_token_latencies", true, &s.UseTokenLatencies)
	if s.UseTokenLatencies {
		l.uint("Server", "ttft_latency", 1_000_000, &s.ServerTTFTLatencyNs)
		l.uint("Server", "tpot_latency", 1_000_000, &s.ServerTPOTLatencyNs)
	}
	l.flag(sc, "infer_token_latencies", true, &s.InferTokenLatencies)
	if s.InferTokenLatencies {
		l.uint(sc, "token_latency_scaling_factor", 1, &s.TokenLatencyScalingFactor)
	}
	l.float("SingleStream", "target_latency_percentile", 0.01, &s.SingleStreamTargetLatencyPercentile)
	l.float("MultiStream", "target_latency_percentile", 0.01, &s.MultiStreamTargetLatencyPercentile)
	l.uint("MultiStream", "samples_per_query", 1, &s.MultiStreamSamplesPerQuery)
	l.float("Server", "target_latency_percentile", 0.01, &s.ServerTargetLatencyPercentile)
	l.uint("Server", "target_latency", 1_000_000, &s.ServerTargetLatencyNs)
	l.flag(sc, "performance_issue_unique", false, &s.PerformanceIssueUnique)
	l.flag(sc, "performance_issue_same", false, &s.PerformanceIssueSame)
	l.uint(sc, "performance_issue_same_index", 1, &s.PerformanceIssueSameIndex)
	l.flag(sc, "sample_concatenate_permutation", true, &s.SampleConcatenatePermutation)
	l.flag("Server", "coalesce_queries", false, &s.ServerCoalesceQueries)
	l.uint("Server", "max_async_queries", 1, &s.ServerMaxAsyncQueries)
	l.uint(sc, "min_duration", 1, &s.MinDurationMs)
	l.uint(sc, "max_duration", 1, &s.MaxDurationMs)
	l.uint(sc, "min_query_count", 1, &s.MinQueryCount)
	l.uint(sc, "max_query_count", 1, &s.MaxQueryCount)
	l.uint(sc, "performance_sample_count_override", 1, &s.PerformanceSampleCountOverride)
	l.uint(sc, "accuracy_sample_count_override", 1, &s.AccuracySampleCountOverride)
	l.float("SingleStream", "target_latency", 1e6, &s.SingleStreamExpectedLatencyNs)
	l.float("MultiStream", "target_latency", 1e6, &s.MultiStreamExpectedLatencyNs)
	l.float("Server", "target_qps", 1, &s.ServerTargetQPS)
	l.float("Offline", "target_qps", 1, &s.OfflineExpectedQPS)
	l.flag(sc, "print_timestamps", false, &s.PrintTimestamps)
	l.uint(sc, "accuracy_log_rng_seed", 1, &s.AccuracyLogRNGSeed)
	l.uint(sc, "accuracy_log_sampling_target", 1, &s.AccuracyLogSamplingTarget)
	return l.err
}

// applyV05 reads the keys of v0.5's FromConfig (commit 3921e5ac).
func (s *Settings) applyV05(l *configLookup, sc string) {
	l.uint(sc, "min_duration", 1, &s.MinDurationMs)
	l.uint(sc, "max_duration", 1, &s.MaxDurationMs)
	l.uint(sc, "min_query_count", 1, &s.MinQueryCount)
	l.uint(sc, "max_query_count", 1, &s.MaxQueryCount)
	l.uint(sc, "qsl_rng_seed", 1, &s.QSLRNGSeed)
	l.uint(sc, "sample_index_rng_seed", 1, &s.SampleIndexRNGSeed)
	l.uint(sc, "schedule_rng_seed", 1, &s.ScheduleRNGSeed)
	l.uint(sc, "accuracy_log_rng_seed", 1, &s.AccuracyLogRNGSeed)
	l.float(sc, "accuracy_log_probability", 0.01, &s.AccuracyLogProbability)
	l.flag(sc, "print_timestamps", false, &s.PrintTimestamps)
	l.flag(sc, "performance_issue_unique", false, &s.PerformanceIssueUnique)
	l.flag(sc, "performance_issue_same", false, &s.PerformanceIssueSame)
	l.uint(sc, "performance_issue_same_index", 1, &s.PerformanceIssueSameIndex)
	l.uint(sc, "performance_sample_count_override", 1, &s.PerformanceSampleCountOverride)

	l.float("SingleStream", "target_latency_percentile", 0.01, &s.SingleStreamTargetLatencyPercentile)
	var ns uint64
	if l.uint("SingleStream", "target_latency", 1_000_000, &ns) {
		s.SingleStreamExpectedLatencyNs = float64(ns)
	}
	l.float("MultiStream", "target_latency_percentile", 0.01, &s.MultiStreamTargetLatencyPercentile)
	l.float("MultiStream", "target_qps", 1, &s.MultiStreamTargetQPS)
	l.uint("MultiStream", "samples_per_query", 1, &s.MultiStreamSamplesPerQuery)
	l.uint("MultiStream", "max_async_queries", 1, &s.MultiStreamMaxAsyncQueries)

	l.float("Server", "target_latency_percentile", 0.01, &s.ServerTargetLatencyPercentile)
	l.uint("Server", "target_latency", 1_000_000, &s.ServerTargetLatencyNs)
	l.float("Server", "target_qps", 1, &s.ServerTargetQPS)
	l.flag("Server", "coalesce_queries", false, &s.ServerCoalesceQueries)
	l.uint("Server", "max_async_queries", 1, &s.ServerMaxAsyncQueries)
	l.float("Offline", "target_qps", 1, &s.OfflineExpectedQPS)
}
