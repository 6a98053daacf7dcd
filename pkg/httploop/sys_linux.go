//go:build linux

package httploop

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The loop's hot syscalls, made raw. A Go syscall (unix.Read, EpollWait)
// tells the scheduler the thread may block; after 20 µs in it, sysmon hands
// the goroutine's P to another thread (a futex wake-up, and a thread that
// spins and sleeps again), and the goroutine must win a P back when the
// call returns. At tens of thousands of waits per second that hand-off
// cost more than the I/O itself (measured: ~6.5 futex calls per request).
// Reads and writes here never block (non-blocking sockets); a raw wait is
// used only when it is short, so other goroutines are held off for at most
// that long, and sysmon's preemption signal (which ends the wait with
// EINTR) bounds it anyway. A longer wait parks on Go's poller instead
// (Loop.wait).

// rawWaitLimit is the longest wait made without telling the scheduler.
const rawWaitLimit = 2_000_000 // ns

func rawRead(fd int, p []byte) (int, error) {
	r, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

func rawWrite(fd int, p []byte) (int, error) {
	r, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// epollWait is epoll_pwait with no signal mask; raw unless it may block
// long.
func epollWait(epfd int, events []unix.EpollEvent, msec int, raw bool) (int, error) {
	var r uintptr
	var e unix.Errno
	if raw {
		r, _, e = unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), uintptr(msec), 0, 0)
	} else {
		r, _, e = unix.Syscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), uintptr(msec), 0, 0)
	}
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}
