//go:build linux

package httploop

// TLS over the loop's non-blocking sockets. The handshake, a few round
// trips of blocking reads and writes, runs on a goroutine of its own over
// a duplicate of the socket on Go's poller, so that no handshake, before
// the clock or during the run, holds up the issuer; the connection joins
// the loop when it is done (handshaken). After it, crypto/tls runs on the
// loop's goroutine over tlsSock: the loop reads the socket (with its
// receive timestamp) into tlsSock's input and calls tls.Conn.Read, which
// decrypts what is complete and returns errWouldBlock for the rest; a
// request's tls.Conn.Write leaves its record in tlsSock's output, which
// the loop writes to the socket as it writes a plain request.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// wakeKey is the epoll key of the eventfd through which handshake
// goroutines wake the loop; slots' keys are 0 and up.
const wakeKey = -1

// wouldBlock is tlsSock's read error when the loop has no more bytes: a
// net.Error that is Temporary, which crypto/tls returns from Conn.Read
// without making it the connection's lasting error. Go 1.26's
// crypto/tls/conn.go, readRecordOrCCS (lines 626–636 and 676–681), sets
// c.in's error only when `e, ok := err.(net.Error); !ok ||
// !e.Temporary()`; readFromUntil (line 828) keeps in c.rawInput what was
// read before the error (bytes.Buffer.ReadFrom), so the next Read goes on
// where this one stopped. TestTLSReadResumesAfterWouldBlock checks it.
type wouldBlock struct{}

func (wouldBlock) Error() string   { return "httploop: no more TLS input yet" }
func (wouldBlock) Timeout() bool   { return false }
func (wouldBlock) Temporary() bool { return true }

var errWouldBlock net.Error = wouldBlock{}

// tlsSock is the net.Conn under a connection's tls.Conn: during the
// handshake (nc set), the blocking duplicate of the socket; after it, the
// loop's buffers.
//
// After the handshake it gives crypto/tls one record at a time, never the
// start of the next (crypto/tls reads as much as its buffer holds): so
// that what crypto/tls holds after decrypting a record is nothing, and
// bytes left in in after an answer are bytes after it, unasked (decrypt).
// The bytes pass unchanged: a miscount could only cut a read short.
type tlsSock struct {
	nc net.Conn // the handshake's connection; nil once it is done
	// ncMu orders Close, which crypto/tls may call from the context's
	// AfterFunc goroutine as the handshake returns (it does not wait for
	// it), with the handshake's end setting nc to nil.
	ncMu sync.Mutex
	in   []byte // ciphertext the loop read and crypto/tls has not taken (the loop's buffer, during a read)
	out  []byte // ciphertext crypto/tls wrote for the loop to send
	hdr  [recordHeaderLen]byte
	hn   int  // bytes of the current record's header seen
	left int  // bytes of the current record's body not yet given
	full bool // the read being decrypted filled the loop's buffer, or the server closed: the socket may hold more
}

const recordHeaderLen = 5 // type, version, length (RFC 8446 5.1)

func (s *tlsSock) Read(p []byte) (int, error) {
	if s.nc != nil {
		return s.nc.Read(p)
	}
	if len(s.in) == 0 {
		return 0, errWouldBlock
	}
	n := 0
	for n < len(p) && len(s.in) > 0 {
		if s.hn < recordHeaderLen {
			s.hdr[s.hn], p[n] = s.in[0], s.in[0]
			s.hn, n, s.in = s.hn+1, n+1, s.in[1:]
			if s.hn == recordHeaderLen {
				s.left = int(s.hdr[3])<<8 | int(s.hdr[4])
			}
		} else {
			k := copy(p[n:], s.in[:min(len(s.in), s.left)])
			n, s.in, s.left = n+k, s.in[k:], s.left-k
		}
		if s.hn == recordHeaderLen && s.left == 0 {
			s.hn = 0 // the record is whole: the next starts after this read
			break
		}
	}
	return n, nil
}

func (s *tlsSock) Write(p []byte) (int, error) {
	if s.nc != nil {
		return s.nc.Write(p)
	}
	s.out = append(s.out, p...)
	return len(p), nil
}

// Close ends a handshake (HandshakeContext closes on its context's end);
// the loop closes the socket itself.
func (s *tlsSock) Close() error {
	s.ncMu.Lock()
	nc := s.nc
	s.ncMu.Unlock()
	if nc != nil {
		return nc.Close() // a second close of the duplicate is harmless
	}
	return nil
}

