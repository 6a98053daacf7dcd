//go:build linux

package testtool

import (
	"net"

	"golang.org/x/sys/unix"

	"github.com/netloadgen/netloadgen/internal/rawio"
)

// RxTimestampsOn makes sure the kernel stamps received packets before a
// test binary's tests run, and keeps it so until stop is called. Linux turns
// receive timestamps on for the whole stack when the first socket asks for
// them (and off when the last one closes), in deferred work: until that work
// has run, packets carry no stamp, and a test of arrival times that sends
// the first packets of the process can see none. Call it from TestMain.
func RxTimestampsOn() (stop func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return func() {}
	}
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		ln.Close()
		return func() {}
	}
	s, err := ln.Accept()
	ln.Close()
	if err != nil {
		c.Close()
		return func() {}
	}
	stop = func() { c.Close(); s.Close() }
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		return stop
	}
	var fd int
	raw.Control(func(f uintptr) {
		fd = int(f)
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	})
	var r rawio.Receiver
	buf := make([]byte, 8)
	for range 100_000 {
		if _, err := s.Write([]byte("w")); err != nil {
			return stop
		}
		n, rx, err := r.Recv(fd, buf)
		for err == unix.EAGAIN {
			n, rx, err = r.Recv(fd, buf)
		}
		if err != nil || n == 0 || rx != 0 {
			return stop
		}
	}
	return stop
}
