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
	if last := lastIssuedOffset(tr, issued); last/step >= maxHlogIntervals {
		step = (last/maxHlogIntervals/time.Second + 1) * time.Second
	}
	// The trace holds no query: a cursor walks the issued ones in order.
	c := tr.Cursor()
	q, _ := c.Next()
	var out []stats.LogInterval
	first, k := 0, q.Scheduled/step // the current slice's first query and interval
	for i := 1; i <= issued; i++ {
		if i < issued {
			q, _ = c.Next()
			if q.Scheduled/step == k {
				continue
			}
		}
		h, err := rec.Histogram(first*spq, min(i*spq, rec.Len()))
		if err != nil {
			return nil, fmt.Errorf("latency histogram: %w", err)
		}
		start := k * step
		out = append(out, stats.LogInterval{Start: start, Length: max(min(step, total-start), 0), Histogram: h})
		first, k = i, q.Scheduled/step
	}
	return out, nil
}

// lastIssuedOffset is the scheduled offset of query issued-1: the trace's
// last unless the run stopped early, when a cursor walks to it.
func lastIssuedOffset(tr *trace.Trace, issued int) time.Duration {
	if issued >= tr.Len() {
		return tr.LastScheduled()
	}
	c := tr.Cursor()
	var q trace.Query
	for range issued {
		q, _ = c.Next()
	}
	return q.Scheduled
}
