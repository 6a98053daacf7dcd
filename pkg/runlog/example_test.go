package runlog_test

import (
	"fmt"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
)

func ExampleSummaryLine() {
	table := func(p50, p90, p99 int64) loadgen.LatencyStats {
		return loadgen.LatencyStats{Count: 1000, Percentiles: []loadgen.Percentile{
			{P: 0.50, LatencyNs: p50}, {P: 0.90, LatencyNs: p90}, {P: 0.99, LatencyNs: p99},
		}}
	}
	res := &loadgen.Result{
		Ruleset: loadgen.RulesetLoadGen6, Scenario: "Server", Validity: "INVALID",
		InvalidReasons:         []string{"2 samples failed (first: HTTP 503)"},
		CompletedSamplesPerSec: 997.5, TargetQPS: 1000,
		SampleLatency: table(1_250_000, 2_500_000, 9_000_000),
		IssueLateness: table(5_000, 20_000, 80_000),
		SamplesIssued: 1000, SamplesFailed: 2, QueriesIssued: 1000, DurationNs: 1_002_000_000,
		EndReason: loadgen.StopCompleted, MinDurationMet: true, MinQueriesMet: true, PerfConstraintsMet: true,
	}
	fmt.Println(runlog.SummaryLine(res))
	// Output:
	// Server (loadgen6): INVALID (2 samples failed (first: HTTP 503)). 997.50 samples/s completed vs 1000 target QPS; latency p50 1.250 ms, p90 2.500 ms, p99 9.000 ms; 2 of 1000 samples failed; issue lateness p99 0.080 ms; 1000 queries in 1.002 s.
}
