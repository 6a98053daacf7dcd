//go:build linux

package rxstamp

import (
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/netloadgen/netloadgen/internal/rawio"
)

// linuxReader reads with recvmsg through the connection's RawConn, so that
// Go's poller still parks the goroutine while nothing is readable and
// deadlines still apply. Its state lives in the struct (a Conn has one
// reader at a time), so a read allocates nothing.
type linuxReader struct {
	c   *Conn
	raw syscall.RawConn
	rcv rawio.Receiver
	p   []byte
	n   int
	err error
	fn  func(fd uintptr) bool // r.recv, bound once
}

func newReader(c *Conn) reader {
	// rawio parses the 64-bit control-message layout only.
	if unix.SizeofCmsghdr != 16 {
		return nil
	}
	raw, err := c.TCPConn.SyscallConn()
	if err != nil {
		return nil
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return nil
	}
	r := &linuxReader{c: c, raw: raw}
	r.fn = r.recv
	return r
}

func (r *linuxReader) read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.p, r.n, r.err = p, 0, nil
	err := r.raw.Read(r.fn)
	r.p = nil // do not keep the caller's buffer reachable
	if err != nil {
		return 0, err
	}
	return r.n, r.err
}

// recv is one recvmsg on the non-blocking socket; false asks the poller to
// wait for readability.
func (r *linuxReader) recv(fd uintptr) bool {
	for {
		n, rx, err := r.rcv.Recv(int(fd), r.p)
		switch err {
		case nil:
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		default:
			r.err = os.NewSyscallError("recvmsg", err)
			return true
		}
		if n == 0 {
			r.err = io.EOF
			return true
		}
		r.n = n
		if rx != 0 {
			r.c.stamp(rx)
		}
		return true
	}
}
