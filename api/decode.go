package api

import (
	"errors"
	"io"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/netloadgen/netloadgen/pkg/target"
)

// maxNameLen bounds model names, versions and sut_name: they go into URLs
// and log lines.
const maxNameLen = 256

// DecodeRunSpec reads a run spec strictly and checks it with Check against
// lim (zero fields take DefaultLimits), each refusal a *FieldError naming
// the field. A body over lim.MaxBodyBytes gives a FieldError wrapping
// ErrBodyTooLarge. What the settings build is checked by pkg/runspec, whose
// Decode the daemon calls: together they refuse everything a run could
// fail on before it reaches the target.
func DecodeRunSpec(r io.Reader, lim Limits) (RunSpec, error) {
	lim = lim.WithDefaults()
	var s RunSpec
	if err := decodeStrict(r, lim.MaxBodyBytes, &s); err != nil {
		return RunSpec{}, err
	}
	// The default is written into the spec, so the stored run says which
	// scenario it ran.
	if s.Scenario == "" {
		s.Scenario = DefaultScenario
	}
	if err := s.Check(lim); err != nil {
		return RunSpec{}, err
	}
	return s, nil
}

// DecodeProbeRequest reads the body of POST /v1/probe strictly.
func DecodeProbeRequest(r io.Reader, lim Limits) (ProbeRequest, error) {
	lim = lim.WithDefaults()
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
	if err := checkHeaders(p.Headers); err != nil {
		return ProbeRequest{}, err
	}
	if t, err := target.Parse(p.Target); err == nil {
		if err := p.TLS.check(t.TLS()); err != nil {
			return ProbeRequest{}, err
		}
	}
	return p, nil
}

