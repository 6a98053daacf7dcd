package search

import (
	"strings"
	"testing"
)

// The tables show a trial's answered latencies with its failures beside
// them (issue 26 #13); a record written before failed_samples whose tail
// is a failed sample's INT64_MAX says "failed", never 9223372036854.775.
func TestTablesShowAnsweredLatencies(t *testing.T) {
	const failedMs = 9223372036854.775
	answered := 0.412
	res := &Result{Mode: ModeSweep, Ruleset: "loadgen6", Scenario: "Server", Trials: []Trial{
		{Index: 1, Target: 100, TailLatencyMs: failedMs, TailLatencyAnsweredMs: &answered, Percentile: 0.99, FailedSamples: 6,
			Latency:         &Percentiles{P50: 0.1, P90: FailedPercentile, P99: FailedPercentile},
			LatencyAnswered: &Percentiles{P50: 0.1, P90: 0.3, P99: 0.412}},
		{Index: 2, Target: 200, TailLatencyMs: failedMs, Percentile: 0.99,
			Latency: &Percentiles{P50: 0.1, P90: 0.2, P99: FailedPercentile}},
	}}
	sweep := Summary(res)
	res.Mode = ModeFindPeak
	peak := Summary(res)
	for name, text := range map[string]string{"sweep": sweep, "find-peak": peak} {
		if strings.Contains(text, "9223372036854") {
			t.Errorf("%s shows INT64_MAX:\n%s", name, text)
		}
	}
	for _, want := range []string{"412 µs (6 failed)", "│ failed"} {
		if !strings.Contains(sweep, want) {
			t.Errorf("sweep lacks %q:\n%s", want, sweep)
		}
	}
	for _, want := range []string{"0.412 (6 failed)", "  failed  "} {
		if !strings.Contains(peak, want) {
			t.Errorf("find-peak lacks %q:\n%s", want, peak)
		}
	}
}
