package hrtimer

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// timerfd is a CLOCK_MONOTONIC timerfd read through Go's poller: its expiry
// is the kernel's high-resolution timer, and the poller wakes on it like on a
// packet, so the goroutines a callback readies run on the same thread at once
// (a thread of its own would need a second wake-up, ~0.1 ms on this VM).
type timerfd struct {
	fd   int
	file *os.File
}

func newClockSource() (clockSource, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_CLOEXEC|unix.TFD_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("hrtimer: timerfd_create: %w", err)
	}
	return &timerfd{fd: fd, file: os.NewFile(uintptr(fd), "timerfd")}, nil
}

func (t *timerfd) now() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

func (t *timerfd) arm(when int64) error {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(max(when, 1))}
	return unix.TimerfdSettime(t.fd, unix.TFD_TIMER_ABSTIME, &spec, nil)
}

func (t *timerfd) wait() error {
	var buf [8]byte
	_, err := t.file.Read(buf[:])
	return err
}

func (t *timerfd) close() error { return t.file.Close() }

func prepareThread() {}
