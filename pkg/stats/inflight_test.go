package stats

import (
	"errors"
	"sync"
	"testing"
	"time"
)

// A started sample holds its scheduled time until one completion finishes
// or fails it; every later one is refused, and readers never see it as a
// latency while it is in flight.
func TestInFlightSlots(t *testing.T) {
	r, err := NewLatencyRecord(4, WithBound(5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(0, 1_000_000); err != nil {
		t.Fatal(err)
	}
	if err := r.Start(1, 0); err != nil {
		t.Fatal(err)
	}
	if err := r.Start(2, 7); err != nil {
		t.Fatal(err)
	}
	if err := r.Start(0, 5); !errors.Is(err, ErrAlreadyRecorded) {
		t.Errorf("a second Start: %v, want ErrAlreadyRecorded", err)
	}
	if err := r.Start(3, -1); !errors.Is(err, ErrInvalidLatency) {
		t.Errorf("Start before the run's start: %v, want ErrInvalidLatency", err)
	}
	if s, ok := r.InFlightScheduled(0); !ok || s != 1_000_000 {
		t.Errorf("InFlightScheduled(0) = %d, %v", s, ok)
	}
	if n := r.Missing(); n != 4 {
		t.Errorf("Missing with 3 in flight and 1 unstarted = %d, want 4", n)
	}
	r.Each(0, 4, func(i int, d time.Duration) { t.Errorf("Each saw sample %d (%v) in flight", i, d) })

	if d, ok := r.Finish(0, 7_500_000); !ok || d != 6_500_000 {
		t.Errorf("Finish(0) = %v, %v; want 6.5ms, true", d, ok)
	}
	if _, ok := r.Finish(0, 9_000_000); ok {
		t.Error("a second Finish of sample 0 counted")
	}
	if r.FailInFlight(0) {
		t.Error("FailInFlight of a finished sample counted")
	}
	if d, ok := r.Finish(2, 3); !ok || d != 0 {
		t.Errorf("an answer stamped before its due time: %v, %v; want 0, true", d, ok)
	}
	if !r.FailInFlight(1) || r.FailInFlight(1) {
		t.Error("FailInFlight(1) did not count exactly once")
	}
	if _, ok := r.Finish(3, 10); ok {
		t.Error("Finish of a sample never started counted")
	}
	if r.Over() != 2 || r.Failed() != 1 {
		t.Errorf("Over %d (want 2: 6.5 ms over 5 ms, and the failure), Failed %d (want 1)", r.Over(), r.Failed())
	}
	var got []time.Duration
	r.Each(0, 4, func(_ int, d time.Duration) { got = append(got, d) })
	if len(got) != 3 || got[0] != 6_500_000 || got[1] != FailedLatency || got[2] != 0 {
		t.Errorf("Each = %v", got)
	}
}

// Concurrent completions of the same sample: exactly one wins.
func TestInFlightOneWinner(t *testing.T) {
	const n = 2000
	r, err := NewLatencyRecord(n)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		_ = r.Start(i, int64(i))
	}
	var wins [4][n]bool
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				if g%2 == 0 {
					_, wins[g][i] = r.Finish(i, int64(i)+100)
				} else {
					wins[g][i] = r.FailInFlight(i)
				}
			}
		}()
	}
	wg.Wait()
	for i := range n {
		k := 0
		for g := range 4 {
			if wins[g][i] {
				k++
			}
		}
		if k != 1 {
			t.Fatalf("sample %d: %d winners", i, k)
		}
	}
	if r.Missing() != 0 {
		t.Errorf("%d samples still missing", r.Missing())
	}
}
