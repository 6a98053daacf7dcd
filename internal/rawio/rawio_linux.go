//go:build linux

package rawio

import (
	"encoding/binary"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// WaitLimit is the longest wait to make raw: the goroutine's P is held that
// long. At 2 ms a peak search against a sutproxy in the same process lost
// one of its two Ps to the loop's sleeps (the model's p99 at 400 QPS went
// from 3.5 to 10.8 ms; a gRPC search found 262.5 QPS for a truth of 842).
const WaitLimit = 300 * time.Microsecond

// Write is write(2) on a non-blocking socket.
func Write(fd int, p []byte) (int, error) {
	r, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// EpollWait is epoll_pwait without a signal mask and without a timeout:
// what is ready now.
func EpollWait(epfd int, events []unix.EpollEvent) (int, error) {
	r, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// EpollBlock is epoll_pwait without a signal mask, blocking until something
// is ready or a signal arrives (EINTR): a raw system call, so the thread
// keeps its P while it waits.
func EpollBlock(epfd int, events []unix.EpollEvent) (int, error) {
	infinite := -1
	r, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), uintptr(infinite), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// SleepUntil sleeps until t on CLOCK_MONOTONIC; EINTR (a signal, such as
// the runtime's preemption) ends it early, which the caller's loop absorbs.
func SleepUntil(t *unix.Timespec) error {
	_, _, e := unix.RawSyscall6(unix.SYS_CLOCK_NANOSLEEP, unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, uintptr(unsafe.Pointer(t)), 0, 0, 0)
	if e != 0 && e != unix.EINTR {
		return e
	}
	return nil
}

// SetTimerSlack sets the calling thread's timer slack in ns
// (prctl PR_SET_TIMERSLACK), raw: the goroutine keeps its P and thread.
func SetTimerSlack(ns uintptr) error {
	_, _, e := unix.RawSyscall6(unix.SYS_PRCTL, unix.PR_SET_TIMERSLACK, ns, 0, 0, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// Receiver holds a recvmsg(2) call's buffers, kept by its loop so reading
// allocates nothing.
type Receiver struct {
	hdr unix.Msghdr
	iov unix.Iovec
	oob [8]uint64 // control messages, 8-byte aligned
}

// Recv reads from fd into buf (len(buf) > 0) and returns the kernel's
// receive timestamp of the data (SO_TIMESTAMPNS, CLOCK_REALTIME ns; 0 when
// the socket gives none).
func (m *Receiver) Recv(fd int, buf []byte) (int, int64, error) {
	m.iov.Base = &buf[0]
	m.iov.SetLen(len(buf))
	m.hdr.Iov = &m.iov
	m.hdr.SetIovlen(1)
	m.hdr.Control = (*byte)(unsafe.Pointer(&m.oob[0]))
	m.hdr.SetControllen(len(m.oob) * 8)
	r, _, e := unix.RawSyscall(unix.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&m.hdr)), 0)
	m.iov.Base = nil // do not keep the caller's buffer reachable
	if e != 0 {
		return 0, 0, e
	}
	oob := unsafe.Slice((*byte)(unsafe.Pointer(&m.oob[0])), len(m.oob)*8)
	return int(r), RxTimestamp(oob[:min(int(m.hdr.Controllen), len(oob))]), nil
}

// RxTimestamp finds SCM_TIMESTAMPNS among control messages (the 64-bit
// layout: an 8-byte length, 64-bit timespec); 0 if absent or malformed.
func RxTimestamp(oob []byte) int64 {
	if unix.SizeofCmsghdr != 16 {
		return 0
	}
	hdr := unix.CmsgLen(0) // the header, padded: where the data starts
	for len(oob) >= hdr {
		n := int(binary.NativeEndian.Uint64(oob[0:8]))
		level := int32(binary.NativeEndian.Uint32(oob[8:12]))
		typ := int32(binary.NativeEndian.Uint32(oob[12:16]))
		if n < hdr || n > len(oob) {
			return 0
		}
		if level == unix.SOL_SOCKET && typ == unix.SCM_TIMESTAMPNS && n >= hdr+16 {
			sec := int64(binary.NativeEndian.Uint64(oob[hdr : hdr+8]))
			nsec := int64(binary.NativeEndian.Uint64(oob[hdr+8 : hdr+16]))
			return sec*1e9 + nsec
		}
		oob = oob[min(unix.CmsgSpace(n-hdr), len(oob)):]
	}
	return 0
}

// Arrival turns a receive timestamp (wall clock) into a time on the
// monotonic clock the engine measures with: now, less the data's age. A
// stamp from the future or over a second old (a wall-clock step) gives now.
// The caller reads now once for every answer a wake-up found (a clock read
// is ~0.1 µs on these VMs): the age is taken against now's own wall clock,
// so a now read a little after the data arrived gives the same time.
func Arrival(rxNs int64, now time.Time) time.Time {
	if rxNs == 0 {
		return now
	}
	age := now.UnixNano() - rxNs
	if age < 0 || age > int64(time.Second) {
		return now
	}
	return now.Add(-time.Duration(age))
}
