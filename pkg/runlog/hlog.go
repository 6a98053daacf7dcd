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
// than maxHlogIntervals: a long run's intervals are widened to whole
// seconds instead, so the log stays a size a viewer opens. Each interval is
// a full HDR histogram (about 190 KiB), written as soon as it is built.
const (
	hlogInterval     = time.Second
	maxHlogIntervals = 60
)

// writeHlog writes the run's completed sample latencies as an HdrHistogram
// interval log. Failed samples have no latency and are left out (the
// comment counts them).
func writeHlog(w io.Writer, run *loadgen.Run, res *loadgen.Result) error {
	// The header's count comes first: a scan of the record, so that the
	// intervals are written as they are built, not held (issue 28).
	var completed int64
	rec := run.Samples()
	rec.Each(0, rec.Len(), func(_ int, d time.Duration) {
		if d != stats.FailedLatency {
			completed++
		}
	})
	comment := fmt.Sprintf("netloadgen %s sample latencies (ns), by issue time; %d samples completed, %d failed (not in the histograms)",
		res.Effective.Scenario, completed, res.SamplesFailed)
	lw, err := stats.NewIntervalLogWriter(w, res.StartTime, comment)
	if err != nil {
		return err
	}
	return eachHlogInterval(run, res, lw.Write)
}

// eachHlogInterval slices the samples by the time their query was
// scheduled and gives emit each slice's histogram in turn.
// Only Server, whose queries are scheduled at the trace's offsets (and
// whose latency counts from them), is sliced; the closed-loop scenarios and
// Offline get one interval spanning the run (timeseries.csv and .json give
// every scenario's seconds, from Run.Timeline).
func eachHlogInterval(run *loadgen.Run, res *loadgen.Result, emit func(stats.LogInterval) error) error {
	rec := run.Samples()
	total := time.Duration(max(res.DurationNs, 0))
	tl := run.Timeline()
	issued, spq := tl.Queries, tl.SamplesPerQuery
	if res.Effective.Scenario != trace.Server.String() || issued == 0 || spq <= 0 {
		h, err := rec.Histogram(0, rec.Len())
		if err != nil {
			return fmt.Errorf("latency histogram: %w", err)
		}
		return emit(stats.LogInterval{Start: 0, Length: total, Histogram: h})
	}

	step := hlogInterval
	if last := time.Duration(res.FinalQueryScheduledTimeNs); last/step >= maxHlogIntervals {
		step = (last/maxHlogIntervals/time.Second + 1) * time.Second
	}
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
		err = emit(stats.LogInterval{Start: start, Length: max(min(step, total-start), 0), Histogram: h})
	}
	// The last interval ends after the last query issued, which is past
	// the count of those issued when shards stopped at different points
	// (a distributed run's lost worker, a stop of N issuers): the log
	// then has gaps.
	end := 0
	tl.EachQuery(func(q int, sched, _ int64) bool {
		if kq := time.Duration(sched) / step; kq != k {
			if q > 0 {
				closeInterval(q)
			}
			first, k = q, kq
		}
		end = q + 1
		return err == nil
	})
	if err == nil {
		closeInterval(end)
	}
	return err
}
