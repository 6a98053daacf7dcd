//go:build linux

package grpcloop

import (
	"errors"
	"fmt"

	"golang.org/x/net/http2/hpack"
	"golang.org/x/sys/unix"

	"github.com/netloadgen/netloadgen/internal/rawio"

	"github.com/netloadgen/netloadgen/kserve"
)

// Connection states.
const (
	stateClosed     = iota
	stateConnecting // TCP connect in progress
	stateHandshake  // preface sent; the server's SETTINGS not yet seen
	stateReady
)

// maxStreamID is the last client stream id (odd, below 2^31).
const maxStreamID = 1<<31 - 1

// conn is one HTTP/2 connection and its open streams.
type conn struct {
	fd    int
	slot  int32
	gen   int32 // tells a stale epoll event of a slot's earlier socket
	state int

	out     []byte // frames not yet written, from outOff
	outOff  int
	flushes uint32 // how many times out was emptied: which content it holds
	wantOut bool   // EPOLLOUT is registered: the socket was full
	dirty   bool   // in the loop's list of connections to flush
	lazy    bool   // holds a PING ACK that waits for a call (in the loop's list)
	carry   []byte // a frame cut by the end of the last read

	dec     *hpack.Decoder // the server's header blocks: its dynamic table lives here
	emit    func(hpack.HeaderField)
	hdr     *stream // the stream whose header block is being decoded, if still open
	hdrID   uint32  // that block's stream; 0: no block in progress
	hdrEnd  bool    // the block ends its stream
	hdrTrls bool    // the block is the stream's trailers
	hdrSize int     // bytes of the block so far

	nextID     uint32
	streams    streamTable
	blocked    []*stream // waiting for a send window, in order
	spare      []*stream
	maxStreams int   // the server's MAX_CONCURRENT_STREAMS
	peerWin    int64 // the server's INITIAL_WINDOW_SIZE: a new stream's send window
	maxFrame   int   // the server's MAX_FRAME_SIZE
	sendWin    int64 // the connection's send window
	recvTaken  int64 // DATA bytes taken since our last connection WINDOW_UPDATE
	draining   bool  // GOAWAY seen or ids used up: no new streams
	rxNs       int64 // kernel receive time of the latest bytes read

	// Our HPACK encoder's state (Request, appendHeaders): the lit block of
	// the fields the server's table holds, if any; whether the table may
	// no longer be used; whether a size update to 0 is due.
	primed   []byte
	noPrime  bool
	cutTable bool
}

const connEvents = unix.EPOLLIN | unix.EPOLLRDHUP

// usable reports whether c may take a new stream now.
func (c *conn) usable() bool {
	return c.state == stateReady && !c.draining && c.streams.n < c.maxStreams
}

// dial starts a non-blocking connect on a free slot.
func (l *Loop) dial() error {
	fd, err := l.peer.Connect()
	if err != nil {
		return err
	}
	c := l.freeSlot()
	c.gen++
	if err := l.poll.Ctl(unix.EPOLL_CTL_ADD, fd, connEvents|unix.EPOLLOUT, c.slot, c.gen); err != nil {
		unix.Close(fd)
		return err
	}
	c.fd, c.state = fd, stateConnecting
	c.out, c.outOff, c.wantOut, c.carry = c.out[:0], 0, true, c.carry[:0]
	c.dec = hpack.NewDecoder(4096, c.emit)
	c.dec.SetMaxStringLength(1 << 20)
	c.hdr, c.hdrID = nil, 0
	c.nextID, c.maxStreams, c.peerWin, c.maxFrame = 1, maxStreamID, defaultWindow, defaultMaxFrame
	c.sendWin, c.recvTaken, c.draining, c.rxNs = defaultWindow, 0, false, 0
	c.primed, c.noPrime, c.cutTable = nil, false, false
	c.blocked = c.blocked[:0]
	return nil
}

func (l *Loop) freeSlot() *conn {
	for _, c := range l.slots {
		if c.state == stateClosed {
			return c
		}
	}
	c := &conn{slot: int32(len(l.slots)), fd: -1}
	c.emit = func(f hpack.HeaderField) {
		if c.hdr != nil {
			c.hdr.resp.field(f.Name, f.Value, c.hdrTrls)
		}
	}
	l.slots = append(l.slots, c)
	return c
}

