package daemon

import (
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// latencyWindow gives a live view latency per second: the percentiles of
// the samples completed over about the last second, as the difference of
// two snapshots of the run's cumulative live histogram (HDR counts add
// and subtract exactly). Progress is read twice a second and by every
// status request; a snapshot is taken at most every snapEvery, and the
// figures are those of the newest snapshot against the oldest one at
// least window before it.
type latencyWindow struct {
	mu    sync.Mutex
	snaps []latencySnap
	last  recentLatency
}

type latencySnap struct {
	at     time.Time
	counts *hdrhistogram.Snapshot
}

// recentLatency are the percentiles over the window (ms), of Samples
// samples completed in WindowS seconds; zero before there are two
// snapshots a window apart.
type recentLatency struct {
	P50Ms, P99Ms float64
	Samples      int64
	WindowS      float64
}

const (
	latencyWindowLen = time.Second
	latencySnapEvery = 450 * time.Millisecond
)

// add takes a snapshot (from snap, called only when one is due) and
// returns the latest figures.
func (w *latencyWindow) add(now time.Time, snap func() *hdrhistogram.Snapshot) recentLatency {
	w.mu.Lock()
	defer w.mu.Unlock()
	if n := len(w.snaps); n > 0 && now.Sub(w.snaps[n-1].at) < latencySnapEvery {
		return w.last
	}
	w.snaps = append(w.snaps, latencySnap{now, snap()})
	// Keep the newest snapshot at least a window old as the base.
	for len(w.snaps) > 2 && now.Sub(w.snaps[1].at) >= latencyWindowLen {
		w.snaps = w.snaps[1:]
	}
	base, cur := w.snaps[0], w.snaps[len(w.snaps)-1]
	dt := cur.at.Sub(base.at)
	if dt < latencyWindowLen {
		return w.last
	}
	w.last = diffPercentiles(base.counts, cur.counts, dt)
	return w.last
}

// diffPercentiles are the p50 and p99 of cur − base.
func diffPercentiles(base, cur *hdrhistogram.Snapshot, dt time.Duration) recentLatency {
	if len(base.Counts) != len(cur.Counts) {
		return recentLatency{}
	}
	d := *cur
	d.Counts = make([]int64, len(cur.Counts))
	var n int64
	for i := range cur.Counts {
		d.Counts[i] = max(cur.Counts[i]-base.Counts[i], 0)
		n += d.Counts[i]
	}
	out := recentLatency{Samples: n, WindowS: dt.Seconds()}
	if n == 0 {
		return out
	}
	h := hdrhistogram.Import(&d)
	ms := func(q float64) float64 { return float64(h.ValueAtQuantile(q)) / float64(time.Millisecond) }
	out.P50Ms, out.P99Ms = ms(50), ms(99)
	return out
}
