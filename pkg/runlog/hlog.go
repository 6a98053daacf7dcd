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
	tr := run.Trace()
	issued := int(min(res.QueriesIssued, int64(tr.Len())))
	spq := tr.SamplesPerQuery
	if res.Effective.Scenario != trace.Server.String() || issued == 0 || spq <= 0 {
		h, err := rec.Histogram(0, rec.Len())
		if err != nil {
			return nil, fmt.Errorf("latency histogram: %w", err)
		}
		return []stats.LogInterval{{Start: 0, Length: total, Histogram: h}}, nil
	}

	step := hlogInterval
	if last := tr.Query(issued - 1).Scheduled; last/step >= maxHlogIntervals {
		step = (last/maxHlogIntervals/time.Second + 1) * time.Second
	}
	var out []stats.LogInterval
	first := 0 // first query of the current slice
	for i := 1; i <= issued; i++ {
		k := tr.Query(first).Scheduled / step
		if i < issued && tr.Query(i).Scheduled/step == k {
			continue
		}
		h, err := rec.Histogram(first*spq, min(i*spq, rec.Len()))
		if err != nil {
			return nil, fmt.Errorf("latency histogram: %w", err)
		}
		start := k * step
		out = append(out, stats.LogInterval{Start: start, Length: max(min(step, total-start), 0), Histogram: h})
		first = i
	}
	return out, nil
}
