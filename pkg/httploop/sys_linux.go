//go:build linux

package httploop

import (
	"time"
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

// rawWaitLimit is the longest wait made without telling the scheduler: the
// goroutine's P is held for that long. At 2 ms a search against a sutproxy
// in the same process saw its model's p99 at 400 QPS go from 3.5 to 10.8 ms
// (its handlers and timers kept off one of two Ps); due times closer than
// this (5k QPS and up) still wait raw.
const rawWaitLimit = 300_000 // ns

// growAfter is how long a request waits for a busy connection before the
// loop opens another (Loop.grow).
const growAfter = 500_000 // ns

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

// rxMsg is a recvmsg(2) call's buffers, kept by the loop so reading
// allocates nothing.
type rxMsg struct {
	hdr unix.Msghdr
	iov unix.Iovec
	oob [64]byte
}

// recv reads into the loop's buffer and notes the kernel's receive
// timestamp of the data in c.rxNs.
func (l *Loop) recv(c *conn) (int, error) {
	m := &l.rx
	m.iov.Base = &l.buf[0]
	m.iov.SetLen(len(l.buf))
	m.hdr.Iov = &m.iov
	m.hdr.SetIovlen(1)
	m.hdr.Control = &m.oob[0]
	m.hdr.SetControllen(len(m.oob))
	r, _, e := unix.RawSyscall(unix.SYS_RECVMSG, uintptr(c.fd), uintptr(unsafe.Pointer(&m.hdr)), 0)
	if e != 0 {
		return 0, e
	}
	if ns := rxTimestamp(m.oob[:m.hdr.Controllen]); ns != 0 {
		c.rxNs = ns
	}
	return int(r), nil
}

// rxTimestamp finds SCM_TIMESTAMPNS in control messages; 0 if absent.
func rxTimestamp(oob []byte) int64 {
	const hdr = unix.SizeofCmsghdr
	for len(oob) >= hdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		n := int(h.Len)
		if n < hdr || n > len(oob) {
			return 0
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS && n >= hdr+int(unsafe.Sizeof(unix.Timespec{})) {
			ts := (*unix.Timespec)(unsafe.Pointer(&oob[hdr]))
			return ts.Nano()
		}
		oob = oob[min(len(oob), (n+7)&^7):]
	}
	return 0
}

// arrival turns a receive timestamp (wall clock) into a time on the
// monotonic clock the engine measures with: now, less the data's age.
func arrival(rxNs int64) time.Time {
	now := time.Now()
	if rxNs == 0 {
		return now
	}
	age := now.UnixNano() - rxNs
	if age < 0 || age > int64(time.Second) {
		return now // a wall clock step: the read time is the better guess
	}
	return now.Add(-time.Duration(age))
}

// clockSleepUntil sleeps until t on CLOCK_MONOTONIC; EINTR (a signal, e.g.
// the runtime's preemption) ends it early, which the caller's loop absorbs.
func clockSleepUntil(t *unix.Timespec) error {
	_, _, e := unix.RawSyscall6(unix.SYS_CLOCK_NANOSLEEP, unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, uintptr(unsafe.Pointer(t)), 0, 0, 0)
	if e != 0 && e != unix.EINTR {
		return e
	}
	return nil
}
