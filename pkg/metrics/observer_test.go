package metrics

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
)

// A scripted sequence of engine events gives exact counters, gauges and
// histogram counts and sums.
func TestObserverCounts(t *testing.T) {
	m, reg := newTest(t)
	o := m.Observer()
	// Query 0: 4 samples, issued 2 ms late, answered in two ranges.
	o.Issued(0, 4, 2*time.Millisecond)
	o.Completed(0, 3, 10*time.Millisecond, nil)
	// Query 1: one sample, on time, still in flight at the first check.
	o.Issued(1, 1, 0)
	check := func(name string, want float64, labels ...string) {
		t.Helper()
		if got := value(t, reg, name, labels...); got != want {
			t.Errorf("%s%v = %v, want %v", name, labels, got, want)
		}
	}
	check("loadgend_queries_issued_total", 2)
	check("loadgend_samples_issued_total", 5)
	check("loadgend_queries_in_flight", 2)
	check("loadgend_samples_in_flight", 2)
	check("loadgend_samples_completed_total", 3)

	o.Completed(0, 1, 12*time.Millisecond, kserve.ErrUnavailable)
	o.QueryDone(0, true)
	o.Completed(1, 1, 500*time.Microsecond, nil)
	o.QueryDone(1, false)
	check("loadgend_queries_in_flight", 0)
	check("loadgend_samples_in_flight", 0)
	check("loadgend_queries_completed_total", 1)
	check("loadgend_queries_failed_total", 1)
	check("loadgend_samples_completed_total", 4)
	check("loadgend_samples_failed_total", 1, "outcome", "error")
	check("loadgend_samples_failed_total", 0, "outcome", "timeout")

	lat := hist(t, reg, "loadgend_sample_latency_seconds")
	if lat.GetSampleCount() != 4 || math.Abs(lat.GetSampleSum()-(3*0.010+0.0005)) > 1e-12 {
		t.Errorf("latency count %d sum %v, want 4 and 0.0305", lat.GetSampleCount(), lat.GetSampleSum())
	}
	late := hist(t, reg, "loadgend_issue_lateness_seconds")
	if late.GetSampleCount() != 2 || math.Abs(late.GetSampleSum()-0.002) > 1e-12 {
		t.Errorf("lateness count %d sum %v, want 2 and 0.002", late.GetSampleCount(), late.GetSampleSum())
	}
}

// Both histograms carry classic buckets (cumulative, upper bound inclusive)
// and a native histogram at schema 4, whose bucket i holds values in
// (2^((i-1)/16), 2^(i/16)]: the Prometheus exposition's definition.
func TestHistogramsNativeAndClassic(t *testing.T) {
	m, reg := newTest(t)
	o := m.Observer()
	// 5 samples at 1 ms, 1 below the first bucket, 1 above the last.
	o.Issued(0, 7, 0)
	o.Completed(0, 5, time.Millisecond, nil)
	o.Completed(0, 1, 50*time.Microsecond, nil)
	o.Completed(0, 1, 70*time.Second, nil)
	o.Issued(1, 1, 3*time.Millisecond)

	cases := []struct {
		name      string
		first     float64
		count     uint64
		cumAt     map[float64]uint64 // upper bound → cumulative count
		zeroCount uint64
		native    map[int32]int64 // native bucket index → count
	}{
		{name: "loadgend_sample_latency_seconds", first: 100e-6, count: 7,
			cumAt: map[float64]uint64{100e-6: 1, 1e-3: 6, 60: 6},
			// log2(0.001)·16 = -159.45, log2(50e-6)·16 = -228.5, log2(70)·16 = 98.07
			native: map[int32]int64{-159: 5, -228: 1, 99: 1}},
		{name: "loadgend_issue_lateness_seconds", first: 10e-6, count: 2,
			cumAt: map[float64]uint64{10e-6: 1, 2.5e-3: 1, 5e-3: 2},
			// 0 goes to the zero bucket; log2(0.003)·16 = -134.1
			zeroCount: 1, native: map[int32]int64{-134: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := hist(t, reg, c.name)
			if h.GetSampleCount() != c.count {
				t.Fatalf("count %d, want %d", h.GetSampleCount(), c.count)
			}
			b := h.GetBucket()
			if len(b) == 0 || b[0].GetUpperBound() != c.first || b[len(b)-1].GetUpperBound() != 60 {
				t.Fatalf("classic buckets %v, want %v … 60", b, c.first)
			}
			for _, bk := range b {
				if want, ok := c.cumAt[bk.GetUpperBound()]; ok && bk.GetCumulativeCount() != want {
					t.Errorf("le=%v: %d, want %d", bk.GetUpperBound(), bk.GetCumulativeCount(), want)
				}
			}
			if h.Schema == nil || h.GetSchema() != 4 {
				t.Fatalf("native schema %v, want 4 (factor 1.05)", h.Schema)
			}
			if h.GetZeroCount() != c.zeroCount || len(h.GetNegativeSpan()) != 0 {
				t.Errorf("zero count %d, negative spans %v", h.GetZeroCount(), h.GetNegativeSpan())
			}
			got := map[int32]int64{}
			idx, cnt, d := int32(0), int64(0), 0
			for _, s := range h.GetPositiveSpan() {
				idx += s.GetOffset()
				for range s.GetLength() {
					cnt += h.GetPositiveDelta()[d]
					d++
					if cnt != 0 {
						got[idx] = cnt
					}
					idx++
				}
			}
			if len(got) != len(c.native) {
				t.Errorf("native buckets %v, want %v", got, c.native)
			}
			for i, n := range c.native {
				if got[i] != n {
					t.Errorf("native bucket %d: %d, want %d (all: %v)", i, got[i], n, got)
				}
			}
		})
	}
}

