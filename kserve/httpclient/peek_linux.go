//go:build linux

package httpclient

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// peekByte is a non-blocking recv(MSG_PEEK) of one byte; nil when a byte or
// the end of the stream is there. Raw: unix.Recvfrom would allocate its
// address buffer on each call.
func peekByte(fd uintptr, b *[1]byte) error {
	_, _, e := unix.RawSyscall6(unix.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), 1,
		unix.MSG_PEEK|unix.MSG_DONTWAIT, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
