package stats

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestBuckets(t *testing.T) {
	if got := bucketOf(math.MaxInt64); got != numBuckets-1 {
		t.Errorf("bucketOf(MaxInt64) = %d, want %d", got, numBuckets-1)
	}
	for b := range numBuckets {
		lo, hi := bucketLo(b), bucketHi(b)
		if lo > hi || bucketOf(lo) != b || bucketOf(hi) != b {
			t.Fatalf("bucket %d: [%d, %d] maps to %d, %d", b, lo, hi, bucketOf(lo), bucketOf(hi))
		}
		if b > 0 && bucketHi(b-1)+1 != lo {
			t.Fatalf("bucket %d starts at %d, bucket %d ends at %d", b, lo, b-1, bucketHi(b-1))
		}
		// A bucket is under 1% of its values wide: the histogram is coarse
		// but never so coarse that one bucket holds a whole spectrum.
		if w := float64(hi - lo + 1); lo >= subCount && w/float64(lo) > 1.0/subCount {
			t.Fatalf("bucket %d: width %v at %d", b, w, lo)
		}
	}
}

// dataset is a named latency multiset, failed samples as FailedLatency.
type dataset struct {
	name string
	ds   []time.Duration
}

func datasets(rng *rand.Rand) []dataset {
	gen := func(name string, n int, f func(i int) time.Duration) dataset {
		ds := make([]time.Duration, n)
		for i := range ds {
			ds[i] = f(i)
		}
		return dataset{name, ds}
	}
	failSome := func(d dataset, every int) dataset {
		ds := slices.Clone(d.ds)
		for i := range ds {
			if rng.IntN(every) == 0 {
				ds[i] = FailedLatency
			}
		}
		return dataset{d.name + " with failures", ds}
	}
	sets := []dataset{
		{"empty", nil},
		{"one", []time.Duration{7}},
		{"one zero", []time.Duration{0}},
		{"one failed", []time.Duration{FailedLatency}},
		{"two", []time.Duration{9, 3}},
		{"two failed", []time.Duration{FailedLatency, FailedLatency}},
		{"a value and a failure", []time.Duration{FailedLatency, 5}},
		gen("all equal", 3000, func(int) time.Duration { return 1234567 }),
		gen("all zero", 500, func(int) time.Duration { return 0 }),
		gen("ties in 10 values", 2000, func(int) time.Duration { return time.Duration(rng.IntN(10)) * 1000003 }),
		gen("one coarse bucket", 2500, func(int) time.Duration { return 1<<20 + time.Duration(rng.IntN(5000)) }),
		gen("two adjacent values", 1500, func(int) time.Duration { return 1<<40 + time.Duration(rng.IntN(2)) }),
		gen("log-normal-ish", 4000, func(int) time.Duration {
			return time.Duration(float64(time.Millisecond) * (0.5 + rng.ExpFloat64()))
		}),
		gen("every octave", 3000, func(int) time.Duration { return time.Duration(rng.Int64() >> rng.IntN(63)) }),
		gen("near FailedLatency", 1000, func(int) time.Duration { return math.MaxInt64 - 1 - time.Duration(rng.IntN(3)) }),
		gen("small exact buckets", 700, func(int) time.Duration { return time.Duration(rng.IntN(200)) }),
	}
	for _, d := range sets[7:] {
		sets = append(sets, failSome(d, 7))
	}
	sets = append(sets, gen("mostly failed", 800, func(int) time.Duration {
		if rng.IntN(10) == 0 {
			return time.Duration(rng.IntN(1000))
		}
		return FailedLatency
	}))
	return sets
}

// scanOf is a re-scannable source over ds that counts its scans.
func scanOf(ds []time.Duration, scans *int) func(yield func(time.Duration) bool) {
	return func(yield func(time.Duration) bool) {
		*scans++
		for _, d := range ds {
			if !yield(d) {
				return
			}
		}
	}
}

// limitsUnderTest: the defaults, and limits small enough that the test
// data take every path (collect, refine in several steps, spans deferred
// to a later scan).
var limitsUnderTest = []selectLimits{
	defaultLimits(),
	{collect: 0, refine: 16, ranges: 16},
	{collect: 5, refine: 3, ranges: 2},
	{collect: 64, refine: 16, ranges: 3},
	{collect: 1, refine: 2, ranges: 64},
}

// The scanned backing answers every question exactly as the sorted one
// does (itself checked against LoadGen's rule in latencies_test.go), for
// every data shape and limit.
func TestScannedMatchesSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 2))
	for _, set := range datasets(rng) {
		want, err := NewLatencies(set.ds)
		if err != nil {
			t.Fatal(err)
		}
		for li, lim := range limitsUnderTest {
			t.Run(fmt.Sprintf("%s/limits%d", set.name, li), func(t *testing.T) {
				scans := 0
				got, err := scannedLatencies(blocksOf(scanOf(set.ds, &scans)), lim)
				if err != nil {
					t.Fatal(err)
				}
				compareLatencies(t, rng, got, want)
				compareLatencies(t, rng, got.Completed(), want.Completed())
			})
		}
	}
}

