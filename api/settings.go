package api

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// DefaultRuleset applies when a spec names none, as `loadgend run` does.
const DefaultRuleset = loadgen.RulesetLoadGen6

// Settings builds the engine's settings the way `loadgend run` does for the
// same flags: NewSettings(ruleset, scenario, preset), then mlperf_conf and
// user_conf, then each override that is set, then Validate. Errors are
// *FieldError naming the spec's field (the convenience the user wrote when
// one set the failing LoadGen setting). It checks no Limits: DecodeRunSpec
// does.
func (s RunSpec) Settings() (loadgen.Settings, error) {
	ls, _, err := s.build()
	return ls, err
}

// build also returns, for each LoadGen setting an override wrote, the spec
// field that wrote it, so later checks can name what the user typed.
func (s RunSpec) build() (loadgen.Settings, map[string]string, error) {
	src := map[string]string{}
	sc, err := trace.ParseScenario(s.Scenario)
	if err != nil {
		return loadgen.Settings{}, src, fieldErr("scenario", "%q is not SingleStream, MultiStream, Server or Offline", s.Scenario)
	}
	rs := loadgen.Ruleset(s.Ruleset)
	if rs == "" {
		rs = DefaultRuleset
	}
	if rs != loadgen.RulesetV05 && rs != loadgen.RulesetLoadGen6 {
		return loadgen.Settings{}, src, fieldErr("ruleset", "%q is not v0.5 or loadgen6", s.Ruleset)
	}
	ls, err := loadgen.NewSettings(rs, sc, s.Preset)
	if err != nil {
		return ls, src, fieldErr("preset", "%s", trimSettingsErr(err))
	}
	for _, c := range []struct {
		field, text string
		kind        loadgen.ConfigKind
	}{{"mlperf_conf", s.MLPerfConf, loadgen.MLPerfConf}, {"user_conf", s.UserConf, loadgen.UserConf}} {
		if c.text == "" {
			continue
		}
		cfg, err := loadgen.ParseConfig(c.field, strings.NewReader(c.text))
		if err != nil {
			return ls, src, fieldErr(c.field, "%v", err)
		}
		if err := ls.ApplyConfig(cfg, c.kind, s.Model); err != nil {
			return ls, src, fieldErr(c.field, "%v", err)
		}
	}
	if err := s.Overrides.apply(&ls, src); err != nil {
		return ls, src, err
	}
	if err := ls.Validate(); err != nil {
		return ls, src, settingsFieldErr(err, src)
	}
	return ls, src, nil
}

// ambiguous pairs a convenience with a LoadGen name that writes the same
// setting.
func (o RunSettings) ambiguous() error {
	pairs := []struct {
		conv, exact string
		a, b        bool
	}{
		{"target_qps", "server_target_qps", o.TargetQPS != nil, o.ServerTargetQPS != nil},
		{"target_qps", "offline_expected_qps", o.TargetQPS != nil, o.OfflineExpectedQPS != nil},
		{"target_latency_ms", "server_target_latency_ns", o.TargetLatencyMs != nil, o.ServerTargetLatencyNs != nil},
		{"latency_percentile", "server_target_latency_percentile", o.LatencyPercentile != nil, o.ServerTargetLatencyPercentile != nil},
		{"latency_percentile", "single_stream_target_latency_percentile", o.LatencyPercentile != nil, o.SingleStreamTargetLatencyPercentile != nil},
		{"latency_percentile", "multi_stream_target_latency_percentile", o.LatencyPercentile != nil, o.MultiStreamTargetLatencyPercentile != nil},
		{"expected_latency_ns", "single_stream_expected_latency_ns", o.ExpectedLatencyNs != nil, o.SingleStreamExpectedLatencyNs != nil},
		{"expected_latency_ns", "multi_stream_expected_latency_ns", o.ExpectedLatencyNs != nil, o.MultiStreamExpectedLatencyNs != nil},
		{"samples_per_query", "multi_stream_samples_per_query", o.SamplesPerQuery != nil, o.MultiStreamSamplesPerQuery != nil},
		{"interval_ms", "multi_stream_target_qps", o.IntervalMs != nil, o.MultiStreamTargetQPS != nil},
	}
	for _, p := range pairs {
		if p.a && p.b {
			return fieldErr("settings."+p.exact, "sets the same setting as settings.%s; give one of them", p.conv)
		}
	}
	return nil
}

