package stats

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// HDR histogram range and precision for every histogram of this package:
// 1 µs to 1 h at 3 significant digits, in nanoseconds (the unit
// HdrHistogram's log tools assume by default). One histogram takes about
// 190 KiB.
const (
	HistogramMin     = int64(time.Microsecond)
	HistogramMax     = int64(time.Hour)
	HistogramSigFigs = 3
)

// NewHistogram returns an empty HDR histogram with the package's range.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(HistogramMin, HistogramMax, HistogramSigFigs)
}

// recordClamped records d, clamping it into the histogram's range: a live
// view should show an hour-long outlier at the top, not lose it.
func recordClamped(h *hdrhistogram.Histogram, d time.Duration) {
	v := min(max(int64(d), 0), HistogramMax)
	_ = h.RecordValue(v) // cannot fail: v is within the trackable range
}

// LiveHistogram is an HDR latency histogram many goroutines record into at
// once, for live views (progress, metrics) and merging; the exact statistics
// come from LatencyRecord. Recording takes one of several shard locks picked
// at random, so concurrent recorders rarely meet on one lock; readers merge
// the shards. Measured cost: BenchmarkLiveHistogramRecord.
type LiveHistogram struct {
	shards []liveShard

	mu    sync.Mutex // serialises Interval, Snapshot and Quantiles; guards total and merged
	total *hdrhistogram.Histogram
	// merged is Quantiles' histogram, kept between calls: a progress line
	// or a scrape every half second would otherwise allocate ~190 KiB each
	// time (2.7% of a 100 QPS run's CPU with the progress line on, in page
	// faults and merges).
	merged *hdrhistogram.Histogram
}

type liveShard struct {
	mu sync.Mutex
	h  *hdrhistogram.Histogram
	_  [48]byte // keep neighbouring shard locks off one cache line
}

// NewLiveHistogram returns a live histogram with shards for twice
// GOMAXPROCS recorders (at most 64).
func NewLiveHistogram() *LiveHistogram {
	n := min(2*runtime.GOMAXPROCS(0), 64)
	l := &LiveHistogram{shards: make([]liveShard, n), total: NewHistogram()}
	for i := range l.shards {
		l.shards[i].h = NewHistogram()
	}
	return l
}

// Record adds one latency; values outside 1 µs … 1 h are clamped into it.
func (l *LiveHistogram) Record(d time.Duration) {
	s := &l.shards[rand.IntN(len(l.shards))]
	s.mu.Lock()
	recordClamped(s.h, d)
	s.mu.Unlock()
}

// RecordIn is Record into shard k (modulo the shards) instead of one
// picked at random: a recorder that is one of a fixed few (an issuer of
// loadgen's, on its own thread) keeps to its own shard, so the shard's
// lock and counts stay in its core's cache instead of moving between the
// recorders' cores on every record.
func (l *LiveHistogram) RecordIn(k int, d time.Duration) {
	s := &l.shards[uint(k)%uint(len(l.shards))]
	s.mu.Lock()
	recordClamped(s.h, d)
	s.mu.Unlock()
}

// RecordEach adds every latency of ds under one shard lock: a generative
// sample's inter-token gaps, hundreds at a time, pay one lock, not one each.
// An empty ds costs nothing.
func (l *LiveHistogram) RecordEach(ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	s := &l.shards[rand.IntN(len(l.shards))]
	s.mu.Lock()
	for _, d := range ds {
		recordClamped(s.h, d)
	}
	s.mu.Unlock()
}

// Interval returns a new histogram of the values recorded since the previous
// Interval call (or since the start), and folds them into the cumulative
// total. Use it for per-interval rates and .hlog intervals.
func (l *LiveHistogram) Interval() *hdrhistogram.Histogram {
	l.mu.Lock()
	defer l.mu.Unlock()
	iv := NewHistogram()
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		iv.Merge(s.h)
		s.h.Reset()
		s.mu.Unlock()
	}
	l.total.Merge(iv)
	return iv
}

// Snapshot returns a new histogram of everything recorded so far.
func (l *LiveHistogram) Snapshot() *hdrhistogram.Histogram {
	l.mu.Lock()
	defer l.mu.Unlock()
	snap := NewHistogram()
	l.mergeInto(snap)
	return snap
}

// mergeInto adds everything recorded so far to dst; l.mu is held.
func (l *LiveHistogram) mergeInto(dst *hdrhistogram.Histogram) {
	dst.Merge(l.total)
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		dst.Merge(s.h)
		s.mu.Unlock()
	}
}

// Quantiles sets out[i] to the value at quantile qs[i] (a fraction in
// [0, 1]) of everything recorded so far, as HistogramPercentile would of a
// Snapshot, without allocating one.
func (l *LiveHistogram) Quantiles(qs []float64, out []time.Duration) error {
	if len(out) < len(qs) {
		return fmt.Errorf("%w: %d quantiles into %d values", ErrInvalidArgument, len(qs), len(out))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.merged == nil {
		l.merged = NewHistogram()
	}
	l.merged.Reset()
	l.mergeInto(l.merged)
	for i, q := range qs {
		v, err := HistogramPercentile(l.merged, q)
		if err != nil {
			return err
		}
		out[i] = v
	}
	return nil
}

// HistogramPercentile returns the value at percentile p (a fraction in
// [0, 1]) of an HDR histogram: within 0.1 % of a recorded value, not
// LoadGen's exact rank. 0 for an empty histogram.
func HistogramPercentile(h *hdrhistogram.Histogram, p float64) (time.Duration, error) {
	if !(p >= 0 && p <= 1) {
		return 0, fmt.Errorf("%w: percentile %v not in [0, 1]", ErrInvalidArgument, p)
	}
	return time.Duration(h.ValueAtQuantile(p * 100)), nil
}

// Histogram returns an HDR histogram of the completed samples from … to−1
// (failed and unrecorded ones are left out; the failure count is reported
// separately). Sample indices follow the trace's issue order, so index
// ranges are time ranges of the run. Read after recording.
func (r *LatencyRecord) Histogram(from, to int) (*hdrhistogram.Histogram, error) {
	if from < 0 || to < from || to > r.Len() {
		return nil, fmt.Errorf("%w: samples [%d, %d) of %d", ErrOutOfRange, from, to, r.Len())
	}
	h := NewHistogram()
	r.each(from, to, func(v int64) {
		if v > 0 {
			recordClamped(h, time.Duration(v-1))
		}
	})
	return h, nil
}