// blocksOf is LatenciesOf's blocking of a value scan.
func blocksOf(scan func(yield func(time.Duration) bool)) blockScan {
	return func(yield func([]time.Duration) bool) {
		var buf []time.Duration
		for d := range scan {
			if buf = append(buf, d); len(buf) == 7 { // odd on purpose: blocks need not align with anything
				if !yield(buf) {
					return
				}
				buf = buf[:0]
			}
		}
		if len(buf) > 0 {
			yield(buf)
		}
	}
}

func compareLatencies(t *testing.T, rng *rand.Rand, got, want Latencies) {
	t.Helper()
	if got.Len() != want.Len() || got.Failed() != want.Failed() {
		t.Fatalf("Len, Failed = %d, %d, want %d, %d", got.Len(), got.Failed(), want.Len(), want.Failed())
	}
	gs, gerr := got.Summary()
	ws, werr := want.Summary()
	if gs != ws || !errors.Is(gerr, werr) {
		t.Errorf("Summary = %+v (%v), want %+v (%v)", gs, gerr, ws, werr)
	}
	ps := []float64{0, 0.5, 0.9, 0.95, 0.97, 0.99, 0.999, 0.9999, 1, 0.29}
	for range 20 {
		ps = append(ps, rng.Float64())
	}
	rng.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
	gp, gerr := got.Percentiles(ps)
	wp, werr := want.Percentiles(ps)
	if !slices.Equal(gp, wp) || !errors.Is(gerr, werr) {
		t.Errorf("Percentiles(%v) = %v (%v), want %v (%v)", ps, gp, gerr, wp, werr)
	}
	for _, p := range ps[:3] { // one at a time too: the cache answers some
		g, gerr := got.Percentile(p)
		w, werr := want.Percentile(p)
		if g != w || !errors.Is(gerr, werr) {
			t.Errorf("Percentile(%v) = %d (%v), want %d (%v)", p, g, gerr, w, werr)
		}
	}
	ks := rng.Perm(want.Len())
	gv, err := got.SelectEach(ks)
	if err != nil {
		t.Fatal(err)
	}
	wv, _ := want.SelectEach(ks)
	if !slices.Equal(gv, wv) {
		t.Errorf("SelectEach differs")
	}
	if _, err := got.Select(want.Len()); !errors.Is(err, ErrOutOfRange) {
		t.Errorf("Select(Len) error %v", err)
	}
	bounds := []time.Duration{-1, 0, 1, math.MaxInt64, math.MaxInt64 - 1, math.MaxInt64 - 2}
	for _, v := range wv {
		if v < math.MaxInt64 {
			bounds = append(bounds, v, v-1, v+1)
		}
	}
	for range 50 {
		bounds = append(bounds, time.Duration(rng.Int64()>>rng.IntN(63)))
	}
	rng.Shuffle(len(bounds), func(i, j int) { bounds[i], bounds[j] = bounds[j], bounds[i] })
	if g, w := got.CountsAtMost(bounds), want.CountsAtMost(bounds); !slices.Equal(g, w) {
		t.Errorf("CountsAtMost(%v) = %v, want %v", bounds, g, w)
	}
	for _, b := range bounds[:5] {
		if g, w := got.CountOver(b), want.CountOver(b); g != w {
			t.Errorf("CountOver(%d) = %d, want %d", b, g, w)
		}
	}
	for _, p := range []float64{0.5, 0.9, 0.99} {
		f1, _ := NewMinPassingFinder(p, EarlyStoppingConfidence)
		f2, _ := NewMinPassingFinder(p, EarlyStoppingConfidence)
		if g, w := f1.EstimatePercentile(got), f2.EstimatePercentile(want); g != w {
			t.Errorf("EstimatePercentile(%v) = %+v, want %+v", p, g, w)
		}
	}
}

