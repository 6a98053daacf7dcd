package daemon

import (
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/netloadgen/netloadgen/pkg/stats"
)

// Latency per second is the samples completed in the last window alone:
// a slow first second does not show in the next one, snapshots are taken
// at most every latencySnapEvery, and nothing shows before a window.
func TestLatencyWindow(t *testing.T) {
	h := stats.NewHistogram()
	snaps := 0
	snap := func() *hdrhistogram.Snapshot { snaps++; return h.Export() }
	var w latencyWindow
	t0 := time.Unix(0, 0)
	if got := w.add(t0, snap); got.WindowS != 0 {
		t.Fatalf("at the start: %+v, want nothing", got)
	}
	// The first second: 100 samples at 50 ms.
	for range 100 {
		_ = h.RecordValue(int64(50 * time.Millisecond))
	}
	if got := w.add(t0.Add(200*time.Millisecond), snap); got.WindowS != 0 || snaps != 1 {
		t.Fatalf("200 ms in: %+v after %d snapshots, want nothing and no new snapshot", got, snaps)
	}
	w.add(t0.Add(500*time.Millisecond), snap)
	got := w.add(t0.Add(time.Second), snap)
	if got.Samples != 100 || got.P50Ms < 49.9 || got.P50Ms > 50.1 || got.WindowS != 1 {
		t.Fatalf("the first second: %+v, want 100 samples at 50 ms over 1 s", got)
	}
	// The next second: 200 samples at 2 ms; the 50 ms ones are gone.
	for range 200 {
		_ = h.RecordValue(int64(2 * time.Millisecond))
	}
	w.add(t0.Add(1500*time.Millisecond), snap)
	got = w.add(t0.Add(2*time.Second), snap)
	if got.Samples != 200 || got.P99Ms < 1.99 || got.P99Ms > 2.01 || got.WindowS != 1 {
		t.Errorf("the second second: %+v, want 200 samples, p99 2 ms, over 1 s", got)
	}
	// A second with no completions: zero percentiles, zero samples.
	w.add(t0.Add(2500*time.Millisecond), snap)
	if got = w.add(t0.Add(3*time.Second), snap); got.Samples != 0 || got.P99Ms != 0 {
		t.Errorf("a quiet second: %+v, want no samples", got)
	}
	if snaps != 7 {
		t.Errorf("%d snapshots taken, want 7 (one per add at least %v apart)", snaps, latencySnapEvery)
	}
}
