package runlog

import (
	"fmt"
	"io"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/stats"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// Interval lengths of latency.hlog: one second, unless that would give more
// than maxHlogIntervals. Each interval holds a full HDR histogram (about
// 190 KiB in memory until the log is written), so a long run's intervals
// are widened to whole seconds instead.
const (
	hlogInterval     = time.Second
	maxHlogIntervals = 60
)

// writeHlog writes the run's completed sample latencies as an HdrHistogram
// interval log. Failed samples have no latency and are left out (the
// comment counts them).
func writeHlog(w io.Writer, run *loadgen.Run, res *loadgen.Result) error {
	intervals, err := hlogIntervals(run, res)
	if err != nil {
		return err
	}
	var completed int64
	for _, iv := range intervals {
		completed += iv.Histogram.TotalCount()
	}
	comment := fmt.Sprintf("netloadgen %s sample latencies (ns), by issue time; %d samples completed, %d failed (not in the histograms)",
		res.Effective.Scenario, completed, res.SamplesFailed)
	return stats.WriteIntervalLog(w, res.StartTime, comment, intervals)
}

// hlogIntervals slices the samples by the time their query was scheduled.
// Only Server, whose queries are scheduled at the trace's offsets (and
// whose latency counts from them), is sliced; the closed-loop scenarios and
// Offline get one interval spanning the run (timeseries.csv and .json give
// every scenario's seconds, from Run.Timeline).
func hlogIntervals(run *loadgen.Run, res *loadgen.Result) ([]stats.LogInterval, error) {
	rec := run.Samples()
	total := time.Duration(max(res.DurationNs, 0))
	tl := run.Timeline()
	issued, spq := tl.Queries, tl.SamplesPerQuery
	if res.Effective.Scenario != trace.Server.String() || issued == 0 || spq <= 0 {
		h, err := rec.Histogram(0, rec.Len())
		if err != nil {
			return nil, fmt.Errorf("latency histogram: %w", err)
		}
		return []stats.LogInterval{{Start: 0, Length: total, Histogram: h}}, nil
	}

	step := hlogInterval
	if last := time.Duration(res.FinalQueryScheduledTimeNs); last/step >= maxHlogIntervals {
		step = (last/maxHlogIntervals/time.Second + 1) * time.Second
	}
	var out []stats.LogInterval
	// Queries [first, q) are scheduled in interval k; the walk closes an
	// interval at the first query of the next one, and the last at the end.
	first, k := 0, time.Duration(-1)
	var err error
	closeInterval := func(end int) {
		h, herr := rec.Histogram(first*spq, min(end*spq, rec.Len()))
		if herr != nil {
			err = fmt.Errorf("latency histogram: %w", herr)
			return
		}
		start := k * step
		out = append(out, stats.LogInterval{Start: start, Length: max(min(step, total-start), 0), Histogram: h})
	}
	tl.EachQuery(func(q int, sched, _ int64) bool {
		if kq := time.Duration(sched) / step; kq != k {
			if q > 0 {
				closeInterval(q)
			}
			first, k = q, kq
		}
		return err == nil
	})
	if err == nil {
		closeInterval(issued)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}
