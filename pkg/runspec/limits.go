package runspec

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// checkBuilt bounds the engine settings the spec builds, whatever wrote
// them (preset, conf text or override), and the trace they make for a
// library of qsl's size.
func checkBuilt(ls loadgen.Settings, src map[string]string, qsl trace.QSL, lim api.Limits) error {
	field := func(name string) string { return settingField(src, name) }
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
		return fieldErr(field(rateName), "%s QPS is over this daemon's limit of %s QPS", api.Num(rate), api.Num(lim.MaxQPS))
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
	if ls.Engine.WarmupMs > maxMs {
		return fieldErr(field("engine.warmup_ms"), "%d ms is over this daemon's limit of %d ms", ls.Engine.WarmupMs, maxMs)
	}
	if ls.Scenario == trace.Server {
		// LoadGen generates the whole schedule before the clock starts:
		// min_query_count queries at least, and min_duration of them at
		// the rate; both must fit in time and memory.
		if secs := float64(ls.MinQueryCount) / ls.ServerTargetQPS; secs > lim.MaxDuration.Seconds() {
			return fieldErr(field("min_query_count"), "%d queries at %s QPS take %v, over this daemon's limit of %v",
				ls.MinQueryCount, api.Num(ls.ServerTargetQPS), time.Duration(math.Min(secs, 1e9)*float64(time.Second)).Round(time.Second), lim.MaxDuration)
		}
		if n := ls.ServerTargetQPS * float64(ls.MinDurationMs) / 1000; n > float64(lim.MaxQueries) {
			return fieldErr(field("min_duration_ms"), "%d ms at %s QPS schedules %.0f queries, over this daemon's limit of %d", ls.MinDurationMs, api.Num(ls.ServerTargetQPS), n, lim.MaxQueries)
		}
	}
	return checkTraceSize(ls, src, qsl, lim.MaxTraceSamples,
		fmt.Sprintf("this daemon's limit of %d samples (LOADGEND_MAX_TRACE_SAMPLES)", lim.MaxTraceSamples))
}

// settingField is the spec field that wrote a LoadGen setting, or
// settings.<name> when a preset or conf text did.
func settingField(src map[string]string, name string) string {
	if f, ok := src[name]; ok {
		return f
	}
	return "settings." + name
}

// checkTraceSize refuses settings whose trace (trace.SizeOf, for a library
// of qsl's size) holds more than max samples, over saying whose limit that
// is. The field named is what makes the trace so large: min_duration_ms at
// the scenario's rate, else min_query_count (Offline's sample count), else
// the loaded set a performance_issue_unique run issues once each.
func checkTraceSize(ls loadgen.Settings, src map[string]string, qsl trace.QSL, max uint64, over string) error {
	req := ls.TraceSettings()
	tooLarge := func(r trace.Requested) (trace.Size, bool, error) {
		e, err := trace.EffectiveSettings(r, qsl)
		if err != nil {
			// Refused for another reason, which the run reports.
			return trace.Size{}, false, nil
		}
		size, err := trace.SizeOf(e, qsl.TotalSampleCount)
		return size, err != nil || size.Samples() > float64(max), err
	}
	size, over1, err := tooLarge(req)
	if !over1 {
		return nil
	}
	byDuration := req
	byDuration.MinQueryCount = 0
	field, what := settingField(src, "min_query_count"), fmt.Sprintf("min_query_count %d makes", ls.MinQueryCount)
	switch _, overByDuration, _ := tooLarge(byDuration); {
	case overByDuration:
		field, what = settingField(src, "min_duration_ms"), fmt.Sprintf("%d ms at %s QPS make", ls.MinDurationMs, api.Num(scenarioQPS(req)))
	case req.PerformanceIssueUnique:
		field, what = "performance_samples", fmt.Sprintf("performance_issue_unique over %d loaded samples makes", min(qsl.PerformanceSampleCount, qsl.TotalSampleCount))
		if _, ok := src["performance_sample_count_override"]; ok {
			field = settingField(src, "performance_sample_count_override")
		}
	}
	if err != nil {
		return fieldErr(field, "%s a trace the engine cannot hold: %s", what, strings.TrimPrefix(err.Error(), trace.ErrTooLarge.Error()+": "))
	}
	return fieldErr(field, "%s a trace of about %.0f samples (%.0f %s of %d), over %s",
		what, size.Samples(), size.Queries, plural(size.Queries, "query", "queries"), size.SamplesPerQuery, over)
}

// scenarioQPS is the rate the scenario's trace is generated at, as
// trace.EffectiveSettings derives it.
func scenarioQPS(r trace.Requested) float64 {
	switch r.Scenario {
	case trace.SingleStream:
		return 1e9 / r.SingleStreamExpectedLatencyNs
	case trace.MultiStream:
		return 1e9 / r.MultiStreamExpectedLatencyNs
	case trace.Server:
		return r.ServerTargetQPS
	}
	return r.OfflineExpectedQPS
}

func plural(n float64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
