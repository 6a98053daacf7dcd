package sim

import (
	"time"

	"github.com/netloadgen/netloadgen/pkg/hrtimer"
)

// clock is the engine's source of time and timers; tests replace it with a
// fake one so that queueing is asserted on exact instants, not wall time.
type clock interface {
	Now() time.Time
	// AfterFunc calls f once, d from now, on some goroutine.
	AfterFunc(d time.Duration, f func()) stopper
}

type stopper interface{ Stop() bool }

// realClock's timers are precise (pkg/hrtimer): Go's own fire up to a
// millisecond late, which would make a constant 5 ms model answer in 4-6 ms.
type realClock struct{ timers *hrtimer.Timers }

func (realClock) Now() time.Time { return time.Now() }

func (c realClock) AfterFunc(d time.Duration, f func()) stopper {
	if c.timers == nil {
		return time.AfterFunc(d, f)
	}
	return c.timers.AfterFunc(d, f)
}
