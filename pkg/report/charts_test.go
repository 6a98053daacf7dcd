package report

import (
	"testing"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
)

// TestPartialLastSecond: timeseries.json's last interval ends with the
// run: its rates are over the part the run covered, and a sliver under
// half an interval draws no rate (a 10 ms one would read as a collapse);
// its latency is drawn either way.
func TestPartialLastSecond(t *testing.T) {
	p99 := int64(4e6)
	ts := &runlog.Timeseries{IntervalNs: 1e9, Seconds: []runlog.Second{
		{Second: 0, Issued: 100, Completed: 100, P99Ns: &p99},
		{Second: 1, Issued: 30, Completed: 30, Failed: 6, P99Ns: &p99},
	}}
	for _, c := range []struct {
		durationNs int64
		want       []float64 // completed/s by point
	}{
		{2e9, []float64{100, 30}},
		{1.6e9, []float64{100, 50}}, // 30 in 0.6 s
		{1.01e9, []float64{100}},    // 10 ms: no rate
	} {
		run := &Run{Name: "r", Result: &loadgen.Result{DurationNs: c.durationNs}, Series: ts}
		cs := timeCharts([]*Run{run})
		var completed, failed, latency []float64
		for _, l := range cs[0].Lines {
			for _, p := range l.Points {
				switch l.Label {
				case "r completed/s":
					completed = append(completed, p.Y)
				case "r failed/s":
					failed = append(failed, p.Y)
				}
			}
		}
		for _, p := range cs[1].Lines[0].Points {
			latency = append(latency, p.Y)
		}
		if len(completed) != len(c.want) || len(latency) != 2 {
			t.Fatalf("duration %d: completed/s %v, p99 %v; want %v and 2 latencies", c.durationNs, completed, latency, c.want)
		}
		for i, w := range c.want {
			if d := completed[i] - w; d > 1e-9 || d < -1e-9 {
				t.Errorf("duration %d: completed/s %v, want %v", c.durationNs, completed, c.want)
			}
		}
		if c.durationNs == 1.6e9 && (failed[1] < 9.99 || failed[1] > 10.01) {
			t.Errorf("failed/s %v, want 10 in the last 0.6 s", failed)
		}
	}
}