// A large set of equal values, or of values in one coarse bucket, is
// narrowed by counting, never collected whole: a few scans, each bounded.
func TestScannedNarrowsWithoutCollecting(t *testing.T) {
	const n = 200000
	rng := rand.New(rand.NewPCG(1, 2))
	for _, set := range []dataset{
		{"all equal", slices.Repeat([]time.Duration{5 * time.Millisecond}, n)},
		{"one bucket", func() []time.Duration {
			ds := make([]time.Duration, n)
			for i := range ds {
				ds[i] = 1<<30 + time.Duration(rng.IntN(1<<20))
			}
			return ds
		}()},
	} {
		t.Run(set.name, func(t *testing.T) {
			lim := selectLimits{collect: 1000, refine: 256, ranges: 4}
			scans := 0
			l, err := scannedLatencies(blocksOf(scanOf(set.ds, &scans)), lim)
			if err != nil {
				t.Fatal(err)
			}
			ps := []float64{0, 0.5, 0.9, 0.99, 0.999, 1}
			got, err := l.Percentiles(ps)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := NewLatencies(set.ds)
			if w, _ := want.Percentiles(ps); !slices.Equal(got, w) {
				t.Errorf("Percentiles = %v, want %v", got, w)
			}
			// The bucket's 2^23 values wide ("one bucket") narrow by 256
			// a scan: 2^15, 2^7, then collected or single values.
			if scans > 5 {
				t.Errorf("%d scans", scans)
			}
			before := scans
			if _, err := l.Percentiles(ps); err != nil || scans != before {
				t.Errorf("asked again: %d more scans (%v), want the cache's answer", scans-before, err)
			}
		})
	}
}

func TestLatenciesOfErrors(t *testing.T) {
	scans := 0
	if _, err := LatenciesOf(3, scanOf([]time.Duration{1, 2}, &scans)); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("count mismatch: %v", err)
	}
	if _, err := LatenciesOf(2, scanOf([]time.Duration{1, -2}, &scans)); !errors.Is(err, ErrInvalidLatency) {
		t.Errorf("negative: %v", err)
	}
	if _, err := LatenciesOf(-1, scanOf(nil, &scans)); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("negative n: %v", err)
	}
	l, err := LatenciesOf(0, scanOf(nil, &scans))
	if err != nil || l.Len() != 0 {
		t.Fatalf("empty: %v, %d", err, l.Len())
	}
	if _, err := l.Percentile(0.5); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty percentile: %v", err)
	}
}

// A source that yields other values on a later scan gets an error, not a
// panic or a wrong answer passed off as exact.
func TestScannedSourceChanged(t *testing.T) {
	ds := make([]time.Duration, 5000)
	for i := range ds {
		ds[i] = time.Duration(1000 + i%3)
	}
	for li, lim := range limitsUnderTest {
		t.Run(fmt.Sprint(li), func(t *testing.T) {
			scans := 0
			l, err := scannedLatencies(blocksOf(func(yield func(time.Duration) bool) {
				scans++
				for i, d := range ds {
					if scans > 1 && i%2 == 0 {
						d++ // moves values between the ties
					}
					if !yield(d) {
						return
					}
				}
			}), lim)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := l.Percentiles([]float64{0.1, 0.5, 0.9}); !errors.Is(err, errSourceChanged) {
				t.Errorf("err = %v, want errSourceChanged", err)
			}
		})
	}
}

// Views of one source may be read at once (run with -race).
func TestScannedConcurrentReads(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	ds := make([]time.Duration, 20000)
	for i := range ds {
		ds[i] = time.Duration(rng.IntN(1 << 30))
	}
	want, _ := NewLatencies(ds)
	l, err := LatenciesOf(len(ds), func(yield func(time.Duration) bool) {
		for _, d := range ds {
			if !yield(d) {
				return
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			p := float64(g) / 8
			got, err := l.Completed().Percentile(p)
			w, _ := want.Percentile(p)
			if err != nil || got != w {
				errs <- fmt.Errorf("p%v = %d (%v), want %d", p, got, err, w)
			}
			if c, w := l.CountAtMost(time.Duration(g)<<26), want.CountAtMost(time.Duration(g)<<26); c != w {
				errs <- fmt.Errorf("CountAtMost = %d, want %d", c, w)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// The record's Latencies equal NewLatencies of what was recorded, with
// unrecorded samples left out, fixed or growing.
func TestRecordLatenciesMatchSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, growing := range []bool{false, true} {
		n := 3*chunkLen + 17
		var opts []RecordOption
		if growing {
			opts = append(opts, WithGrowth())
		}
		r, err := NewLatencyRecord(n/2, opts...)
		if err != nil {
			t.Fatal(err)
		}
		var ds []time.Duration
		for i := range n {
			if !growing && i >= n/2 {
				break
			}
			switch rng.IntN(10) {
			case 0: // left unrecorded
			case 1:
				if err := r.Fail(i); err != nil {
					t.Fatal(err)
				}
				ds = append(ds, FailedLatency)
			default:
				d := time.Duration(rng.IntN(1 << 24))
				if err := r.Record(i, d); err != nil {
					t.Fatal(err)
				}
				ds = append(ds, d)
			}
		}
		want, _ := NewLatencies(ds)
		compareLatencies(t, rng, r.Latencies(), want)
	}
}
