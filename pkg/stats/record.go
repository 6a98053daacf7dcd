package stats

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/netloadgen/netloadgen/pkg/offheap"
)

// Storage is split into chunks so the record can grow while recorders write:
// a chunk, once published, never moves. 2^15 samples (256 KiB) per chunk
// keeps growth to one allocation per 32,768 samples.
const (
	chunkShift = 15
	chunkLen   = 1 << chunkShift
	chunkMask  = chunkLen - 1
	// maxGrowIndex caps a growing record (32 GiB of latencies) so that a
	// corrupt index is an error, not an out-of-memory crash.
	maxGrowIndex = 1 << 32
)

// Slot encoding: 0 = not recorded yet (so fresh memory needs no fill),
// slotFailed = failed, v > 0 = latency v−1, v ≤ slotInFlight = in flight
// since scheduled time −v−2 (Start): the one word a sample keeps, from
// issue to completion and after.
const (
	slotFailed   = -1
	slotInFlight = -2
)

// recorded reports whether slot value v holds a latency or a failure: not
// 0 (never started) and not in flight.
func recorded(v int64) bool { return v > 0 || v == slotFailed }

// LatencyRecord is the exact latency of every sample of a run, indexed by the
// sample's sequence number: no sampling, no buckets. MLPERF.md computes
// validity from exact latencies, not from a histogram.
//
// It is built for a load generator's completion path: 8 bytes per sample,
// allocated up front (the trace is known before the run) off the Go heap
// (pkg/offheap: the collector neither scans it nor counts it toward its
// goal, so a 60M-sample record does not let the heap grow by another
// 480 MB of garbage) and given back when the record is collected; Record is a
// bounds check plus one store (7 ns measured, no allocation, no lock; see
// BenchmarkRecord). Any number of goroutines may call Record and Fail at the
// same time provided each index is recorded by one of them only: distinct
// indices are distinct memory, so they do not race.
//
// An engine may also keep a sample's in-flight state in its slot: Start
// stores the scheduled time, and Finish (or FailInFlight) turns it into the
// latency with one compare-and-swap (BenchmarkFinish: ~10 ns against
// Record's ~6), so of an answer and a timeout racing for a sample exactly
// one counts. These three are atomic and may race with each other on any
// index.
//
// Reading (Latencies, Missing, Histogram) requires every recorder to have
// finished and that to happen-before the read, e.g. by sync.WaitGroup.Wait
// or a channel receive: the slots are plain memory, not atomics. Over and
// Failed are atomic and may be read at any time.
//
// A record built with WithGrowth accepts indices past its initial size,
// allocating a 256 KiB chunk per 32,768 new samples (for Offline or closed
// loops whose count is not known in advance); that also costs at most one
// partly used chunk of memory.
type LatencyRecord struct {
	chunks   atomic.Pointer[[][]int64]
	size     int // initial size; also the only size without growth
	growable bool
	growMu   sync.Mutex

	bound  time.Duration
	over   atomic.Int64
	failed atomic.Int64
}

// RecordOption configures a LatencyRecord.
type RecordOption func(*LatencyRecord)

// WithBound makes the record count, as it records, the samples over a
// latency bound (d > bound), so a running trial can tell when its verdict is
// settled (see Over and Decide).
func WithBound(bound time.Duration) RecordOption {
	return func(r *LatencyRecord) { r.bound = bound }
}

// WithGrowth lets the record accept indices beyond its initial size.
func WithGrowth() RecordOption {
	return func(r *LatencyRecord) { r.growable = true }
}

// NewLatencyRecord returns a record with room for samples 0 … n−1.
func NewLatencyRecord(n int, opts ...RecordOption) (*LatencyRecord, error) {
	if n < 0 || n > maxGrowIndex {
		return nil, fmt.Errorf("%w: record size %d", ErrInvalidArgument, n)
	}
	r := &LatencyRecord{size: n, bound: FailedLatency}
	for _, o := range opts {
		o(r)
	}
	nChunks := (n + chunkLen - 1) / chunkLen
	size := n
	if r.growable {
		// Growth appends whole chunks; a short last chunk could never be
		// extended without moving it under a concurrent writer.
		size = nChunks * chunkLen
	}
	backing, err := r.alloc(size)
	if err != nil {
		return nil, err
	}
	chunks := make([][]int64, nChunks)
	for c := range chunks {
		chunks[c] = backing[c*chunkLen : min((c+1)*chunkLen, len(backing)) : min((c+1)*chunkLen, len(backing))]
	}
	r.chunks.Store(&chunks)
	return r, nil
}

// alloc returns n zeroed slots off the Go heap (the record is the run's one
// thing kept to its end: it must not set the collector's goal), prefaulted,
// and freed when r becomes unreachable.
func (r *LatencyRecord) alloc(n int) ([]int64, error) {
	s, free, err := offheap.Int64s(n)
	if err != nil {
		return nil, fmt.Errorf("latency record: %w", err)
	}
	offheap.FreeWith(r, free)
	prefault(s)
	return s, nil
}

