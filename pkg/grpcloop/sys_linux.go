//go:build linux

package grpcloop

// The loop's hot syscalls, made raw. Copied from pkg/httploop (unexported
// there), where the reasons are measured: a Go syscall lets sysmon hand the
// goroutine's P to another thread after 20 µs, a futex wake-up and a P to
// win back per call, which at tens of thousands of calls per second cost
// more than the I/O. Reads and writes never block (non-blocking sockets);
// a raw wait is only ever short; a long one parks on Go's poller (wait).

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawWaitLimit is the longest wait made without telling the scheduler: the
// goroutine's P is held that long. At 2 ms a search against a sutproxy in
// the same process found 262.5 QPS for a model whose truth is 842 (its
// handlers and timers kept off one of two Ps), as httploop had.
const rawWaitLimit = 300_000 // ns

func rawWrite(fd int, p []byte) (int, error) {
	r, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// epollWait is epoll_pwait with no signal mask and no timeout, raw.
func epollWait(epfd int, events []unix.EpollEvent) (int, error) {
	r, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
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

// recv reads from fd into buf and returns the kernel's receive timestamp
// of the data (CLOCK_REALTIME ns; 0 if absent).
func (m *rxMsg) recv(fd int, buf []byte) (int, int64, error) {
	m.iov.Base = &buf[0]
	m.iov.SetLen(len(buf))
	m.hdr.Iov = &m.iov
	m.hdr.SetIovlen(1)
	m.hdr.Control = &m.oob[0]
	m.hdr.SetControllen(len(m.oob))
	r, _, e := unix.RawSyscall(unix.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&m.hdr)), 0)
	if e != 0 {
		return 0, 0, e
	}
	return int(r), rxTimestamp(m.oob[:m.hdr.Controllen]), nil
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
