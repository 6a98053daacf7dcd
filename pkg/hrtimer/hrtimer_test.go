package hrtimer

import (
	"sync"
	"testing"
	"time"
)

func TestCallbacksRunInDeadlineOrderAndStopCancels(t *testing.T) {
	ts, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	delays := []time.Duration{3, 1, 2, 5, 4} // ms
	for i, d := range delays {
		wg.Add(1)
		ts.AfterFunc(d*time.Millisecond, func() {
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			wg.Done()
		})
	}
	stopped := ts.AfterFunc(2500*time.Microsecond, func() { t.Error("a stopped timer fired") })
	if !stopped.Stop() {
		t.Error("Stop of a pending timer reported false")
	}
	if stopped.Stop() {
		t.Error("second Stop reported true")
	}
	wg.Wait()
	want := []int{1, 2, 0, 4, 3}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("fired in order %v, want %v", order, want)
		}
	}
}

func TestAnEarlierTimerRearmsTheThread(t *testing.T) {
	ts, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	late := make(chan struct{})
	early := make(chan struct{})
	ts.AfterFunc(time.Hour, func() { close(late) })
	start := time.Now()
	ts.AfterFunc(time.Millisecond, func() { close(early) })
	select {
	case <-early:
	case <-late:
		t.Fatal("the hour timer fired first")
	}
	if time.Since(start) < time.Millisecond {
		t.Error("fired before its deadline")
	}
}

func TestCloseRunsPendingTimersAtOnce(t *testing.T) {
	ts, err := New()
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	ts.AfterFunc(time.Hour, func() { ran++ })
	if err := ts.Close(); err != nil {
		t.Fatal(err)
	}
	if ran != 1 {
		t.Errorf("pending callback ran %d times at Close, want 1", ran)
	}
	if err := ts.Close(); err != nil {
		t.Error("second Close:", err)
	}
	ts.AfterFunc(time.Hour, func() { ran++ })
	if ran != 2 {
		t.Errorf("a timer added after Close ran %d times, want at once", ran-1)
	}
}

// BenchmarkLateness reports how late callbacks run after their deadline,
// next to Go's own timers, in one run (timing claims live in benchmarks):
//
//	go test -run '^$' -bench Lateness ./pkg/hrtimer
func BenchmarkLateness(b *testing.B) {
	measure := func(b *testing.B, after func(time.Duration, func())) {
		var total, worst time.Duration
		for i := 0; i < b.N; i++ {
			d := time.Duration(4200+i%700) * time.Microsecond
			done := make(chan time.Duration, 1)
			start := time.Now()
			after(d, func() { done <- time.Since(start) - d })
			late := <-done
			total += late
			worst = max(worst, late)
		}
		b.ReportMetric(float64(total.Microseconds())/float64(b.N), "µs-late/op")
		b.ReportMetric(float64(worst.Microseconds()), "µs-late-max")
	}
	b.Run("hrtimer", func(b *testing.B) {
		ts, err := New()
		if err != nil {
			b.Fatal(err)
		}
		defer ts.Close()
		measure(b, func(d time.Duration, f func()) { ts.AfterFunc(d, f) })
	})
	b.Run("time.AfterFunc", func(b *testing.B) {
		measure(b, func(d time.Duration, f func()) { time.AfterFunc(d, f) })
	})
}