func checkTarget(t string) error {
	if t == "" {
		return fieldErr("target", "is required (http://host:port or grpc://host:port)")
	}
	if _, err := target.Parse(t); err != nil {
		msg := err.Error()
		if errors.Is(err, target.ErrTarget) {
			msg = msg[len(target.ErrTarget.Error())+2:]
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
	if !utf8.ValidString(v) {
		return fieldErr(field, "%q is not valid UTF-8", v)
	}
	for _, r := range v {
		if unicode.IsControl(r) {
			return fieldErr(field, "contains a control character")
		}
	}
	return nil
}

// Check validates a decoded spec against lim (zero fields take
// DefaultLimits): CheckFields, then the daemon's bounds on what the fields
// ask. The settings the spec builds are checked by pkg/runspec, which
// builds them.
func (s RunSpec) Check(lim Limits) error {
	lim = lim.WithDefaults()
	if err := s.CheckFields(); err != nil {
		return err
	}
	if err := s.checkKnobLimits(lim); err != nil {
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
	return nil
}

// CheckFields validates what the spec's fields say on their own, with no
// limit and no engine: the target's grammar, the names, what is required,
// what cannot be negative. `loadgend run` and the daemon both check it
// (through pkg/runspec).
// maxSLOLen bounds the spec's slo: four bounds with percentiles fit in far less.
const maxSLOLen = 256

func (s RunSpec) CheckFields() error {
	if err := checkTarget(s.Target); err != nil {
		return err
	}
	if err := checkName("model", s.Model, s.Mix == ""); err != nil {
		return err
	}
	if err := checkName("model_version", s.ModelVersion, false); err != nil {
		return err
	}
	if t, err := target.Parse(s.Target); err == nil {
		if err := s.TLS.check(t.TLS()); err != nil {
			return err
		}
	}
	if err := checkName("sut_name", s.SUTName, false); err != nil {
		return err
	}
	if s.Data != "" && s.TotalSamples != 0 {
		return fieldErr("total_samples", "with data the files give the total")
	}
	for _, k := range s.knobs() {
		if k.v < 0 {
			return fieldErr(k.field, "must not be negative, got %d", k.v)
		}
	}
	if s.MaxResponseBytes < 0 || s.MaxResponseBytes > MaxResponseBytesCeiling {
		return fieldErr("max_response_bytes", "%d: want 0 (the default, 64 MiB) to %d (1 GiB) bytes", s.MaxResponseBytes, MaxResponseBytesCeiling)
	}
	if s.IssueSlackUs != 0 && s.IssueSlackNs != 0 {
		return fieldErr("issue_slack_ns", "sets the same setting as issue_slack_us; give one of them")
	}
	if err := checkHeaders(s.Headers); err != nil {
		return err
	}
	if err := s.checkServerMetrics(); err != nil {
		return err
	}
	if err := s.checkDistributed(); err != nil {
		return err
	}
	if err := s.checkShape(); err != nil {
		return err
	}
	if len(s.SLO) > maxSLOLen {
		return fieldErr("slo", "longer than %d bytes: want ttft=DUR,tpot=DUR,e2e=DUR,latency=DUR (each optionally @pNN)", maxSLOLen)
	}
	if s.Search != nil {
		if s.Search.GoodputPercent != 0 && s.SLO == "" {
			return fieldErr("search.goodput_percent", "counts the samples meeting the SLO: give slo too (e.g. \"ttft=2s,tpot=200ms\")")
		}
		if len(s.Search.TraceSpeeds) > 0 && s.Trace == "" {
			return fieldErr("search.trace_speeds", "sweep a trace file's speed: give trace too")
		}
		return s.Search.checkFields()
	}
	return nil
}

// MaxResponseBytesCeiling is the largest max_response_bytes: 1 GiB, the
// pool client's bound before there was one for both.
const MaxResponseBytesCeiling = 1 << 30

type knob struct {
	field string
	v     int
}

func (s RunSpec) knobs() []knob {
	return []knob{
		{"batch_size", s.BatchSize},
		{"max_inflight", s.MaxInflight},
		{"conns", s.Conns},
		{"total_samples", s.TotalSamples},
		{"performance_samples", s.PerformanceSamples},
	}
}

func (s RunSpec) checkKnobLimits(lim Limits) error {
	// In the order of knobs.
	maxes := []int{lim.MaxBatch, lim.MaxInflight, lim.MaxConns, lim.MaxSamples, lim.MaxSamples}
	for i, k := range s.knobs() {
		if k.v > maxes[i] {
			return fieldErr(k.field, "%d is over this daemon's limit of %d", k.v, maxes[i])
		}
	}
	if maxMs := uint64(lim.MaxDuration.Milliseconds()); s.RequestTimeoutMs > maxMs {
		return fieldErr("request_timeout_ms", "%d ms is over this daemon's limit of %d ms (%v)", s.RequestTimeoutMs, maxMs, lim.MaxDuration)
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
	addF("ttft_latency_ms", o.TTFTLatencyMs, maxMs, "ms")
	addF("tpot_latency_ms", o.TPOTLatencyMs, maxMs, "ms")
	addF("expected_latency_ns", o.ExpectedLatencyNs, maxNs, "ns")
	addF("single_stream_expected_latency_ns", o.SingleStreamExpectedLatencyNs, maxNs, "ns")
	addF("multi_stream_expected_latency_ns", o.MultiStreamExpectedLatencyNs, maxNs, "ns")
	addU("server_target_latency_ns", o.ServerTargetLatencyNs, maxNs, "ns")
	addU("min_duration_ms", o.MinDurationMs, maxMs, "ms")
	addU("max_duration_ms", o.MaxDurationMs, maxMs, "ms")
	addU("drain_timeout_ms", o.DrainTimeoutMs, maxMs, "ms")
	addU("warmup_ms", o.WarmupMs, maxMs, "ms")
	addU("concurrency", o.Concurrency, float64(lim.MaxInflight), "requests")
	addU("min_query_count", o.MinQueryCount, float64(lim.MaxQueries), "queries")
	addU("samples_per_query", o.SamplesPerQuery, float64(lim.MaxInflight), "samples")
	addU("multi_stream_samples_per_query", o.MultiStreamSamplesPerQuery, float64(lim.MaxInflight), "samples")
	addU("performance_sample_count_override", o.PerformanceSampleCountOverride, float64(lim.MaxSamples), "samples")
	for _, b := range bounds {
		if b.v > b.max {
			return fieldErr("settings."+b.field, "%s %s is over this daemon's limit of %s %s", Num(b.v), b.unit, Num(b.max), b.unit)
		}
	}
	// A tiny interval is an absurd rate.
	if o.IntervalMs != nil && *o.IntervalMs > 0 && 1000 / *o.IntervalMs > lim.MaxQPS {
		return fieldErr("settings.interval_ms", "%s ms is a rate of %s QPS, over this daemon's limit of %s QPS", Num(*o.IntervalMs), Num(1000 / *o.IntervalMs), Num(lim.MaxQPS))
	}
	return nil
}

// Num prints a number as JSON would carry it, not in %v's exponent form
// (3600000, not 3.6e+06): error messages quote what the user wrote.
func Num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
