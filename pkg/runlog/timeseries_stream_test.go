package runlog_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/stats"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// wholeRunTimeseries is BuildTimeseries as it was before it streamed
// (issue 28): every second's values held to the end, then its exact
// percentiles. The reference the streamed series must equal.
func wholeRunTimeseries(run *loadgen.Run, res *loadgen.Result) runlog.Timeseries {
	tl := run.Timeline()
	step := int64(runlog.TimeseriesInterval)
	n := int(max((res.DurationNs+step-1)/step, 1))
	bucket := func(off int64) int { return min(int(max(off, 0)/step), n-1) }
	ts := runlog.Timeseries{IntervalNs: step, Seconds: make([]runlog.Second, n)}
	lateness, latency := make([][]time.Duration, n), make([][]time.Duration, n)
	var scheduled []int64
	tl.EachQuery(func(_ int, sched, at int64) bool {
		b := bucket(at)
		ts.Seconds[b].Issued += int64(tl.SamplesPerQuery)
		lateness[b] = append(lateness[b], time.Duration(max(at-sched, 0)))
		scheduled = append(scheduled, sched)
		return true
	})
	run.Samples().Each(0, tl.Queries*tl.SamplesPerQuery, func(i int, d time.Duration) {
		if d != stats.FailedLatency {
			b := bucket(scheduled[i/tl.SamplesPerQuery] + int64(d))
			ts.Seconds[b].Completed++
			latency[b] = append(latency[b], d)
		}
	})
	for s, f := range tl.FailedBySecond {
		ts.Seconds[min(s, n-1)].Failed += f
	}
	ts.Seconds[n-1].Failed += res.Unanswered
	pct := func(ds []time.Duration, p float64) *int64 {
		if len(ds) == 0 {
			return nil
		}
		s := slices.Clone(ds)
		slices.Sort(s)
		v := int64(s[int(float64(len(s))*p)])
		return &v
	}
	for i := range ts.Seconds {
		s := &ts.Seconds[i]
		s.Second = i
		s.P50Ns, s.P99Ns, s.LatenessP99Ns = pct(latency[i], 0.50), pct(latency[i], 0.99), pct(lateness[i], 0.99)
	}
	return ts
}

// The streamed series (each second finished and freed once its last value
// is in) equals the whole-run one, over seconds whose completions arrive
// out of order and cross seconds (latencies up to 1.7 s), with failures,
// and in every scenario.
func TestTimeseriesStreamedEqualsWholeRun(t *testing.T) {
	scattered := func(id int) time.Duration { return time.Duration(id*7919%1700) * time.Millisecond }
	long := func(s *loadgen.Settings) { s.MinDurationMs, s.ServerTargetQPS = 4000, 2000 }
	for _, c := range []scenarioCase{
		{name: "Server scattered", ruleset: loadgen.RulesetLoadGen6, scenario: trace.Server, latency: scattered, tweak: long},
		{name: "Server failing", ruleset: loadgen.RulesetLoadGen6, scenario: trace.Server, latency: scattered, tweak: long,
			fail: func(id int) error {
				if id%5 == 0 {
					return fmt.Errorf("HTTP 500 for query %d", id)
				}
				return nil
			}},
		{name: "Offline", ruleset: loadgen.RulesetLoadGen6, scenario: trace.Offline, latency: constLatency(1500 * time.Millisecond)},
		{name: "SingleStream", ruleset: loadgen.RulesetLoadGen6, scenario: trace.SingleStream, latency: constLatency(3 * time.Millisecond)},
		{name: "MultiStream v0.5", ruleset: loadgen.RulesetV05, scenario: trace.MultiStream, latency: scattered},
	} {
		t.Run(c.name, func(t *testing.T) {
			run, res := execute(t, c)
			got, err := runlog.BuildTimeseries(run, res)
			if err != nil {
				t.Fatal(err)
			}
			want := wholeRunTimeseries(run, res)
			if jsonOf(t, got) != jsonOf(t, want) {
				t.Errorf("streamed series\n%s\nwant\n%s", jsonOf(t, got), jsonOf(t, want))
			}
			if c.tweak != nil && len(got.Seconds) < 4 {
				t.Errorf("%d seconds: the case should span several", len(got.Seconds))
			}
		})
	}
}
