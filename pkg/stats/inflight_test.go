package stats

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
)

// A sample's slot carries it from issue to completion: Start keeps the
// scheduled time, Finish turns it into the latency, once.
func TestStartFinish(t *testing.T) {
	r, err := NewLatencyRecord(6, WithBound(100))
	if err != nil {
		t.Fatal(err)
	}
	for i, sched := range []int64{1000, 0, 5000, 7, math.MaxInt64 - 2} {
		if err := r.Start(i, sched); err != nil {
			t.Fatalf("Start(%d, %d): %v", i, sched, err)
		}
	}
	if s, ok := r.InFlightScheduled(2); !ok || s != 5000 {
		t.Errorf("InFlightScheduled(2) = %d, %v", s, ok)
	}
	if s, ok := r.InFlightScheduled(4); !ok || s != math.MaxInt64-2 {
		t.Errorf("InFlightScheduled(4) = %d, %v", s, ok)
	}
	steps := []struct {
		i      int
		at     int64
		want   time.Duration
		wantOK bool
	}{
		{0, 1250, 250, true},
		{0, 2000, 0, false},          // finished already
		{1, 0, 0, true},              // at its schedule
		{2, 4000, 0, true},           // early (a clock step): clamped to 0
		{3, math.MinInt64, 0, true},  // no overflow below
		{5, 10, 0, false},            // never started
		{6, 10, 0, false},            // out of range
		{-1, 10, 0, false},           // negative
		{4, math.MaxInt64, 2, true},  // no overflow above
		{4, math.MaxInt64, 0, false}, // again
	}
	for _, s := range steps {
		d, ok := r.Finish(s.i, s.at)
		if d != s.want || ok != s.wantOK {
			t.Errorf("Finish(%d, %d) = %d, %v, want %d, %v", s.i, s.at, d, ok, s.want, s.wantOK)
		}
	}
	if _, ok := r.InFlightScheduled(0); ok {
		t.Error("a finished sample is still in flight")
	}
	if r.Over() != 1 { // 250 > 100
		t.Errorf("Over = %d, want 1", r.Over())
	}
	if err := r.Start(0, 5); !errors.Is(err, ErrAlreadyRecorded) {
		t.Errorf("Start of a finished sample: %v", err)
	}
	if err := r.Start(5, -1); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Start at −1: %v", err)
	}
	if err := r.Start(5, math.MaxInt64-1); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Start beyond the slot's range: %v", err)
	}
	if err := r.Start(6, 0); !errors.Is(err, ErrOutOfRange) {
		t.Errorf("Start out of range: %v", err)
	}
	want, _ := NewLatencies([]time.Duration{250, 0, 0, 0, 2})
	compareLatencies(t, rand.New(rand.NewPCG(1, 1)), r.Latencies(), want)
}

// FailInFlight fails an in-flight sample only; the record's readers see an
// in-flight sample as not recorded.
func TestInFlightReaders(t *testing.T) {
	r, err := NewLatencyRecord(4, WithGrowth())
	if err != nil {
		t.Fatal(err)
	}
	if r.FailInFlight(0) {
		t.Error("FailInFlight of a sample never started")
	}
	for i := range 3 {
		if err := r.Start(i, 100); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Start(chunkLen+7, 100); err != nil { // grows; stays in flight
		t.Fatal(err)
	}
	if !r.FailInFlight(1) || r.FailInFlight(1) {
		t.Error("FailInFlight: want once true, then false")
	}
	if _, ok := r.Finish(1, 500); ok {
		t.Error("Finish of a failed sample")
	}
	if d, ok := r.Finish(0, 130); !ok || d != 30 {
		t.Errorf("Finish(0) = %d, %v", d, ok)
	}
	if r.FailInFlight(0) {
		t.Error("FailInFlight of a finished sample")
	}
	if _, ok := r.Finish(chunkLen*5, 1); ok {
		t.Error("Finish beyond a growing record's chunks")
	}
	// 0 finished, 1 failed, 2 and chunkLen+7 in flight, 3 never started.
	if r.Len() != 4 || r.Missing() != 2 || r.Failed() != 1 {
		t.Errorf("Len %d Missing %d Failed %d, want 4, 2, 1", r.Len(), r.Missing(), r.Failed())
	}
	var seen []int
	r.Each(0, r.Len(), func(i int, _ time.Duration) { seen = append(seen, i) })
	if !slices.Equal(seen, []int{0, 1}) {
		t.Errorf("Each saw %v", seen)
	}
	h, err := r.Histogram(0, r.Len())
	if err != nil || h.TotalCount() != 1 {
		t.Errorf("Histogram: %d values, %v", h.TotalCount(), err)
	}
	l := r.Latencies()
	if l.Len() != 2 || l.Failed() != 1 {
		t.Errorf("Latencies: %d, %d failed", l.Len(), l.Failed())
	}
}

// Of a Finish and a FailInFlight racing for each sample (an answer and a
// timeout), exactly one wins. Run with -race.
func TestFinishRacesFail(t *testing.T) {
	const n = 20000
	r, err := NewLatencyRecord(n)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := r.Start(i, int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	var finished, failed [n]bool
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range n {
			_, finished[i] = r.Finish(i, int64(i)+5)
		}
	})
	wg.Go(func() {
		for i := n - 1; i >= 0; i-- {
			failed[i] = r.FailInFlight(i)
		}
	})
	wg.Wait()
	nFailed := 0
	for i := range n {
		if finished[i] == failed[i] {
			t.Fatalf("sample %d: finished %v, failed %v", i, finished[i], failed[i])
		}
		if failed[i] {
			nFailed++
		}
	}
	if l := r.Latencies(); l.Len() != n || l.Failed() != nFailed || int(r.Failed()) != nFailed {
		t.Errorf("Len %d Failed %d (record %d), want %d, %d", l.Len(), l.Failed(), r.Failed(), n, nFailed)
	}
}
