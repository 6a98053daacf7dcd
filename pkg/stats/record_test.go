package stats

import (
	"errors"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/offheap"
)

func TestRecordRoundTrip(t *testing.T) {
	r, err := NewLatencyRecord(5, WithBound(100))
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		i    int
		d    time.Duration
		fail bool
	}{{3, 300, false}, {0, 0, false}, {1, 100, false}, {4, 0, true}}
	for _, s := range steps {
		if s.fail {
			err = r.Fail(s.i)
		} else {
			err = r.Record(s.i, s.d)
		}
		if err != nil {
			t.Fatalf("step %+v: %v", s, err)
		}
	}
	// 300 > 100 and the failure are over; 100 is not (strictly greater).
	if r.Over() != 2 || r.Failed() != 1 {
		t.Errorf("Over = %d, Failed = %d, want 2, 1", r.Over(), r.Failed())
	}
	if r.Missing() != 1 || r.Len() != 5 {
		t.Errorf("Missing = %d, Len = %d, want 1, 5", r.Missing(), r.Len())
	}
	l := r.Latencies()
	if want := []time.Duration{0, 100, 300, FailedLatency}; !slices.Equal(all(t, l), want) {
		t.Errorf("Latencies = %v, want %v", all(t, l), want)
	}
	if l.Failed() != 1 {
		t.Errorf("Latencies.Failed = %d", l.Failed())
	}
}

// Each gives every recorded sample with its index, failures as
// FailedLatency, and skips unrecorded ones and indices out of range.
func TestRecordEach(t *testing.T) {
	r, err := NewLatencyRecord(chunkLen + 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 2, chunkLen + 1} {
		if err := r.Record(i, time.Duration(i)*10); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Fail(chunkLen - 1); err != nil {
		t.Fatal(err)
	}
	type pair struct {
		i int
		d time.Duration
	}
	var got []pair
	r.Each(-5, chunkLen+100, func(i int, d time.Duration) { got = append(got, pair{i, d}) })
	want := []pair{{0, 0}, {2, 20}, {chunkLen - 1, FailedLatency}, {chunkLen + 1, (chunkLen + 1) * 10}}
	if !slices.Equal(got, want) {
		t.Errorf("Each(all) = %v, want %v", got, want)
	}
	got = nil
	r.Each(1, chunkLen, func(i int, d time.Duration) { got = append(got, pair{i, d}) })
	if want := want[1:3]; !slices.Equal(got, want) {
		t.Errorf("Each(1, chunkLen) = %v, want %v", got, want)
	}
}

func TestRecordErrors(t *testing.T) {
	r, _ := NewLatencyRecord(2)
	_ = r.Record(0, 5)
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"index past end", r.Record(2, 1), ErrOutOfRange},
		{"negative index", r.Record(-1, 1), ErrOutOfRange},
		{"fail past end", r.Fail(7), ErrOutOfRange},
		{"negative latency", r.Record(1, -1), ErrInvalidLatency},
		{"latency of a failure", r.Record(1, FailedLatency), ErrInvalidLatency},
		{"twice", r.Record(0, 6), ErrAlreadyRecorded},
		{"fail after record", r.Fail(0), ErrAlreadyRecorded},
	}
	for _, tc := range tests {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: error = %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	g, _ := NewLatencyRecord(0, WithGrowth())
	if err := g.Record(maxGrowIndex, 1); !errors.Is(err, ErrOutOfRange) {
		t.Errorf("growth past the cap: %v", err)
	}
	if _, err := NewLatencyRecord(-1); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("negative size: %v", err)
	}
	if l := all(t, r.Latencies()); !slices.Equal(l, []time.Duration{5}) {
		t.Errorf("failed calls changed the record: %v", l)
	}
}

func TestRecordGrowth(t *testing.T) {
	r, _ := NewLatencyRecord(10, WithGrowth())
	idx := []int{0, 9, 10, chunkLen - 1, chunkLen, 3*chunkLen + 17}
	for _, i := range idx {
		if err := r.Record(i, time.Duration(i)); err != nil {
			t.Fatalf("Record(%d): %v", i, err)
		}
	}
	if want := 3*chunkLen + 18; r.Len() != want {
		t.Errorf("Len = %d, want %d", r.Len(), want)
	}
	if want := r.Len() - len(idx); r.Missing() != want {
		t.Errorf("Missing = %d, want %d", r.Missing(), want)
	}
	want := make([]time.Duration, len(idx))
	for k, i := range idx {
		want[k] = time.Duration(i)
	}
	if got := all(t, r.Latencies()); !slices.Equal(got, want) {
		t.Errorf("Latencies = %v, want %v", got, want)
	}
}

