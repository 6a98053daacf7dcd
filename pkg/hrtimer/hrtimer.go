// Package hrtimer runs callbacks at precise times. Go's timers are woken by
// the runtime's poller, whose sleeps are in whole milliseconds: a 4.2 ms
// timer can fire at 5 ms (measured here: a constant-5 ms simulated model
// answered at 4.1 or 5.2 ms, bimodally). On Linux, Timers arms a timerfd on
// CLOCK_MONOTONIC and one goroutine reads it through the poller, so
// callbacks run within tens of microseconds of their deadline without
// spinning; elsewhere it falls back to time.AfterFunc.
package hrtimer

import (
	"container/heap"
	"sync"
	"time"
)

// Timer is one pending callback.
type Timer struct {
	t     *Timers
	when  int64 // ns on the Timers' clock
	f     func()
	index int // in the heap; -1 once fired or stopped
	// fallback is set when the platform has no precise timers.
	fallback *time.Timer
}

// Stop cancels the timer; it reports whether the callback was still pending.
func (tm *Timer) Stop() bool {
	if tm.fallback != nil {
		return tm.fallback.Stop()
	}
	t := tm.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if tm.index < 0 {
		return false
	}
	heap.Remove(&t.pending, tm.index)
	return true
}

// Timers is a set of precise timers served by one thread.
type Timers struct {
	mu      sync.Mutex
	pending timerHeap
	armed   int64 // deadline the clock is armed for; 0 = not armed
	closed  bool
	clock   clockSource
	done    chan struct{}
}

// clockSource is the platform's precise clock and alarm.
type clockSource interface {
	now() int64
	// arm makes wait return at the absolute time when (0: disarm).
	arm(when int64) error
	// wait blocks until the alarm fires or close interrupts it.
	wait() error
	close() error
}

// New starts a timer thread. On platforms without precise timers it returns
// a Timers that delegates to time.AfterFunc.
func New() (*Timers, error) {
	src, err := newClockSource()
	if err != nil {
		return nil, err
	}
	t := &Timers{clock: src, done: make(chan struct{})}
	if src != nil {
		started := make(chan struct{})
		go t.loop(started)
		<-started
	}
	return t, nil
}

// AfterFunc calls f on the timer thread d from now. f must be short: it
// delays every timer due after it.
func (t *Timers) AfterFunc(d time.Duration, f func()) *Timer {
	if t.clock == nil {
		return &Timer{fallback: time.AfterFunc(d, f), index: -1}
	}
	tm := &Timer{t: t, f: f}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		t.mu.Unlock()
		tm.index = -1
		f()
		t.mu.Lock()
		return tm
	}
	tm.when = t.clock.now() + int64(max(d, 0))
	heap.Push(&t.pending, tm)
	if t.armed == 0 || tm.when < t.armed {
		t.armed = tm.when
		t.clock.arm(tm.when)
	}
	return tm
}

// Close stops the timer thread. Callbacks still pending run at once, early,
// so that nothing waiting on them is stranded; timers added after Close run
// at once too.
func (t *Timers) Close() error {
	if t.clock == nil {
		return nil
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	pending := t.pending
	t.pending = nil
	t.clock.arm(t.clock.now()) // wake the thread so it sees closed
	t.mu.Unlock()
	<-t.done
	for len(pending) > 0 {
		heap.Pop(&pending).(*Timer).f()
	}
	return t.clock.close()
}

func (t *Timers) loop(started chan<- struct{}) {
	defer close(t.done)
	prepareThread()
	close(started)
	var due []*Timer
	for {
		if err := t.clock.wait(); err != nil {
			return
		}
		t.mu.Lock()
		if t.closed {
			t.mu.Unlock()
			return
		}
		now := t.clock.now()
		due = due[:0]
		for len(t.pending) > 0 && t.pending[0].when <= now {
			due = append(due, heap.Pop(&t.pending).(*Timer))
		}
		t.armed = 0
		if len(t.pending) > 0 {
			t.armed = t.pending[0].when
			t.clock.arm(t.armed)
		}
		t.mu.Unlock()
		for _, tm := range due {
			tm.f()
		}
		clear(due)
	}
}

type timerHeap []*Timer

func (h timerHeap) Len() int           { return len(h) }
func (h timerHeap) Less(i, j int) bool { return h[i].when < h[j].when }
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *timerHeap) Push(x any) {
	tm := x.(*Timer)
	tm.index = len(*h)
	*h = append(*h, tm)
}
func (h *timerHeap) Pop() any {
	old := *h
	tm := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	tm.index = -1
	return tm
}
