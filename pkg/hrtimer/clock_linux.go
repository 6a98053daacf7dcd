package hrtimer

import (
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// timerfd is a CLOCK_MONOTONIC timerfd read through Go's poller: its expiry
// is the kernel's high-resolution timer, and the poller wakes on it like on a
// packet, so the goroutines a callback readies run on the same thread at once
// (a thread of its own would need a second wake-up, ~0.1 ms on this VM).
type timerfd struct {
	fd   int
	file *os.File
	// CLOCK_MONOTONIC at base: now() adds Go's monotonic time since base,
	// which is the same clock read through the vDSO (x/sys/unix's
	// ClockGettime is a real system call: three per query at a low rate).
	baseNs int64
	base   time.Time
}

func newClockSource() (clockSource, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_CLOEXEC|unix.TFD_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("hrtimer: timerfd_create: %w", err)
	}
	t := &timerfd{fd: fd, file: os.NewFile(uintptr(fd), "timerfd")}
	t.calibrate()
	return t, nil
}

// calibrate pairs a CLOCK_MONOTONIC reading with Go's monotonic clock,
// keeping the tightest of a few pairs (a pair split by a preemption would
// shift every deadline by the preemption).
func (t *timerfd) calibrate() {
	best := time.Duration(1<<63 - 1)
	for range 5 {
		var ts unix.Timespec
		before := time.Now()
		_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
		after := time.Now()
		if d := after.Sub(before); d < best {
			best = d
			t.base = before.Add(d / 2)
			t.baseNs = ts.Nano()
		}
	}
}

func (t *timerfd) now() int64 { return t.baseNs + int64(time.Since(t.base)) }

func (t *timerfd) arm(when int64) error {
	// when 0 disarms; an absolute time of 0 would fire at once instead.
	var spec unix.ItimerSpec
	if when != 0 {
		spec.Value = unix.NsecToTimespec(max(when, 1))
	}
	return unix.TimerfdSettime(t.fd, unix.TFD_TIMER_ABSTIME, &spec, nil)
}

func (t *timerfd) wait() error {
	var buf [8]byte
	_, err := t.file.Read(buf[:])
	return err
}

func (t *timerfd) close() error { return t.file.Close() }

func prepareThread() {}
