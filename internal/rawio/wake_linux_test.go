//go:build linux

package rawio

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU is the calling thread's CPU time (user and system).
func threadCPU(b *testing.B) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSleepWake is what one wake-up of an event loop costs its
// process: a sleep until a due time 300 µs on (SleepUntil, the loops' short
// wait) and the wake, with nothing else to do, as the thread's CPU time per
// wake-up (cpu-ns/wake; ns/op is the period). Run it pinned to an idle CPU
// (taskset -c 0): the wake-up then comes from idle, as a load generator's
// does. Issue 28 (bench/RESULTS.md): 25–30 µs on the Intel VM measured,
// where a system call (BenchmarkSyscall) is ~0.1 µs, so a query's CPU is set
// by how many queries share a wake-up (runner.IssueSlackFor).
func BenchmarkSleepWake(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const period = 300 * time.Microsecond
	var base unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &base); err != nil {
		b.Fatal(err)
	}
	due := base.Nano()
	c0 := threadCPU(b)
	b.ResetTimer()
	for range b.N {
		due += int64(period)
		ts := unix.NsecToTimespec(due)
		if err := SleepUntil(&ts); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(threadCPU(b)-c0)/float64(b.N), "cpu-ns/wake")
}

// BenchmarkSyscall is a raw system call that does not sleep (prctl
// PR_SET_TIMERSLACK, which the loops' short waits make twice), for
// BenchmarkSleepWake's scale.
func BenchmarkSyscall(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	v, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil || v <= 0 {
		b.Skipf("timer slack unreadable: %d, %v", v, err)
	}
	defer func() { _ = SetTimerSlack(uintptr(v)) }()
	for range b.N {
		if err := SetTimerSlack(uintptr(v)); err != nil {
			b.Fatal(err)
		}
	}
}
