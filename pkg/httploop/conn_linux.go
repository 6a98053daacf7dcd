//go:build linux

package httploop

import (
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/netloadgen/netloadgen/internal/rawio"

	"github.com/netloadgen/netloadgen/kserve"
)

// Connection states.
const (
	stateClosed = iota
	stateConnecting
	stateIdle
	stateBusy
	stateHandshaking // connected, its TLS handshake under way on a goroutine (tls_linux.go)
)

// conn is one keep-alive connection: at most one request in flight (no
// pipelining, as the servers under test expect).
type conn struct {
	fd    int
	slot  int32
	gen   int32 // tells a stale epoll event of a slot's earlier socket
	state int
	out   bool // EPOLLOUT is registered: a write is partial
	req   pending
	wrote int
	sent  int64 // when the request's first byte was written (loop's clock)
	resp  response
	rxNs  int64 // kernel receive time (CLOCK_REALTIME ns) of the latest bytes read; 0: none
	// A TLS connection's (Config.TLS): nil for plain text.
	tc   *tls.Conn
	sock *tlsSock
}

// wire is what goes on the socket for c's request: the request itself, or
// its TLS record.
func (c *conn) wire() []byte {
	if c.tc != nil {
		return c.sock.out
	}
	return c.req.raw
}

// connEvents are edge-triggered: epoll reports a socket once per arrival,
// where level-triggered it polls every reported socket again at the next
// wait to find it drained (tcp_poll twice an answer: 3–4% of a 50k QPS
// run's CPU, bench/RESULTS.md "Issue 28"). So every reader reads until the
// socket is drained (a short read, EAGAIN or its end), and a read that
// fills the buffer and ends an answer closes the connection: what may
// follow it would never be reported.
const connEvents = unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLET

// dial starts a non-blocking connect on a free slot.
func (l *Loop) dial() error {
	fd, err := l.peer.Connect()
	if err != nil {
		return err
	}
	c := l.freeSlot()
	c.fd, c.state, c.out, c.tc, c.sock = fd, stateConnecting, false, nil, nil
	c.gen++
	if err := l.poll.Ctl(unix.EPOLL_CTL_ADD, fd, connEvents|unix.EPOLLOUT, c.slot, c.gen); err != nil {
		unix.Close(fd)
		c.state = stateClosed
		return err
	}
	l.open++
	l.connecting++
	return nil
}

func (l *Loop) freeSlot() *conn {
	for _, c := range l.slots {
		if c.state == stateClosed {
			return c
		}
	}
	c := &conn{slot: int32(len(l.slots)), fd: -1}
	c.resp.limit, c.resp.budget = l.cfg.MaxResponseBytes, l.budget
	l.slots = append(l.slots, c)
	return c
}

// event handles epoll's report on c.
func (l *Loop) event(c *conn, ev uint32) {
	switch c.state {
	case stateConnecting:
		l.connected(c)
	case stateIdle:
		// An idle connection has nothing to say: the server closed it or
		// sent bytes nobody asked for. Either way it is done, found closed
		// before a request was written on it. (Over TLS, a session ticket
		// or key update is something to say, and is handled.)
		if c.tc != nil && l.idleTLS(c) {
			return
		}
		l.closeConn(c)
		l.refill()
	case stateBusy:
		if c.out && ev&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) != 0 {
			if !l.write(c) {
				return
			}
		}
		if ev&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLERR|unix.EPOLLHUP) != 0 {
			// The server's close came with what is read now: it is not
			// reported again (connEvents).
			hup := ev&(unix.EPOLLRDHUP|unix.EPOLLHUP) != 0
			if c.tc != nil {
				l.readTLS(c, hup)
			} else {
				l.read(c, hup)
			}
		}
	}
}

