package runlog

import (
	"fmt"
	"io"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/stats"
)

// writeHlog writes the run's completed sample latencies as one interval
// spanning the run. The engine exposes no per-sample completion time, so the
// samples cannot be sliced into the time intervals they finished in; one
// interval still gives HdrHistogram's tools the full-run percentile plot.
// Failed samples have no latency and are left out (the comment counts them).
func writeHlog(w io.Writer, run *loadgen.Run, res *loadgen.Result) error {
	rec := run.Samples()
	h, err := rec.Histogram(0, rec.Len())
	if err != nil {
		return fmt.Errorf("latency histogram: %w", err)
	}
	comment := fmt.Sprintf("netloadgen %s sample latencies (ns); %d samples completed, %d failed (not in the histogram)",
		res.Effective.Scenario, h.TotalCount(), res.SamplesFailed)
	return stats.WriteIntervalLog(w, res.StartTime, comment, []stats.LogInterval{{
		Start: 0, Length: time.Duration(max(res.DurationNs, 0)), Histogram: h,
	}})
}