// TestRecordConcurrent records distinct indices from many goroutines; run it
// with -race. The growing case makes recorders extend the record while others
// write into it.
func TestRecordConcurrent(t *testing.T) {
	const workers, per = 16, 5000
	const n = workers * per
	for _, tc := range []struct {
		name string
		size int
		opts []RecordOption
	}{
		{"fixed", n, nil},
		{"growing", 1, []RecordOption{WithGrowth()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := NewLatencyRecord(tc.size, append(tc.opts, WithBound(n-100))...)
			var wg sync.WaitGroup
			var errs atomic.Int64
			for w := range workers {
				wg.Go(func() {
					// Interleaved indices: neighbours are written by different goroutines.
					for k := range per {
						i := k*workers + w
						var err error
						if i%1000 == 999 {
							err = r.Fail(i)
						} else {
							err = r.Record(i, time.Duration(i))
						}
						if err != nil {
							errs.Add(1)
						}
					}
				})
			}
			wg.Wait() // the happens-before edge the reader needs
			if errs.Load() != 0 {
				t.Fatalf("%d record errors", errs.Load())
			}
			l := r.Latencies()
			if l.Len() != n || l.Failed() != n/1000 || r.Missing() != 0 {
				t.Fatalf("Len %d Failed %d Missing %d", l.Len(), l.Failed(), r.Missing())
			}
			for k, d := range all(t, l)[:n-n/1000] {
				if want := time.Duration(k + k/999); d != want {
					t.Fatalf("sorted[%d] = %d, want %d", k, d, want)
				}
			}
			// Over: latencies n−99 … n−1 minus the failed one among them (n−1), plus the n/1000 failures.
			if want := int64(99 - 1 + n/1000); r.Over() != want {
				t.Errorf("Over = %d, want %d", r.Over(), want)
			}
		})
	}
}

// A record costs 8 bytes a sample, off the Go heap: the heap holds only
// its index of chunks.
func TestRecordBytesPerSample(t *testing.T) {
	const n = 1 << 20
	var before, after runtime.MemStats
	settleOffheap()
	runtime.ReadMemStats(&before)
	offBefore := offheap.Live()
	r, _ := NewLatencyRecord(n)
	runtime.ReadMemStats(&after)
	off := offheap.Live() - offBefore
	runtime.KeepAlive(r)
	if perSample := float64(after.TotalAlloc-before.TotalAlloc) / n; perSample > 0.01 {
		t.Errorf("%.3f heap bytes per sample, want ~0", perSample)
	}
	if off != 8*n {
		t.Errorf("%d bytes off the heap, want %d", off, 8*n)
	}
	next := 0
	if allocs := testing.AllocsPerRun(1000, func() {
		if err := r.Record(next, time.Duration(next)); err != nil {
			t.Fatal(err)
		}
		next++
	}); allocs != 0 {
		t.Errorf("Record allocates %v times per call", allocs)
	}
}

// A record dropped by its owner (a daemon makes many runs) gives its memory
// back once collected, growing chunks included; while any Latencies of it
// is in use it stays.
func TestRecordFreedWhenUnreachable(t *testing.T) {
	settleOffheap()
	before := offheap.Live()
	r, err := NewLatencyRecord(chunkLen+5, WithGrowth())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Record(5*chunkLen, 42); err != nil { // grows 4 chunks
		t.Fatal(err)
	}
	size := offheap.Live() - before
	if size != 6*chunkLen*8 {
		t.Fatalf("%d bytes mapped, want 6 chunks", size)
	}
	l := r.Latencies()
	r = nil // dropping the last direct reference is the point
	settleOffheap()
	if got := offheap.Live() - before; got != size {
		t.Fatalf("%d bytes mapped while a Latencies of the record lives, want %d", got, size)
	}
	if v, err := l.Percentile(1); err != nil || v != 42 {
		t.Fatalf("max %v, %v", v, err)
	}
	runtime.KeepAlive(l)
	l = Latencies{}
	// Cleanups run on their own goroutine after the collection that finds
	// the record unreachable: collect and yield until they have.
	for i := 0; i < 100 && offheap.Live()-before > 0; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	if got := offheap.Live() - before; got > 0 {
		t.Errorf("%d bytes still mapped after the record was collected", got)
	}
}

// The collector's heap goal no longer includes the record (issue 28): a
// heap slice of the same size, as the record was before, raises it by its
// size or more. NETLOADGEN_HEAPGOAL_SAMPLES sets the size (default 2^24).
func TestRecordNotInHeapGoal(t *testing.T) {
	n := 1 << 24
	if v := os.Getenv("NETLOADGEN_HEAPGOAL_SAMPLES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			t.Fatal(err)
		}
	}
	goal := func() uint64 {
		runtime.GC()
		s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	base := goal()
	heap := make([]int64, n)
	prefault(heap)
	onHeap := goal()
	runtime.KeepAlive(heap)
	heap = nil // released before the record is measured
	base2 := goal()
	r, err := NewLatencyRecord(n)
	if err != nil {
		t.Fatal(err)
	}
	offHeap := goal()
	runtime.KeepAlive(r)
	t.Logf("%d samples: heap goal %d MB; with a heap slice %d MB; then %d MB; with the record %d MB",
		n, base>>20, onHeap>>20, base2>>20, offHeap>>20)
	if onHeap < base+uint64(8*n) {
		t.Errorf("a heap slice of %d MB raised the goal by only %d MB: the measure is broken", 8*n>>20, (onHeap-base)>>20)
	}
	if offHeap > base2+8<<20 {
		t.Errorf("the record raised the heap goal by %d MB", (offHeap-base2)>>20)
	}
}

// settleOffheap collects until the records earlier tests dropped have been
// freed: offheap.Live no longer changes from one collection to the next
// (cleanups run on their own goroutine after a collection).
func settleOffheap() {
	last, same := offheap.Live(), 0
	for i := 0; i < 100 && same < 3; i++ {
		runtime.GC()
		runtime.Gosched()
		if v := offheap.Live(); v == last {
			same++
		} else {
			last, same = v, 0
		}
	}
}