func (l *Loop) connected(c *conn) {
	soErr, err := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err == nil && soErr != 0 {
		err = unix.Errno(soErr)
	}
	if err == nil && l.cfg.TLS != nil {
		if err = l.handshake(c); err == nil {
			return // handshaken goes on
		}
	}
	if err == nil {
		err = l.poll.Ctl(unix.EPOLL_CTL_MOD, c.fd, connEvents, c.slot, c.gen)
	}
	if err != nil {
		l.closeConn(c)
		l.connErr = fmt.Errorf("connect %s: %w", l.cfg.Addr, err)
		if l.open == 0 {
			l.failQueue(l.connErr)
		}
		return
	}
	l.connecting--
	l.release(c)
	// Dials are capped at maxDialing at once: requests still waiting
	// beyond those may need the next one.
	l.grow()
}

// release hands a free connection the oldest waiting request, or parks it.
func (l *Loop) release(c *conn) {
	if l.queue.Len() > 0 {
		l.start(c, l.queue.PopFront(), l.now())
		return
	}
	c.state = stateIdle
	l.idle = append(l.idle, c)
}

func (l *Loop) start(c *conn, p pending, now int64) {
	c.state, c.req, c.wrote, c.rxNs, c.sent = stateBusy, p, 0, 0, now
	c.resp.reset()
	l.busy++
	if c.tc != nil {
		if err := l.encrypt(c); err != nil {
			l.fail(c, err)
			return
		}
	}
	l.write(c)
}

// write sends what is left of c's request; false if c failed.
func (l *Loop) write(c *conn) bool {
	wire := c.wire()
	for c.wrote < len(wire) {
		n, err := rawio.Write(c.fd, wire[c.wrote:])
		switch {
		case err == nil:
			c.wrote += n
			continue
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN):
			if !c.out {
				if err := l.poll.Ctl(unix.EPOLL_CTL_MOD, c.fd, connEvents|unix.EPOLLOUT, c.slot, c.gen); err != nil {
					l.fail(c, err)
					return false
				}
				c.out = true
			}
			return true
		}
		l.fail(c, err)
		return false
	}
	if c.out {
		c.out = false
		if err := l.poll.Ctl(unix.EPOLL_CTL_MOD, c.fd, connEvents, c.slot, c.gen); err != nil {
			l.fail(c, err)
			return false
		}
	}
	return true
}

// read takes what the socket has and finishes c's request once its answer
// is complete; hup: the server has closed its side (it is read to the end).
func (l *Loop) read(c *conn, hup bool) {
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
		used, done, err := c.resp.feed(l.buf[:n])
		if err != nil {
			l.fail(c, err)
			return
		}
		if done {
			// Bytes after the answer were not asked for: the connection
			// cannot be trusted with the next request. A full read may
			// have left some in the socket, unreported (connEvents), and
			// a closed one is done.
			l.finish(c, used < n || n == len(l.buf) || hup || c.wrote < len(c.req.raw))
			return
		}
		if n < len(l.buf) && !hup {
			return // the socket is drained: wait for the rest
		}
	}
}

// finish reports c's answer and frees or closes c.
func (l *Loop) finish(c *conn, closeIt bool) {
	tag, err := c.req.tag, c.resp.check(l.cfg.Check, c.req.tag)
	at := rawio.Arrival(c.rxNs, l.poll.Seen)
	if c.rxNs == 0 {
		l.unstamped = true
	}
	l.timed(c, at)
	l.busy--
	c.req = pending{}
	if closeIt || c.resp.closeConn {
		l.closeConn(c)
		l.deliverAt(tag, at, err)
		l.refill()
		return
	}
	// The answer is timed first; the next waiting request goes out after.
	l.deliverAt(tag, at, err)
	c.resp.reset() // its JSON was checked: a large buffer goes back to the budget
	if l.closed {
		return
	}
	l.release(c)
}

