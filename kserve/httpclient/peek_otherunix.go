//go:build unix && !linux

package httpclient

import "golang.org/x/sys/unix"

// peekByte is a non-blocking recv(MSG_PEEK) of one byte; nil when a byte or
// the end of the stream is there.
func peekByte(fd uintptr, b *[1]byte) error {
	_, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
	return err
}
