package loadgen

import (
	"context"
	"runtime"
	"time"
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
// sleeps on a timer until spin before the due time, then yields
// (runtime.Gosched) until it is due: Go timers wake tens of µs late, and
// spinning the whole gap would burn a core at low rates.
type SystemClock struct {
	spin  time.Duration
	timer *time.Timer
}

// NewSystemClock returns a system clock with the given spin threshold.
func NewSystemClock(spin time.Duration) *SystemClock {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &SystemClock{spin: spin, timer: t}
}

// Now returns time.Now().
func (c *SystemClock) Now() time.Time { return time.Now() }

// SleepUntil implements Clock.
func (c *SystemClock) SleepUntil(ctx context.Context, t time.Time) {
	done := ctx.Done()
	for {
		rem := time.Until(t)
		if rem <= 0 {
			return
		}
		if rem > c.spin {
			c.timer.Reset(rem - c.spin)
			select {
			case <-c.timer.C:
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