// timed adds c's answer time (write to arrival) to the loop's estimate of
// how long the server takes when it is not queueing: a running mean that
// follows a shorter answer 16 times faster than a longer one, and rises at
// most twofold per riseWindow. A server that falls behind answers every
// connection later the more connections it has, and a plain mean would
// read that as a need for more of them (measured at 50k QPS: the mean
// reached 6.3 ms, Little's law 599 connections, the pool its cap of 1,024,
// INVALID); a server whose answers take longer for good (a bigger batch,
// a slower model) moves the estimate within a few windows.
func (l *Loop) timed(c *conn, at time.Time) {
	arrived := l.poll.At(at)
	svc := float64(max(arrived-c.sent, 0))
	switch {
	case l.answered == 0:
		l.svc, l.svcCeil, l.riseAt = svc, 2*svc, arrived+riseWindow
	case svc < l.svc:
		l.svc += (svc - l.svc) / 16
	default:
		if arrived >= l.riseAt {
			l.svcCeil, l.riseAt = 2*l.svc, arrived+riseWindow
		}
		l.svc = min(l.svc+(svc-l.svc)/smoothing, l.svcCeil)
	}
	l.answered++
}

// fail ends c after an error on its request. A request none of whose
// bytes was written provably never reached the server (the write failed
// first, on a connection the server had already reset): it goes first in
// the queue once more, for another connection, and is counted (Retries).
// One that was written may have been read, and run, by the server: it
// fails, never sent twice, as kserve.ErrConnectionClosed when the server
// closed or reset the connection before its answer was complete.
func (l *Loop) fail(c *conn, err error) {
	p := c.req
	resend := c.wrote == 0 && !p.retried
	l.busy--
	c.req = pending{}
	l.closeConn(c)
	if resend {
		p.retried = true
		l.retries++
		l.queue.PushFront(p)
	} else {
		l.deliver(p.tag, transportError(err))
	}
	l.refill()
}

// closedBy reports whether err is the server's close or reset of the
// connection.
func closedBy(err error) bool {
	return errors.Is(err, errNoResponse) || errors.Is(err, unix.EPIPE) || errors.Is(err, unix.ECONNRESET) || errors.Is(err, unix.ECONNABORTED)
}

func transportError(err error) error {
	switch {
	case errors.Is(err, kserve.ErrTransport) || errors.Is(err, kserve.ErrMalformed) || errors.Is(err, kserve.ErrTooLarge):
		return err
	case closedBy(err):
		return fmt.Errorf("%w: %w: %w", kserve.ErrTransport, kserve.ErrConnectionClosed, err)
	}
	return fmt.Errorf("%w: %w", kserve.ErrTransport, err)
}

// refill follows the close of a connection. Waiting requests go to idle
// connections, or wait for new ones (grow). And when no idle connection is
// left for the next request, one replaces the closed connection at once,
// within what the load needs (needed): the next request then need not wait
// for a backlog to last and a connect to finish, as it would if the pool
// only grew for backlogs.
func (l *Loop) refill() {
	for l.queue.Len() > 0 && len(l.idle) > 0 && !l.closed {
		n := len(l.idle)
		c := l.idle[n-1]
		l.idle = l.idle[:n-1]
		l.start(c, l.queue.PopFront(), l.now())
	}
	l.grow()
	if l.queue.Len() == 0 && len(l.idle) == 0 && l.connecting == 0 && !l.closed && l.open < min(l.cfg.MaxConns, l.needed()) {
		if err := l.dial(); err != nil {
			l.connErr = err
		}
	}
}

func (l *Loop) closeConn(c *conn) {
	switch c.state {
	case stateClosed:
		return
	case stateConnecting, stateHandshaking:
		l.connecting--
	case stateIdle:
		for i, ic := range l.idle {
			if ic == c {
				l.idle = append(l.idle[:i], l.idle[i+1:]...)
				break
			}
		}
	}
	unix.Close(c.fd) // also leaves the epoll set
	c.fd, c.state, c.out, c.tc, c.sock = -1, stateClosed, false, nil, nil
	// A large JSON buffer goes back to the budget now, not when the slot
	// carries its next request.
	c.resp.reset()
	l.open--
}