// prefault touches every page of s so the operating system maps them now,
// not on the first Record into each page: a first touch costs a page fault
// (several µs per 512 samples): BenchmarkRecord measured 20 ns per Record
// with the faults left to the hot path, 7 ns without (shared 2-core VM).
func prefault(s []int64) {
	const perPage = 4096 / 8
	for i := 0; i < len(s); i += perPage {
		s[i] = 0
	}
}

// slot returns the storage of sample i, growing the record if allowed.
func (r *LatencyRecord) slot(i int) (*int64, error) {
	if s, ok := r.existing(i); ok {
		return s, nil
	}
	return r.grow(i)
}

func (r *LatencyRecord) grow(i int) (*int64, error) {
	if i < 0 || !r.growable || i >= maxGrowIndex {
		return nil, fmt.Errorf("%w: index %d, record size %d", ErrOutOfRange, i, r.Len())
	}
	r.growMu.Lock()
	defer r.growMu.Unlock()
	cs := *r.chunks.Load()
	c := i >> chunkShift
	if c >= len(cs) {
		// append may reuse spare capacity past len(cs): no reader indexes
		// there, and the Store below publishes the new elements.
		for len(cs) <= c {
			ch, err := r.alloc(chunkLen)
			if err != nil {
				return nil, err
			}
			cs = append(cs, ch)
		}
		r.chunks.Store(&cs)
	}
	return &cs[c][i&chunkMask], nil
}

// Record stores the latency of sample i. It fails if i is outside a fixed
// record, d is negative (or FailedLatency), or i was already recorded.
func (r *LatencyRecord) Record(i int, d time.Duration) error {
	if d < 0 || d == FailedLatency {
		return fmt.Errorf("%w: sample %d latency %d ns", ErrInvalidLatency, i, d)
	}
	s, err := r.slot(i)
	if err != nil {
		return err
	}
	if *s != 0 {
		return fmt.Errorf("%w: sample %d", ErrAlreadyRecorded, i)
	}
	*s = int64(d) + 1
	if d > r.bound {
		r.over.Add(1)
	}
	runtime.KeepAlive(r) // s points into memory r frees when collected
	return nil
}

// Fail marks sample i failed: it will count as over every bound.
func (r *LatencyRecord) Fail(i int) error {
	s, err := r.slot(i)
	if err != nil {
		return err
	}
	if *s != 0 {
		return fmt.Errorf("%w: sample %d", ErrAlreadyRecorded, i)
	}
	*s = slotFailed
	r.failed.Add(1)
	runtime.KeepAlive(r) // s points into memory r frees when collected
	return nil
}

// Start marks sample i in flight since scheduledNs (ns since the run's
// start, ≥ 0), kept in the sample's own slot until Finish or FailInFlight:
// an engine needs no other per-query state for it. Readers treat an
// in-flight sample as not recorded. It fails if i is out of range or the
// sample was started or recorded before. Safe to call concurrently with
// Finish and FailInFlight of any sample.
func (r *LatencyRecord) Start(i int, scheduledNs int64) error {
	if scheduledNs < 0 || scheduledNs > math.MaxInt64+slotInFlight {
		return fmt.Errorf("%w: sample %d scheduled at %d ns", ErrInvalidArgument, i, scheduledNs)
	}
	s, err := r.slot(i)
	if err != nil {
		return err
	}
	ok := atomic.CompareAndSwapInt64(s, 0, slotInFlight-scheduledNs)
	runtime.KeepAlive(r) // s points into memory r frees when collected
	if !ok {
		return fmt.Errorf("%w: sample %d", ErrAlreadyRecorded, i)
	}
	return nil
}

// Finish records the latency of in-flight sample i completing at atNs (ns
// since the run's start): atNs minus its scheduled time, 0 if negative. It
// returns false, recording nothing, if i is not in flight: never started,
// out of range, already finished or failed. Of concurrent Finish and
// FailInFlight calls for one sample exactly one succeeds.
func (r *LatencyRecord) Finish(i int, atNs int64) (time.Duration, bool) {
	s, ok := r.existing(i)
	if !ok {
		return 0, false
	}
	defer runtime.KeepAlive(r) // s points into memory r frees when collected
	v := atomic.LoadInt64(s)
	if v > slotInFlight {
		return 0, false
	}
	var d time.Duration
	if sched := slotInFlight - v; atNs > sched { // both ≥ 0: no overflow
		// Below FailedLatency, the largest latency the slot's +1 holds.
		d = time.Duration(min(atNs-sched, math.MaxInt64-1))
	}
	if !atomic.CompareAndSwapInt64(s, v, int64(d)+1) {
		return 0, false
	}
	if d > r.bound {
		r.over.Add(1)
	}
	return d, true
}

// FailInFlight marks in-flight sample i failed; false, changing nothing,
// if it is not in flight (as Finish).
func (r *LatencyRecord) FailInFlight(i int) bool {
	s, ok := r.existing(i)
	if !ok {
		return false
	}
	defer runtime.KeepAlive(r) // s points into memory r frees when collected
	v := atomic.LoadInt64(s)
	if v > slotInFlight || !atomic.CompareAndSwapInt64(s, v, slotFailed) {
		return false
	}
	r.failed.Add(1)
	return true
}