// event handles epoll's report on c.
func (l *Loop) event(c *conn, ev uint32) {
	if c.state == stateConnecting {
		l.connected(c)
		return
	}
	gen := c.gen // a failure may end c, and a new connection take its slot
	if c.wantOut && ev&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) != 0 {
		l.write(c)
	}
	if c.gen == gen && c.state != stateClosed && ev&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLERR|unix.EPOLLHUP) != 0 {
		l.read(c)
	}
}

// connected sends the preface once the TCP connect is done. Calls wait for
// the server's SETTINGS: its stream limit and windows.
func (l *Loop) connected(c *conn) {
	soErr, err := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err == nil && soErr != 0 {
		err = unix.Errno(soErr)
	}
	if err != nil {
		// Calls fail rather than wait for a server that is not there;
		// another connection, if any, still serves them.
		l.connErr = fmt.Errorf("connect %s: %w", l.cfg.Addr, err)
		l.closeConn(c)
		if live, _ := l.count(); live == 0 {
			l.failQueue(l.connErr)
		}
		return
	}
	c.state = stateHandshake
	c.out = appendClientStart(c.out)
	l.flushLater(c)
}

// flushLater writes c's frames now, or, while the loop handles events,
// once it has: answers read together send their follow-up calls together.
func (l *Loop) flushLater(c *conn) {
	if !c.dirty {
		c.dirty = true
		l.dirty = append(l.dirty, c)
	}
	if !l.inHandle {
		l.flush()
	}
}

func (l *Loop) flush() {
	was := l.inHandle
	l.inHandle = true // a failure's callbacks may send: they queue behind
	for i := 0; i < len(l.dirty); i++ {
		c := l.dirty[i]
		c.dirty = false
		if c.state != stateClosed && c.state != stateConnecting {
			l.write(c)
		}
	}
	l.dirty = l.dirty[:0]
	l.inHandle = was
}

// write sends what c has to send, as far as the socket takes it.
func (l *Loop) write(c *conn) {
	c.lazy = false // whatever waited goes now
	for c.outOff < len(c.out) {
		n, err := rawio.Write(c.fd, c.out[c.outOff:])
		switch {
		case err == nil:
			c.outOff += n
			continue
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN):
			if !c.wantOut {
				if err := l.poll.Ctl(unix.EPOLL_CTL_MOD, c.fd, connEvents|unix.EPOLLOUT, c.slot, c.gen); err != nil {
					l.connFail(c, err)
					return
				}
				c.wantOut = true
			}
			return
		}
		l.writeFailed(c, err)
		return
	}
	c.out, c.outOff = c.out[:0], 0
	c.flushes++
	if c.wantOut {
		c.wantOut = false
		if err := l.poll.Ctl(unix.EPOLL_CTL_MOD, c.fd, connEvents, c.slot, c.gen); err != nil {
			l.connFail(c, err)
		}
	}
}

// writeFailed ends c after a failed write, but first reads what the server
// sent before it closed: answers already here are answers, not failures.
// The calls none of whose frames left are marked first (markUnsent).
func (l *Loop) writeFailed(c *conn, err error) {
	l.markUnsent(c)
	c.out, c.outOff = c.out[:0], 0
	c.flushes++
	gen := c.gen
	l.read(c)
	if c.gen == gen { // the read may have ended c, and a new connection taken its slot
		l.connFail(c, err)
	}
}

// markUnsent marks the calls on c none of whose frames were written: their
// HEADERS frame is in out's current content, at or past what was written.
func (l *Loop) markUnsent(c *conn) {
	for _, s := range c.streams.tab {
		if s != nil && s.outGen == c.flushes && s.outAt >= c.outOff {
			s.p.unsent = true
		}
	}
}

