package sim

import "time"

// clock is the engine's source of time and timers; tests replace it with a
// fake one so that queueing is asserted on exact instants, not wall time.
type clock interface {
	Now() time.Time
	// AfterFunc calls f once, d from now, on some goroutine.
	AfterFunc(d time.Duration, f func()) stopper
}

type stopper interface{ Stop() bool }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) stopper { return time.AfterFunc(d, f) }