// apply writes the overrides that are set, in `loadgend run`'s order.
func (o RunSettings) apply(ls *loadgen.Settings, src map[string]string) error {
	if err := o.ambiguous(); err != nil {
		return err
	}
	wrote := func(field string, names ...string) {
		for _, n := range names {
			src[n] = "settings." + field
		}
	}
	pos := func(field string, v *float64, dst ...*float64) error {
		if v == nil {
			return nil
		}
		if !positive(*v) {
			return fieldErr("settings."+field, "must be a positive number, got %v", *v)
		}
		for _, d := range dst {
			*d = *v
		}
		return nil
	}
	frac := func(field string, v *float64, dst *float64) error {
		if v == nil {
			return nil
		}
		if !(*v > 0 && *v < 1) {
			return fieldErr("settings."+field, "must be a fraction in (0, 1), got %v", *v)
		}
		*dst = *v
		return nil
	}
	u64 := func(field string, v *uint64, dst *uint64) {
		if v != nil {
			*dst = *v
			wrote(field, field)
		}
	}
	flag := func(field string, v *bool, dst *bool) {
		if v != nil {
			*dst = *v
			wrote(field, field)
		}
	}

	if err := pos("target_qps", o.TargetQPS, &ls.ServerTargetQPS, &ls.OfflineExpectedQPS); err != nil {
		return err
	} else if o.TargetQPS != nil {
		wrote("target_qps", "server_target_qps", "offline_expected_qps")
	}
	if err := pos("server_target_qps", o.ServerTargetQPS, &ls.ServerTargetQPS); err != nil {
		return err
	} else if o.ServerTargetQPS != nil {
		wrote("server_target_qps", "server_target_qps")
	}
	if err := pos("offline_expected_qps", o.OfflineExpectedQPS, &ls.OfflineExpectedQPS); err != nil {
		return err
	} else if o.OfflineExpectedQPS != nil {
		wrote("offline_expected_qps", "offline_expected_qps")
	}
	if err := pos("expected_latency_ns", o.ExpectedLatencyNs, &ls.SingleStreamExpectedLatencyNs, &ls.MultiStreamExpectedLatencyNs); err != nil {
		return err
	} else if o.ExpectedLatencyNs != nil {
		wrote("expected_latency_ns", "single_stream_expected_latency_ns", "multi_stream_expected_latency_ns")
	}
	for _, e := range []struct {
		field string
		v     *float64
		dst   *float64
	}{
		{"single_stream_expected_latency_ns", o.SingleStreamExpectedLatencyNs, &ls.SingleStreamExpectedLatencyNs},
		{"multi_stream_expected_latency_ns", o.MultiStreamExpectedLatencyNs, &ls.MultiStreamExpectedLatencyNs},
	} {
		if err := pos(e.field, e.v, e.dst); err != nil {
			return err
		} else if e.v != nil {
			wrote(e.field, e.field)
		}
	}
	for _, c := range []struct {
		field string
		v     *uint64
	}{{"samples_per_query", o.SamplesPerQuery}, {"multi_stream_samples_per_query", o.MultiStreamSamplesPerQuery}} {
		if c.v == nil {
			continue
		}
		if *c.v == 0 {
			return fieldErr("settings."+c.field, "must be at least 1")
		}
		ls.MultiStreamSamplesPerQuery = *c.v
		wrote(c.field, "multi_stream_samples_per_query")
	}
	u64("min_duration_ms", o.MinDurationMs, &ls.MinDurationMs)
	u64("max_duration_ms", o.MaxDurationMs, &ls.MaxDurationMs)
	u64("min_query_count", o.MinQueryCount, &ls.MinQueryCount)
	u64("max_query_count", o.MaxQueryCount, &ls.MaxQueryCount)
	u64("qsl_rng_seed", o.QSLRNGSeed, &ls.QSLRNGSeed)
	u64("sample_index_rng_seed", o.SampleIndexRNGSeed, &ls.SampleIndexRNGSeed)
	u64("schedule_rng_seed", o.ScheduleRNGSeed, &ls.ScheduleRNGSeed)
	flag("sample_concatenate_permutation", o.SampleConcatenatePermutation, &ls.SampleConcatenatePermutation)
	flag("performance_issue_unique", o.PerformanceIssueUnique, &ls.PerformanceIssueUnique)
	flag("performance_issue_same", o.PerformanceIssueSame, &ls.PerformanceIssueSame)
	u64("performance_issue_same_index", o.PerformanceIssueSameIndex, &ls.PerformanceIssueSameIndex)
	u64("performance_sample_count_override", o.PerformanceSampleCountOverride, &ls.PerformanceSampleCountOverride)
	u64("server_max_async_queries", o.ServerMaxAsyncQueries, &ls.ServerMaxAsyncQueries)

	if o.TargetLatencyMs != nil {
		ms := *o.TargetLatencyMs
		if !positive(ms) {
			return fieldErr("settings.target_latency_ms", "must be a positive number, got %v", ms)
		}
		if ms*1e6 >= math.MaxInt64 {
			return fieldErr("settings.target_latency_ms", "too large: %v ms", ms)
		}
		ls.ServerTargetLatencyNs = uint64(ms * 1e6)
		wrote("target_latency_ms", "server_target_latency_ns")
	}
	if o.ServerTargetLatencyNs != nil {
		if *o.ServerTargetLatencyNs == 0 || *o.ServerTargetLatencyNs > math.MaxInt64 {
			return fieldErr("settings.server_target_latency_ns", "must be positive and at most %d, got %d", int64(math.MaxInt64), *o.ServerTargetLatencyNs)
		}
		ls.ServerTargetLatencyNs = *o.ServerTargetLatencyNs
		wrote("server_target_latency_ns", "server_target_latency_ns")
	}
	if o.LatencyPercentile != nil {
		p := *o.LatencyPercentile
		// The CLI's rule: 99 means 0.99. Exactly 1 stays a fraction and is
		// refused; nothing in (1, 100) is a fraction.
		if p > 1 && p < 100 {
			p /= 100
		}
		if !(p > 0 && p < 1) {
			return fieldErr("settings.latency_percentile", "must be a fraction in (0, 1) or a percent in (1, 100), got %v", *o.LatencyPercentile)
		}
		ls.ServerTargetLatencyPercentile = p
		ls.SingleStreamTargetLatencyPercentile = p
		ls.MultiStreamTargetLatencyPercentile = p
		wrote("latency_percentile", "server_target_latency_percentile", "single_stream_target_latency_percentile", "multi_stream_target_latency_percentile")
	}
	for _, e := range []struct {
		field string
		v     *float64
		dst   *float64
	}{
		{"server_target_latency_percentile", o.ServerTargetLatencyPercentile, &ls.ServerTargetLatencyPercentile},
		{"single_stream_target_latency_percentile", o.SingleStreamTargetLatencyPercentile, &ls.SingleStreamTargetLatencyPercentile},
		{"multi_stream_target_latency_percentile", o.MultiStreamTargetLatencyPercentile, &ls.MultiStreamTargetLatencyPercentile},
	} {
		if err := frac(e.field, e.v, e.dst); err != nil {
			return err
		} else if e.v != nil {
			wrote(e.field, e.field)
		}
	}
	if o.IntervalMs != nil {
		if !positive(*o.IntervalMs) {
			return fieldErr("settings.interval_ms", "must be a positive number, got %v", *o.IntervalMs)
		}
		ls.MultiStreamTargetQPS = 1000 / *o.IntervalMs
		wrote("interval_ms", "multi_stream_target_qps")
	}
	if err := pos("multi_stream_target_qps", o.MultiStreamTargetQPS, &ls.MultiStreamTargetQPS); err != nil {
		return err
	} else if o.MultiStreamTargetQPS != nil {
		wrote("multi_stream_target_qps", "multi_stream_target_qps")
	}
	if o.DrainTimeoutMs != nil {
		ls.Engine.DrainTimeoutMs = *o.DrainTimeoutMs
		wrote("drain_timeout_ms", "engine.drain_timeout_ms")
	}
	if o.EarlyVerdict != nil {
		ls.Engine.EarlyVerdict = *o.EarlyVerdict
		wrote("early_verdict", "engine.early_verdict")
	}
	return nil
}

func positive(v float64) bool { return v > 0 && !math.IsInf(v, 0) }

// settingsFieldErr turns a loadgen settings error ("invalid test settings:
// server_target_qps: must be ...") into a FieldError on the spec field that
// wrote the setting, or on settings.<name> when a preset or conf did.
func settingsFieldErr(err error, src map[string]string) error {
	msg := trimSettingsErr(err)
	name, rest, ok := strings.Cut(msg, ": ")
	if !ok || strings.ContainsAny(name, " \"") {
		return &FieldError{Field: "settings", Message: msg}
	}
	switch name {
	case "ruleset", "scenario":
		return &FieldError{Field: name, Message: rest}
	}
	if f, ok := src[name]; ok {
		return &FieldError{Field: f, Message: fmt.Sprintf("%s (as %s)", rest, name)}
	}
	return &FieldError{Field: "settings." + strings.TrimPrefix(name, "engine."), Message: rest}
}

func trimSettingsErr(err error) string {
	msg := err.Error()
	if errors.Is(err, trace.ErrInvalidSettings) {
		msg = strings.TrimPrefix(msg, trace.ErrInvalidSettings.Error()+": ")
	}
	return msg
}