// Many goroutines issuing and completing at once lose nothing.
func TestObserverConcurrent(t *testing.T) {
	m, reg := newTest(t)
	o := m.Observer()
	const workers, queries, spq = 8, 500, 3
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range queries {
				q := w*queries + i
				o.Issued(q, spq, time.Duration(i)*time.Microsecond)
				o.Completed(q, 2, time.Duration(i+1)*time.Microsecond, nil)
				var err error
				if i%5 == 0 {
					err = kserve.ErrTransport
				}
				o.Completed(q, 1, time.Millisecond, err)
				o.QueryDone(q, err != nil)
			}
		})
	}
	// Scrapes race with the writers, as Prometheus does with a run.
	for range 20 {
		if _, err := reg.Gather(); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	failedQ := workers * queries / 5
	want := map[string]float64{
		"loadgend_queries_issued_total":    workers * queries,
		"loadgend_samples_issued_total":    workers * queries * spq,
		"loadgend_queries_failed_total":    float64(failedQ),
		"loadgend_queries_completed_total": float64(workers*queries - failedQ),
		"loadgend_samples_completed_total": float64(workers*queries*spq - failedQ),
		"loadgend_queries_in_flight":       0,
		"loadgend_samples_in_flight":       0,
	}
	for name, v := range want {
		if got := value(t, reg, name); got != v {
			t.Errorf("%s = %v, want %v", name, got, v)
		}
	}
	if got := value(t, reg, "loadgend_samples_failed_total", "outcome", "transport"); got != float64(failedQ) {
		t.Errorf("transport failures %v, want %d", got, failedQ)
	}
	if h := hist(t, reg, "loadgend_sample_latency_seconds"); h.GetSampleCount() != uint64(workers*queries*spq-failedQ) {
		t.Errorf("latency count %d", h.GetSampleCount())
	}
}

// A run's resends add up on loadgend_requests_resent_total, which exists,
// at 0, before any.
func TestResendsAreCounted(t *testing.T) {
	m, reg := newTest(t)
	if got := value(t, reg, "loadgend_requests_resent_total"); got != 0 {
		t.Fatalf("resent %v before any run", got)
	}
	o, ok := m.Observer().(loadgen.ResendObserver)
	if !ok {
		t.Fatal("the observer does not take resends (loadgen.ResendObserver)")
	}
	o.Resent(3)
	o.Resent(0)
	o.Resent(2)
	if got := value(t, reg, "loadgend_requests_resent_total"); got != 5 {
		t.Errorf("resent %v, want 5", got)
	}
}
