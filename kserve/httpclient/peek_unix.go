//go:build unix

package httpclient

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// idleProbe looks at an idle connection's socket without reading from it
// or blocking: whether the server closed or reset it, or wrote to it
// unasked, while it sat in the pool. Its state lives in the struct, bound
// once, so a look allocates nothing.
type idleProbe struct {
	raw  syscall.RawConn
	dead bool
	b    [1]byte
	fn   func(fd uintptr) bool
}

func newIdleProbe(tc *net.TCPConn) *idleProbe {
	raw, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	p := &idleProbe{raw: raw}
	p.fn = p.peek
	return p
}

// closed reports whether the connection can no longer carry a request: a
// non-blocking MSG_PEEK finds the end of the stream, an error, or bytes
// nobody asked for. A nil probe knows nothing and says no.
func (p *idleProbe) closed() bool {
	if p == nil {
		return false
	}
	p.dead = false
	if err := p.raw.Read(p.fn); err != nil {
		return true
	}
	return p.dead
}

func (p *idleProbe) peek(fd uintptr) bool {
	for {
		err := peekByte(fd, &p.b)
		if err == unix.EINTR {
			continue
		}
		// EAGAIN: nothing to read, alive and quiet. Anything else is the
		// end of the stream (0 bytes), bytes nobody asked for, or an error.
		p.dead = err != unix.EAGAIN
		return true // never wait
	}
}