func (s *tlsSock) LocalAddr() net.Addr {
	if s.nc != nil {
		return s.nc.LocalAddr()
	}
	return nil
}

func (s *tlsSock) RemoteAddr() net.Addr {
	if s.nc != nil {
		return s.nc.RemoteAddr()
	}
	return nil
}

func (s *tlsSock) SetDeadline(t time.Time) error {
	if s.nc != nil {
		return s.nc.SetDeadline(t)
	}
	return nil
}

func (s *tlsSock) SetReadDeadline(t time.Time) error {
	if s.nc != nil {
		return s.nc.SetReadDeadline(t)
	}
	return nil
}

func (s *tlsSock) SetWriteDeadline(t time.Time) error {
	if s.nc != nil {
		return s.nc.SetWriteDeadline(t)
	}
	return nil
}

// handshakes is where handshake goroutines leave their outcome for the
// loop, and wake it.
type handshakes struct {
	mu     sync.Mutex
	done   []handshakeDone
	efd    int
	closed bool // efd is closed: a late goroutine must not write to its number
	ctx    context.Context
	cancel context.CancelFunc
}

type handshakeDone struct {
	slot, gen int32
	err       error
}

// tlsConfig is cfg for the loop: HTTP/1.1 by ALPN, and no session cache:
// a client that offers no resumption gets no session tickets (as
// kserve/httpclient's), so an idle connection has nothing to read.
// Reconnections are rare (keep-alive), and a full handshake costs them
// little.
func tlsConfig(cfg *tls.Config) *tls.Config {
	c := cfg.Clone()
	c.NextProtos = []string{"http/1.1"}
	c.ClientSessionCache = nil
	return c
}

// openTLS sets up the handshakes' wake-up; a no-op for plain text.
func (l *Loop) openTLS() error {
	if l.cfg.TLS == nil {
		return nil
	}
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return fmt.Errorf("httploop: eventfd: %w", err)
	}
	l.hs = &handshakes{efd: efd}
	l.hs.ctx, l.hs.cancel = context.WithCancel(context.Background())
	if err := l.poll.Ctl(unix.EPOLL_CTL_ADD, efd, unix.EPOLLIN, wakeKey, 0); err != nil {
		l.hs.closed = true
		unix.Close(efd)
		return err
	}
	return nil
}

// closeTLS ends the handshakes under way and closes the wake-up.
func (l *Loop) closeTLS() {
	if l.hs == nil {
		return
	}
	l.hs.cancel()
	l.hs.mu.Lock()
	defer l.hs.mu.Unlock()
	if !l.hs.closed {
		l.hs.closed = true
		unix.Close(l.hs.efd)
	}
}

// handshake starts c's TLS handshake on a goroutine, c out of the epoll
// set (and still counted as connecting) until it is done.
func (l *Loop) handshake(c *conn) error {
	if err := l.poll.Ctl(unix.EPOLL_CTL_DEL, c.fd, 0, c.slot, c.gen); err != nil {
		return err
	}
	nc, err := dupConn(c.fd)
	if err != nil {
		return err
	}
	c.state = stateHandshaking
	c.sock = &tlsSock{nc: nc}
	c.tc = tls.Client(c.sock, l.cfg.TLS)
	go l.runHandshake(c.tc, c.sock, c.slot, c.gen)
	return nil
}

// dupConn is a net.Conn on a duplicate of fd, on Go's poller: closing it
// leaves fd open (and the runtime takes the duplicate out of its epoll set
// before closing it).
func dupConn(fd int) (net.Conn, error) {
	dfd, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("dup: %w", err)
	}
	f := os.NewFile(uintptr(dfd), "httploop-tls")
	defer f.Close()
	return net.FileConn(f)
}

func (l *Loop) runHandshake(tc *tls.Conn, s *tlsSock, slot, gen int32) {
	ctx, cancel := context.WithTimeout(l.hs.ctx, l.cfg.DialTimeout)
	err := tc.HandshakeContext(ctx)
	cancel()
	s.ncMu.Lock()
	nc := s.nc
	s.nc = nil // the loop's from now: it reads s only after the lock below
	s.ncMu.Unlock()
	nc.Close()
	h := l.hs
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.done = append(h.done, handshakeDone{slot, gen, err})
	one := [8]byte{1}
	_, _ = unix.Write(h.efd, one[:])
}