// InFlightScheduled returns the scheduled time Start gave sample i and
// true while it is in flight; false otherwise (never started, finished,
// failed or out of range).
func (r *LatencyRecord) InFlightScheduled(i int) (int64, bool) {
	s, ok := r.existing(i)
	if !ok {
		return 0, false
	}
	v := atomic.LoadInt64(s)
	runtime.KeepAlive(r) // s points into memory r frees when collected
	if v > slotInFlight {
		return 0, false
	}
	return slotInFlight - v, true
}

// existing returns the slot of sample i if it is allocated, never growing
// the record: only Start's index may (it is the issuer's, in range).
func (r *LatencyRecord) existing(i int) (*int64, bool) {
	if i < 0 {
		return nil, false
	}
	cs := *r.chunks.Load()
	if c := i >> chunkShift; c < len(cs) {
		if ch, o := cs[c], i&chunkMask; o < len(ch) {
			return &ch[o], true
		}
	}
	return nil, false
}

// Over returns the samples recorded so far over the WithBound bound, failed
// samples included. Safe to call while recording.
func (r *LatencyRecord) Over() int64 { return r.over.Load() + r.failed.Load() }

// Failed returns the samples marked failed so far. Safe to call while recording.
func (r *LatencyRecord) Failed() int64 { return r.failed.Load() }

// Len returns the record's size: n for a fixed record; for a growing one,
// the larger of n and the highest recorded index + 1. Read after recording.
func (r *LatencyRecord) Len() int {
	if !r.growable {
		return r.size
	}
	defer runtime.KeepAlive(r) // r owns the chunks' memory: keep it mapped while reading
	cs := *r.chunks.Load()
	for c := len(cs) - 1; c >= 0; c-- {
		for o := len(cs[c]) - 1; o >= 0; o-- {
			if recorded(cs[c][o]) {
				return max(r.size, c*chunkLen+o+1)
			}
		}
	}
	return r.size
}

// Missing returns how many of the first Len() samples were never recorded
// (neither a latency nor a failure; one still in flight counts). Read after
// recording.
func (r *LatencyRecord) Missing() int {
	n, missing := r.Len(), 0
	r.each(0, n, func(v int64) {
		if !recorded(v) {
			missing++
		}
	})
	return missing
}

// each calls fn with the raw slot value of samples from … to−1 (within Len).
func (r *LatencyRecord) each(from, to int, fn func(v int64)) {
	defer runtime.KeepAlive(r) // r owns the chunks' memory: keep it mapped while reading
	cs := *r.chunks.Load()
	for i := from; i < to; {
		ch := cs[i>>chunkShift]
		o := i & chunkMask
		end := min(len(ch), o+(to-i))
		for _, v := range ch[o:end] {
			fn(v)
		}
		i += end - o
	}
}

// Each calls fn with the index and latency of every recorded sample from
// … to−1 (within Len), in index order: FailedLatency for a failed sample;
// unrecorded samples are skipped. Analyses that need to know which sample
// had which latency (a time series by completion time) use it; Latencies
// loses the index when it sorts. Read after recording.
func (r *LatencyRecord) Each(from, to int, fn func(i int, d time.Duration)) {
	from, to = max(from, 0), min(to, r.Len())
	i := from
	r.each(from, to, func(v int64) {
		switch {
		case v == slotFailed:
			fn(i, FailedLatency)
		case v > 0:
			fn(i, time.Duration(v-1))
		}
		i++
	})
}

// Latencies returns the recorded latencies, failed samples as
// FailedLatency, unrecorded samples left out (see Missing). It does not copy
// the record: it reads it once now and again for selections (scan.go), so
// the Latencies keeps the record reachable and the record must not be
// written to while it is in use. Read after recording.
func (r *LatencyRecord) Latencies() Latencies {
	n := r.Len()
	l, _ := scannedLatencies(func(yield func([]time.Duration) bool) { r.blocks(n, yield) }, defaultLimits())
	return l // the slots hold no negative latency: no error
}

// blocks yields the latencies of samples 0 … n−1, decoded from their slots,
// in blocks of at most blockLen: a window of blockLen slots at a time, so
// the decoding loop needs no test for a full block.
func (r *LatencyRecord) blocks(n int, yield func([]time.Duration) bool) {
	defer runtime.KeepAlive(r) // r owns the chunks' memory: keep it mapped while reading
	cs := *r.chunks.Load()
	var buf [blockLen]time.Duration
	for i := 0; i < n; {
		ch := cs[i>>chunkShift]
		o := i & chunkMask
		end := min(len(ch), o+(n-i), o+blockLen)
		k := 0
		for _, v := range ch[o:end] {
			// Written before it is known to count: the next value
			// overwrites it if not.
			buf[k&(blockLen-1)] = time.Duration(v - 1)
			switch {
			case v > 0:
				k++
			case v == slotFailed:
				buf[k&(blockLen-1)] = FailedLatency
				k++
			}
		}
		i += end - o
		if k > 0 && !yield(buf[:k]) {
			return
		}
	}
}
