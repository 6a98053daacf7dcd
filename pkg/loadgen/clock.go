package loadgen

import (
	"context"
	"runtime"
	"time"

	"github.com/netloadgen/netloadgen/pkg/hrtimer"
)

// Clock is the engine's time source. Durations within a run are differences
// of its readings, so the system clock's monotonic reading is what counts.
// Tests substitute a virtual clock to make latencies exact.
type Clock interface {
	Now() time.Time
	// SleepUntil returns once Now() ≥ t or ctx is done. One goroutine at a
	// time calls it (the issuer).
	SleepUntil(ctx context.Context, t time.Time)
}

// SystemClock is the wall clock with its monotonic reading. SleepUntil
// sleeps on a precise timer (pkg/hrtimer: Go's own timers wake up to a
// millisecond late here) until spin before the due time, then yields
// (runtime.Gosched) until it is due. Spinning costs a core in proportion to
// rate × spin, so the default is no spin at all.
type SystemClock struct {
	spin   time.Duration
	timers *hrtimer.Timers
	timer  *hrtimer.Timer
	wake   chan struct{}
}

// NewSystemClock returns a system clock with the given spin threshold.
// Close it when the run ends.
func NewSystemClock(spin time.Duration) *SystemClock {
	c := &SystemClock{spin: spin, wake: make(chan struct{}, 1)}
	// hrtimer falls back to Go's timers where it has no timerfd.
	c.timers, _ = hrtimer.New()
	c.timer = c.timers.NewTimer(func() {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	})
	return c
}

// Now returns time.Now().
func (c *SystemClock) Now() time.Time { return time.Now() }

// Close stops the clock's timer goroutine.
func (c *SystemClock) Close() error { return c.timers.Close() }

// SleepUntil implements Clock.
func (c *SystemClock) SleepUntil(ctx context.Context, t time.Time) {
	done := ctx.Done()
	for {
		rem := time.Until(t)
		if rem <= 0 {
			return
		}
		if rem > c.spin {
			select { // a wake-up left from an earlier sleep
			case <-c.wake:
			default:
			}
			c.timer.Reset(rem - c.spin)
			select {
			case <-c.wake:
			case <-done:
				c.timer.Stop()
				return
			}
			continue
		}
		select {
		case <-done:
			return
		default:
		}
		runtime.Gosched()
	}
}

// sleepUntil is the issuer's wait for a due time: the clock's sleep, or,
// with a Poller SUT, polling it so completions are delivered meanwhile.
func (is *issuer) sleepUntil(ctx context.Context, t time.Time) {
	if is.poller == nil {
		is.r.clock.SleepUntil(ctx, t)
		return
	}
	done := ctx.Done()
	// time.Until reads only the monotonic clock (t has a monotonic
	// reading); time.Now reads both, twice the cost, once per query.
	for time.Until(t) > 0 && !cancelled(done) {
		if is.quiet != nil {
			is.quiet.PollQuietUntil(ctx, t)
		} else {
			is.poller.PollUntil(ctx, t)
		}
	}
}

// pollerFor is the SUT's Poller when the run may use it: only on the
// system clock, since a Poller waits in real time.
func pollerFor(sut SUT, c Clock) Poller {
	p, ok := sut.(Poller)
	if _, sys := c.(*SystemClock); !ok || !sys {
		return nil
	}
	return p
}