// handshaken takes the handshakes' outcomes: a connection that completed
// one joins the loop; one that failed is closed, its error the loop's
// connection error.
func (l *Loop) handshaken() {
	var b [8]byte
	_, _ = unix.Read(l.hs.efd, b[:])
	l.hs.mu.Lock()
	done := l.hs.done
	l.hs.done = nil
	l.hs.mu.Unlock()
	for _, d := range done {
		c := l.slots[d.slot]
		if c.gen != d.gen || c.state != stateHandshaking {
			continue
		}
		err := d.err
		if err == nil {
			err = l.poll.Ctl(unix.EPOLL_CTL_ADD, c.fd, connEvents, c.slot, c.gen)
		}
		if err != nil {
			l.closeConn(c)
			l.connErr = fmt.Errorf("TLS handshake with %s: %w", l.cfg.Addr, err)
			if l.open == 0 {
				l.failQueue(l.connErr)
			}
			continue
		}
		l.connecting--
		l.release(c)
		l.grow()
	}
}

// handshaking reports whether a TLS handshake is under way.
func (l *Loop) handshaking() bool {
	for _, c := range l.slots {
		if c.state == stateHandshaking {
			return true
		}
	}
	return false
}

// encrypt turns c's request into its TLS record, in c.sock.out.
func (l *Loop) encrypt(c *conn) error {
	c.sock.out = c.sock.out[:0]
	_, err := c.tc.Write(c.req.raw)
	return err
}

// readTLS is read for a TLS connection: what the socket has goes through
// crypto/tls to c's answer.
func (l *Loop) readTLS(c *conn, hup bool) {
	for {
		n, err := l.recv(c)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN):
			return
		case err != nil:
			l.fail(c, err)
			return
		case n == 0:
			l.ended(c)
			return
		}
		sock := c.sock // c's own, even when decrypt closes c
		sock.in, sock.full = l.buf[:n], n == len(l.buf) || hup
		more := l.decrypt(c)
		sock.in, sock.full = nil, false // the loop's buffer, reused by the next read
		if !more || (n < len(l.buf) && !hup) {
			return
		}
	}
}

// ended finishes c's request at the end of its stream (or close_notify).
func (l *Loop) ended(c *conn) {
	if done, err := c.resp.eof(); !done {
		l.fail(c, err)
		return
	}
	l.finish(c, true)
}

// decrypt feeds c's answer with the plaintext of c.sock.in; false when
// c's request has ended (answered or failed). It calls tls.Conn.Read only
// while there is ciphertext to give it: a Read that finds none costs an
// allocation in crypto/tls (readFromUntil's atLeastReader), as does the
// first of each record's: one per answer of one record.
func (l *Loop) decrypt(c *conn) bool {
	for {
		m, err := c.tc.Read(l.plain)
		if m > 0 {
			used, done, ferr := c.resp.feed(l.plain[:m])
			if ferr != nil {
				l.fail(c, ferr)
				return false
			}
			if done {
				// Bytes after the answer were not asked for: the
				// connection cannot be trusted with the next request.
				// (tlsSock gives one record at a time: crypto/tls holds
				// none of them.) A full read may have left some in the
				// socket, unreported (connEvents).
				l.finish(c, used < m || err != nil || len(c.sock.in) > 0 || c.sock.full || c.wrote < len(c.sock.out))
				return false
			}
		}
		switch {
		case err == nil:
			if len(c.sock.in) == 0 {
				return true // a whole record, and nothing after it
			}
		case errors.Is(err, errWouldBlock):
			return true
		case errors.Is(err, io.EOF):
			l.ended(c) // the server's close_notify
			return false
		default:
			l.fail(c, err)
			return false
		}
	}
}

// unasked reports whether c holds anything after an answer: plaintext, an
// alert, an error. A session ticket or key update is handled and is not.
func (l *Loop) unasked(c *conn) bool {
	m, err := c.tc.Read(l.plain)
	return m > 0 || !errors.Is(err, errWouldBlock)
}

// idleTLS handles an event on an idle TLS connection: false if the
// connection is done (closed by the server, or sent something unasked).
func (l *Loop) idleTLS(c *conn) bool {
	for {
		n, err := l.recv(c)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN):
			return true
		case err != nil || n == 0:
			return false
		}
		c.sock.in = l.buf[:n]
		bad := l.unasked(c)
		c.sock.in = nil
		if bad {
			return false
		}
	}
}
