package api

import (
	"errors"
	"io"
	"math"
	"strconv"
	"time"
	"unicode"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runner"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// maxNameLen bounds model names, versions and sut_name: they go into URLs
// and log lines.
const maxNameLen = 256

// DecodeRunSpec reads a run spec strictly and checks it against lim (zero
// fields take DefaultLimits): everything a run could fail on before it
// reaches the target fails here, with a *FieldError naming the field. A
// body over lim.MaxBodyBytes gives a FieldError wrapping ErrBodyTooLarge.
func DecodeRunSpec(r io.Reader, lim Limits) (RunSpec, error) {
	lim = lim.withDefaults()
	var s RunSpec
	if err := decodeStrict(r, lim.MaxBodyBytes, &s); err != nil {
		return RunSpec{}, err
	}
	if err := s.check(lim); err != nil {
		return RunSpec{}, err
	}
	return s, nil
}

// DecodeProbeRequest reads the body of POST /v1/probe strictly.
func DecodeProbeRequest(r io.Reader, lim Limits) (ProbeRequest, error) {
	lim = lim.withDefaults()
	var p ProbeRequest
	if err := decodeStrict(r, lim.MaxBodyBytes, &p); err != nil {
		return ProbeRequest{}, err
	}
	if err := checkTarget(p.Target); err != nil {
		return ProbeRequest{}, err
	}
	if err := checkName("model", p.Model, false); err != nil {
		return ProbeRequest{}, err
	}
	if err := checkName("model_version", p.ModelVersion, false); err != nil {
		return ProbeRequest{}, err
	}
	return p, nil
}

func checkTarget(target string) error {
	if target == "" {
		return fieldErr("target", "is required (http://host:port or grpc://host:port)")
	}
	if _, err := runner.ParseTarget(target); err != nil {
		msg := err.Error()
		if errors.Is(err, runner.ErrTarget) {
			msg = msg[len(runner.ErrTarget.Error())+2:]
		}
		return fieldErr("target", "%s", msg)
	}
	return nil
}

func checkName(field, v string, required bool) error {
	if v == "" {
		if required {
			return fieldErr(field, "is required")
		}
		return nil
	}
	if len(v) > maxNameLen {
		return fieldErr(field, "longer than %d bytes", maxNameLen)
	}
	for _, r := range v {
		if unicode.IsControl(r) {
			return fieldErr(field, "contains a control character")
		}
	}
	return nil
}

// check validates a decoded spec: the fields themselves, then the settings
// they build, against the limits.
func (s RunSpec) check(lim Limits) error {
	if err := checkTarget(s.Target); err != nil {
		return err
	}
	if err := checkName("model", s.Model, true); err != nil {
		return err
	}
	if err := checkName("model_version", s.ModelVersion, false); err != nil {
		return err
	}
	if s.Scenario == "" {
		return fieldErr("scenario", "is required: SingleStream, MultiStream, Server or Offline")
	}
	if err := checkName("sut_name", s.SUTName, false); err != nil {
		return err
	}
	if s.Data != "" {
		if _, err := ResolveData(lim.DataRoot, s.Data); err != nil {
			return err
		}
		if s.TotalSamples != 0 {
			return fieldErr("total_samples", "with data the files give the total")
		}
	}
	if err := s.checkKnobs(lim); err != nil {
		return err
	}
	if err := s.Overrides.checkLimits(lim); err != nil {
		return err
	}
	if s.Search != nil {
		if !lim.AllowSearch {
			return fieldErr("search", "not supported yet")
		}
		if err := s.Search.check(s.Scenario, lim); err != nil {
			return err
		}
	}
	ls, src, err := s.build()
	if err != nil {
		return err
	}
	return checkBuilt(ls, src, lim)
}

func (s RunSpec) checkKnobs(lim Limits) error {
	for _, k := range []struct {
		field string
		v     int
		max   int
	}{
		{"batch_size", s.BatchSize, lim.MaxBatch},
		{"max_inflight", s.MaxInflight, lim.MaxInflight},
		{"conns", s.Conns, lim.MaxConns},
		{"total_samples", s.TotalSamples, lim.MaxSamples},
		{"performance_samples", s.PerformanceSamples, lim.MaxSamples},
	} {
		if k.v < 0 {
			return fieldErr(k.field, "must not be negative, got %d", k.v)
		}
		if k.v > k.max {
			return fieldErr(k.field, "%d is over this daemon's limit of %d", k.v, k.max)
		}
	}
	if maxMs := uint64(lim.MaxDuration.Milliseconds()); s.RequestTimeoutMs > maxMs {
		return fieldErr("request_timeout_ms", "%d ms is over this daemon's limit of %d ms (%v)", s.RequestTimeoutMs, maxMs, lim.MaxDuration)
	}
	if maxUs := uint64(runner.MaxIssueSlack / time.Microsecond); s.IssueSlackUs > maxUs {
		return fieldErr("issue_slack_us", "%d µs is over the limit of %d µs", s.IssueSlackUs, maxUs)
	}
	return nil
}

// checkLimits bounds the overrides as given, so the error names the field
// and the value the user wrote.
func (o RunSettings) checkLimits(lim Limits) error {
	maxMs := float64(lim.MaxDuration.Milliseconds())
	maxNs := float64(lim.MaxDuration.Nanoseconds())
	type bound struct {
		field string
		v     float64
		max   float64
		unit  string
	}
	var bounds []bound
	addF := func(field string, v *float64, max float64, unit string) {
		if v != nil {
			bounds = append(bounds, bound{field, *v, max, unit})
		}
	}
	addU := func(field string, v *uint64, max float64, unit string) {
		if v != nil {
			bounds = append(bounds, bound{field, float64(*v), max, unit})
		}
	}
	addF("target_qps", o.TargetQPS, lim.MaxQPS, "QPS")
	addF("server_target_qps", o.ServerTargetQPS, lim.MaxQPS, "QPS")
	addF("offline_expected_qps", o.OfflineExpectedQPS, lim.MaxQPS, "QPS")
	addF("multi_stream_target_qps", o.MultiStreamTargetQPS, lim.MaxQPS, "QPS")
	addF("target_latency_ms", o.TargetLatencyMs, maxMs, "ms")
	addF("interval_ms", o.IntervalMs, maxMs, "ms")
	addF("expected_latency_ns", o.ExpectedLatencyNs, maxNs, "ns")
	addF("single_stream_expected_latency_ns", o.SingleStreamExpectedLatencyNs, maxNs, "ns")
	addF("multi_stream_expected_latency_ns", o.MultiStreamExpectedLatencyNs, maxNs, "ns")
	addU("server_target_latency_ns", o.ServerTargetLatencyNs, maxNs, "ns")
	addU("min_duration_ms", o.MinDurationMs, maxMs, "ms")
	addU("max_duration_ms", o.MaxDurationMs, maxMs, "ms")
	addU("drain_timeout_ms", o.DrainTimeoutMs, maxMs, "ms")
	addU("min_query_count", o.MinQueryCount, float64(lim.MaxQueries), "queries")
	addU("samples_per_query", o.SamplesPerQuery, float64(lim.MaxInflight), "samples")
	addU("multi_stream_samples_per_query", o.MultiStreamSamplesPerQuery, float64(lim.MaxInflight), "samples")
	addU("performance_sample_count_override", o.PerformanceSampleCountOverride, float64(lim.MaxSamples), "samples")
	for _, b := range bounds {
		if b.v > b.max {
			return fieldErr("settings."+b.field, "%s %s is over this daemon's limit of %s %s", num(b.v), b.unit, num(b.max), b.unit)
		}
	}
	// A tiny interval is an absurd rate.
	if o.IntervalMs != nil && *o.IntervalMs > 0 && 1000 / *o.IntervalMs > lim.MaxQPS {
		return fieldErr("settings.interval_ms", "%s ms is a rate of %s QPS, over this daemon's limit of %s QPS", num(*o.IntervalMs), num(1000 / *o.IntervalMs), num(lim.MaxQPS))
	}
	return nil
}

// checkBuilt bounds the engine settings the spec builds, whatever wrote
// them (preset, conf text or override).
func checkBuilt(ls loadgen.Settings, src map[string]string, lim Limits) error {
	field := func(name string) string {
		if f, ok := src[name]; ok {
			return f
		}
		return "settings." + name
	}
	maxMs := uint64(lim.MaxDuration.Milliseconds())
	var rate float64
	var rateName string
	switch ls.Scenario {
	case trace.Server:
		rate, rateName = ls.ServerTargetQPS, "server_target_qps"
	case trace.Offline:
		rate, rateName = ls.OfflineExpectedQPS, "offline_expected_qps"
	case trace.MultiStream:
		if ls.Ruleset == loadgen.RulesetV05 {
			rate, rateName = ls.MultiStreamTargetQPS, "multi_stream_target_qps"
		}
	}
	if rateName != "" && rate > lim.MaxQPS {
		return fieldErr(field(rateName), "%s QPS is over this daemon's limit of %s QPS", num(rate), num(lim.MaxQPS))
	}
	if ls.MinDurationMs > maxMs {
		return fieldErr(field("min_duration_ms"), "%d ms is over this daemon's limit of %d ms (%v)", ls.MinDurationMs, maxMs, lim.MaxDuration)
	}
	if ls.MaxDurationMs > maxMs {
		return fieldErr(field("max_duration_ms"), "%d ms is over this daemon's limit of %d ms (%v)", ls.MaxDurationMs, maxMs, lim.MaxDuration)
	}
	if ls.MaxDurationMs != 0 && ls.MinDurationMs > ls.MaxDurationMs {
		return fieldErr(field("min_duration_ms"), "%d ms exceeds max_duration_ms %d: the run would stop before its minimum", ls.MinDurationMs, ls.MaxDurationMs)
	}
	// Offline's min_query_count counts the samples of its one query, so
	// only the other scenarios compare it with max_query_count.
	if ls.Scenario != trace.Offline && ls.MaxQueryCount != 0 && ls.MinQueryCount > ls.MaxQueryCount {
		return fieldErr(field("min_query_count"), "%d exceeds max_query_count %d: the run would stop before its minimum", ls.MinQueryCount, ls.MaxQueryCount)
	}
	if ls.MinQueryCount > lim.MaxQueries {
		return fieldErr(field("min_query_count"), "%d is over this daemon's limit of %d queries", ls.MinQueryCount, lim.MaxQueries)
	}
	if ls.Engine.DrainTimeoutMs > maxMs {
		return fieldErr(field("engine.drain_timeout_ms"), "%d ms is over this daemon's limit of %d ms", ls.Engine.DrainTimeoutMs, maxMs)
	}
	if ls.Scenario == trace.Server {
		// LoadGen generates the whole schedule before the clock starts:
		// min_query_count queries at least, and min_duration of them at
		// the rate; both must fit in time and memory.
		if secs := float64(ls.MinQueryCount) / ls.ServerTargetQPS; secs > lim.MaxDuration.Seconds() {
			return fieldErr(field("min_query_count"), "%d queries at %s QPS take %v, over this daemon's limit of %v",
				ls.MinQueryCount, num(ls.ServerTargetQPS), time.Duration(math.Min(secs, 1e9)*float64(time.Second)).Round(time.Second), lim.MaxDuration)
		}
		if n := ls.ServerTargetQPS * float64(ls.MinDurationMs) / 1000; n > float64(lim.MaxQueries) {
			return fieldErr(field("min_duration_ms"), "%d ms at %s QPS schedules %.0f queries, over this daemon's limit of %d", ls.MinDurationMs, num(ls.ServerTargetQPS), n, lim.MaxQueries)
		}
	}
	return nil
}

// num prints a number as JSON would carry it, not in %v's exponent form
// (3600000, not 3.6e+06).
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
