// Package hrtimer runs callbacks at precise times. Go's timers are woken by
// the runtime's poller, whose sleeps are in whole milliseconds: a 4.2 ms
// timer can fire at 5 ms (measured here: a constant-5 ms simulated model
// answered at 4.1 or 5.2 ms, bimodally). On Linux, Timers arms a timerfd on
// CLOCK_MONOTONIC and one goroutine reads it through the poller, so
// callbacks run within tens of microseconds of their deadline without
// spinning; elsewhere it falls back to time.AfterFunc.
//
// The poller is only consulted promptly when a thread is idle: with every P
// busy, Go checks the network every 10 ms at worst, while its own timers are
// checked at each scheduling point. So each deadline is armed on both, and
// whichever wakes first runs the callbacks: the timerfd when the process is
// idle, Go's timer when it is busy.
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
	goTimer *time.Timer // the same deadline on Go's timers
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
		t.goTimer = time.AfterFunc(time.Hour, func() { t.fireDue(false) })
		t.goTimer.Stop()
		started := make(chan struct{})
		go t.loop(started)
		<-started
	}
	return t, nil
}

// AfterFunc calls f on the timer goroutine d from now. f must be short: it
// delays every timer due after it.
func (t *Timers) AfterFunc(d time.Duration, f func()) *Timer {
	if t.clock == nil {
		return &Timer{fallback: time.AfterFunc(d, f), index: -1}
	}
	tm := t.NewTimer(f)
	tm.Reset(d)
	return tm
}

// NewTimer returns a stopped timer that calls f when it fires; Reset arms
// it. Reusing one timer costs no allocation per arming.
func (t *Timers) NewTimer(f func()) *Timer {
	if t.clock == nil {
		ft := time.AfterFunc(time.Hour, f)
		ft.Stop()
		return &Timer{fallback: ft, index: -1}
	}
	return &Timer{t: t, f: f, index: -1}
}

// Reset (re)arms the timer to fire d from now, replacing any pending
// deadline. On a closed Timers the callback runs at once.
func (tm *Timer) Reset(d time.Duration) {
	if tm.fallback != nil {
		tm.fallback.Reset(d)
		return
	}
	t := tm.t
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		tm.f()
		return
	}
	if tm.index >= 0 {
		heap.Remove(&t.pending, tm.index)
	}
	now := t.clock.now()
	tm.when = now + int64(max(d, 0))
	heap.Push(&t.pending, tm)
	if t.armed == 0 || tm.when < t.armed {
		t.arm(tm.when, now)
	}
	t.mu.Unlock()
}

// arm sets both alarms for when; called with mu held.
func (t *Timers) arm(when, now int64) {
	t.armed = when
	t.clock.arm(when)
	t.goTimer.Reset(time.Duration(when - now))
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
	t.goTimer.Stop()
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
	for {
		if err := t.clock.wait(); err != nil {
			return
		}
		t.mu.Lock()
		closed := t.closed
		t.mu.Unlock()
		if closed {
			return
		}
		t.fireDue(true)
	}
}

// fireDue runs the callbacks whose deadline has passed and re-arms for the
// next; the timerfd loop (fromClock) and Go's timer both call it, and a
// callback runs once whichever gets there first. With nothing left pending
// the other alarm is cancelled: its wake-up would find nothing to do and, at
// a low rate, double the process's wake-ups.
func (t *Timers) fireDue(fromClock bool) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	now := t.clock.now()
	var buf [8]*Timer // most wake-ups fire one or two: no allocation
	due := buf[:0]
	for len(t.pending) > 0 && t.pending[0].when <= now {
		due = append(due, heap.Pop(&t.pending).(*Timer))
	}
	switch {
	case len(t.pending) > 0:
		t.arm(t.pending[0].when, now)
	case t.armed != 0:
		t.armed = 0
		if fromClock {
			t.goTimer.Stop()
		} else {
			t.clock.arm(0)
		}
	}
	t.mu.Unlock()
	for _, tm := range due {
		tm.f()
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