// read takes what the socket has and acts on every whole frame in it.
func (l *Loop) read(c *conn) {
	gen := c.gen // a failure may end c, and a new connection take its slot
	for c.state != stateClosed && c.gen == gen {
		n0 := copy(l.buf, c.carry)
		n, rx, err := l.rx.Recv(c.fd, l.buf[n0:])
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN):
			return
		case err != nil:
			l.connFail(c, err)
			return
		case n == 0:
			l.connFail(c, errServerClosed)
			return
		}
		if rx != 0 {
			c.rxNs = rx
		}
		b := l.buf[:n0+n]
		for len(b) >= frameHeaderLen && c.state != stateClosed && c.gen == gen {
			h := parseFrameHeader(b)
			if h.length > defaultMaxFrame {
				l.connError(c, errCodeFrameSize, "frame of %d bytes, larger than allowed", h.length)
				return
			}
			if len(b) < frameHeaderLen+h.length {
				break
			}
			l.frame(c, h, b[frameHeaderLen:frameHeaderLen+h.length])
			b = b[frameHeaderLen+h.length:]
		}
		if c.state == stateClosed || c.gen != gen {
			return
		}
		c.carry = append(c.carry[:0], b...)
		if n0+n < len(l.buf) {
			return // the socket is drained
		}
	}
}

var errServerClosed = errors.New("end of stream")

// connError ends c for a protocol violation of the server's, telling it
// why (GOAWAY) as a courtesy.
func (l *Loop) connError(c *conn, code uint32, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	c.out = appendFrameHeader(c.out, 8, frameGoAway, 0, 0)
	c.out = append(c.out, 0, 0, 0, 0, byte(code>>24), byte(code>>16), byte(code>>8), byte(code))
	if !c.wantOut {
		_, _ = rawio.Write(c.fd, c.out[c.outOff:])
	}
	l.connFail(c, fmt.Errorf("HTTP/2 protocol error: %s", msg))
}

// connFail closes c and fails its calls: those that were written, and may
// have reached the server, as kserve.ErrConnectionClosed when the server
// closed or reset c. A call none of whose frames left goes first in the
// queue again, once, for another connection (counted: Retries).
func (l *Loop) connFail(c *conn, err error) {
	if c.state == stateClosed {
		return
	}
	l.markUnsent(c)
	handshake := c.state != stateReady
	l.closeConn(c)
	if handshake {
		// Not an HTTP/2 server, or not one that will talk to us: calls
		// waiting for a connection fail rather than redial forever.
		// Others still in their handshake would most likely fail alike.
		l.connErr = fmt.Errorf("HTTP/2 handshake with %s: %w", l.cfg.Addr, err)
		if live, opening := l.count(); live == opening {
			l.failQueue(l.connErr)
		}
	}
	l.scratch = l.scratch[:0]
	for _, s := range c.streams.tab {
		if s != nil {
			l.scratch = append(l.scratch, l.removeStream(c, s))
		}
	}
	terr := transportError(err)
	for i := len(l.scratch) - 1; i >= 0; i-- { // backwards: resends keep their order at the front
		p := l.scratch[i]
		l.scratch[i] = pending{}
		if p.unsent && !p.retried && !l.closed {
			p.unsent, p.retried = false, true
			l.retries++
			l.queue.PushFront(p)
			continue
		}
		l.deliver(p.tag, terr)
	}
	l.scratch = l.scratch[:0]
	l.dispatch()
}

func transportError(err error) error {
	switch {
	case errors.Is(err, kserve.ErrTransport):
		return err
	case errors.Is(err, errServerClosed) || errors.Is(err, unix.EPIPE) || errors.Is(err, unix.ECONNRESET) || errors.Is(err, unix.ECONNABORTED):
		return fmt.Errorf("%w: %w: %w", kserve.ErrTransport, kserve.ErrConnectionClosed, err)
	}
	return fmt.Errorf("%w: %w", kserve.ErrTransport, err)
}

func (l *Loop) closeConn(c *conn) {
	if c.state == stateClosed {
		return
	}
	unix.Close(c.fd) // also leaves the epoll set
	c.fd, c.state, c.wantOut = -1, stateClosed, false
	c.out, c.outOff, c.carry = c.out[:0], 0, c.carry[:0]
	c.flushes++
	c.hdr, c.hdrID = nil, 0
}
