package runspec

import (
	"math"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// checkBuilt bounds the engine settings the spec builds, whatever wrote
// them (preset, conf text or override).
func checkBuilt(ls loadgen.Settings, src map[string]string, lim api.Limits) error {
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
	return nil
}
