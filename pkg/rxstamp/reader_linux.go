//go:build linux

package rxstamp

import (
	"encoding/binary"
	"io"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// linuxReader reads with recvmsg through the connection's RawConn, so that
// Go's poller still parks the goroutine while nothing is readable and
// deadlines still apply. Its state lives in the struct (a Conn has one
// reader at a time), so a read allocates nothing.
type linuxReader struct {
	c   *Conn
	raw syscall.RawConn
	iov unix.Iovec
	msg unix.Msghdr
	oob [8]uint64 // control buffer, 8-byte aligned for the cmsg headers
	n   int
	err error
	fn  func(fd uintptr) bool // r.recv, bound once
}

func newReader(c *Conn) reader {
	// The cmsg layout parsed below is the 64-bit one (8-byte length field,
	// 64-bit timespec); elsewhere reads stay plain.
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
	r.msg.Iov = &r.iov
	r.msg.SetIovlen(1)
	r.msg.Control = (*byte)(unsafe.Pointer(&r.oob[0]))
	r.fn = r.recv
	return r
}

func (r *linuxReader) read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.iov.Base = &p[0]
	r.iov.SetLen(len(p))
	r.n, r.err = 0, nil
	err := r.raw.Read(r.fn)
	r.iov.Base = nil // do not keep the caller's buffer reachable
	if err != nil {
		return 0, err
	}
	return r.n, r.err
}

// recv is one recvmsg on the non-blocking socket; false asks the poller to
// wait for readability.
func (r *linuxReader) recv(fd uintptr) bool {
	for {
		r.msg.SetControllen(len(r.oob) * 8)
		r.msg.Flags = 0
		n, _, e := unix.Syscall(unix.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&r.msg)), 0)
		switch e {
		case 0:
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		default:
			r.err = os.NewSyscallError("recvmsg", e)
			return true
		}
		if n == 0 {
			r.err = io.EOF
			return true
		}
		r.n = int(n)
		r.parse()
		return true
	}
}

// parse finds SCM_TIMESTAMPNS among the control messages.
func (r *linuxReader) parse() {
	b := unsafe.Slice((*byte)(unsafe.Pointer(&r.oob[0])), len(r.oob)*8)
	b = b[:min(int(r.msg.Controllen), len(b))]
	hdr := unix.CmsgLen(0) // the header, padded: where the data starts
	for len(b) >= hdr {
		l := int(binary.NativeEndian.Uint64(b[0:8]))
		level := int32(binary.NativeEndian.Uint32(b[8:12]))
		typ := int32(binary.NativeEndian.Uint32(b[12:16]))
		if l < hdr || l > len(b) {
			return
		}
		if level == unix.SOL_SOCKET && typ == unix.SCM_TIMESTAMPNS && l >= hdr+16 {
			sec := int64(binary.NativeEndian.Uint64(b[hdr : hdr+8]))
			nsec := int64(binary.NativeEndian.Uint64(b[hdr+8 : hdr+16]))
			r.c.stamp(sec*1e9 + nsec)
		}
		b = b[min(unix.CmsgSpace(l-hdr), len(b)):]
	}
}
