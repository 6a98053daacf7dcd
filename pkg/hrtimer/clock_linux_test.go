package hrtimer

import (
	"testing"

	"golang.org/x/sys/unix"
)

// The timerfd is armed with absolute CLOCK_MONOTONIC times computed from
// now(): a now() off that clock would fire every timer early or late by the
// difference.
func TestNowIsClockMonotonic(t *testing.T) {
	src, err := newClockSource()
	if err != nil {
		t.Fatal(err)
	}
	defer src.close()
	for range 100 {
		var a, b unix.Timespec
		_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &a)
		n := src.now()
		_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &b)
		// Calibration error is a fraction of one clock read; allow 50 µs
		// for a read interrupted by the scheduler.
		const slack = 50_000
		if n < a.Nano()-slack || n > b.Nano()+slack {
			t.Fatalf("now() = %d, CLOCK_MONOTONIC read %d before and %d after", n, a.Nano(), b.Nano())
		}
	}
}
