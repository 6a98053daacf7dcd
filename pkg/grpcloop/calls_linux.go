//go:build linux

package grpcloop

// This file is a call's way through the loop: a stream on the least busy
// connection, its frames within the flow-control windows, its end.

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/netloadgen/netloadgen/internal/rawio"
	"github.com/netloadgen/netloadgen/kserve"
)

// pick is the usable connection with the fewest streams; nil if none.
func (l *Loop) pick() *conn {
	var best *conn
	for _, c := range l.slots {
		if c.usable() && (best == nil || c.streams.n < best.streams.n) {
			best = c
		}
	}
	return best
}

// dispatch starts waiting calls on free streams, and opens connections
// when they still wait.
func (l *Loop) dispatch() {
	for l.queue.Len() > 0 && !l.closed {
		c := l.pick()
		if c == nil {
			break
		}
		l.start(c, l.queue.PopFront())
	}
	l.grow()
}

// grow opens connections, up to Conns that take new streams, while calls
// wait, a few at a time.
func (l *Loop) grow() {
	if l.queue.Len() == 0 || l.closed {
		return
	}
	live, opening := l.count()
	for live < l.cfg.Conns && opening < maxDialing {
		if err := l.dial(); err != nil {
			l.connErr = err
			if live == 0 {
				l.failQueue(err)
			}
			return
		}
		live++
		opening++
	}
}

// count is the connections open or opening that will take new streams, and
// those not ready yet.
func (l *Loop) count() (live, opening int) {
	for _, c := range l.slots {
		if c.state == stateClosed || c.draining {
			continue
		}
		live++
		if c.state != stateReady {
			opening++
		}
	}
	return live, opening
}

// start opens a stream on c for p and queues its frames.
func (l *Loop) start(c *conn, p pending) {
	var s *stream
	if n := len(l.free); n > 0 {
		s = l.free[n-1]
		l.free = l.free[:n-1]
	} else {
		s = new(stream)
	}
	s.id, s.p, s.sent, s.sendWin, s.recvd, s.blocked = c.nextID, p, 0, c.peerWin, 0, false
	s.resp.reset()
	c.nextID += 2
	if c.nextID > maxStreamID {
		c.draining = true // ids used up: a fresh connection takes over
	}
	c.streams.put(s)
	l.active++
	req := p.req
	s.outAt, s.outGen = len(c.out), c.flushes
	c.appendHeaders(req, s.id)
	if body := int64(len(req.body)); body <= c.sendWin && body <= s.sendWin && body <= int64(c.maxFrame) {
		// The common case: the whole message in one frame.
		c.out = appendFrameHeader(c.out, len(req.body), frameData, flagEndStream, s.id)
		c.out = append(c.out, req.body...)
		c.sendWin -= body
		s.sendWin -= body
		s.sent = len(req.body)
	} else {
		l.pump(c, s)
	}
	l.flushLater(c)
}

// appendHeaders queues the HEADERS frame of req's call on stream id, its
// header block in the cheapest form the connection's HPACK state allows
// (Request): the first call primes the server's table, later ones with the
// same fields refer to it; a call with other fields goes as literals.
func (c *conn) appendHeaders(req *Request, id uint32) {
	block := req.lit
	switch {
	case c.primed != nil:
		if bytes.Equal(c.primed, req.lit) {
			block = req.indexed
		}
	case !c.noPrime && req.tableSize <= defaultHeaderTable:
		block, c.primed = req.prime, req.lit
	}
	n := len(block)
	if c.cutTable {
		n++
	}
	c.out = appendFrameHeader(c.out, n, frameHeaders, flagEndHeaders, id)
	if c.cutTable {
		// A dynamic table size update to 0 (§6.3), first in the block as
		// §4.2 wants after the server lowered SETTINGS_HEADER_TABLE_SIZE.
		c.out = append(c.out, 0x20)
		c.cutTable = false
	}
	c.out = append(c.out, block...)
}

// pump queues as much of s's message as the windows and the server's frame
// size allow; the rest waits for WINDOW_UPDATE.
func (l *Loop) pump(c *conn, s *stream) {
	body := s.p.req.body
	for s.sent < len(body) {
		n := int(min(int64(len(body)-s.sent), int64(c.maxFrame), c.sendWin, s.sendWin))
		if n <= 0 {
			if !s.blocked {
				s.blocked = true
				c.blocked = append(c.blocked, s)
			}
			return
		}
		var flags byte
		if s.sent+n == len(body) {
			flags = flagEndStream
		}
		c.out = appendFrameHeader(c.out, n, frameData, flags, s.id)
		c.out = append(c.out, body[s.sent:s.sent+n]...)
		s.sent += n
		c.sendWin -= int64(n)
		s.sendWin -= int64(n)
	}
}

// unblock resumes the streams that waited for a window, in order.
func (l *Loop) unblock(c *conn) {
	if len(c.blocked) == 0 || c.state == stateClosed {
		return
	}
	waiting := c.blocked
	c.blocked = c.spare[:0]
	for i, s := range waiting {
		waiting[i] = nil
		if s.blocked {
			s.blocked = false
			l.pump(c, s)
		}
	}
	c.spare = waiting[:0]
	l.flushLater(c)
}

// removeStream takes s off c and returns its call; s goes back to the pool.
func (l *Loop) removeStream(c *conn, s *stream) pending {
	c.streams.remove(s)
	l.active--
	if s.blocked {
		for i, b := range c.blocked {
			if b == s {
				c.blocked = append(c.blocked[:i], c.blocked[i+1:]...)
				break
			}
		}
		s.blocked = false
	}
	p := s.p
	s.p = pending{}
	l.free = append(l.free, s)
	return p
}

// finish reports a stream's answer, timed by the read that completed it.
func (l *Loop) finish(c *conn, s *stream) {
	err := s.resp.result(l.cfg.Check, s.p.tag)
	var at time.Time
	if err == nil {
		at = rawio.Arrival(c.rxNs, l.poll.Seen)
		if c.rxNs == 0 {
			l.unstamped = true
		}
	}
	p := l.removeStream(c, s)
	l.deliverAt(p.tag, at, err)
	l.streamEnded(c)
}

// streamEnded closes a draining connection once its last stream ends and
// hands the freed stream to a waiting call.
func (l *Loop) streamEnded(c *conn) {
	if c.draining && c.streams.n == 0 {
		l.closeConn(c)
	}
	if l.queue.Len() > 0 {
		l.dispatch()
	}
}

// retryOrFail sends p again, first in line, unless it was sent again once
// already.
func (l *Loop) retryOrFail(p pending, err error) {
	if p.retried || l.closed {
		l.deliver(p.tag, err)
		return
	}
	p.retried = true
	l.retries++
	l.queue.PushFront(p)
}

func (l *Loop) deliver(tag uint64, err error) { l.deliverAt(tag, time.Time{}, err) }

func (l *Loop) deliverAt(tag uint64, at time.Time, err error) {
	l.delivered++
	l.cfg.OnDone(tag, at, err)
}

// failQueue fails every waiting call: no connection can be opened.
func (l *Loop) failQueue(err error) {
	for l.queue.Len() > 0 {
		p := l.queue.PopFront()
		l.deliver(p.tag, fmt.Errorf("%w: connect: %w", kserve.ErrTransport, err))
	}
}

// expire fails the calls whose deadline passed (cancelling their streams)
// and finds the next deadline.
func (l *Loop) expire(now int64) {
	next := int64(never)
	was := l.inHandle
	l.inHandle = true // cancellations are written below, after the scan
	l.scratch = l.scratch[:0]
	for _, c := range l.slots {
		if c.state == stateClosed {
			continue
		}
		cancelled := false
		for _, s := range c.streams.tab {
			if s == nil || s.p.deadline == 0 {
				continue
			}
			if s.p.deadline <= now {
				c.out = appendRSTStream(c.out, s.id, errCodeCancel)
				cancelled = true
				l.scratch = append(l.scratch, l.removeStream(c, s))
				continue
			}
			next = min(next, s.p.deadline)
		}
		if cancelled {
			if c.draining && c.streams.n == 0 {
				l.closeConn(c)
			} else {
				l.flushLater(c)
			}
		}
	}
	for l.queue.Len() > 0 && l.queue.At(0).deadline != 0 && l.queue.At(0).deadline <= now {
		l.scratch = append(l.scratch, l.queue.PopFront())
	}
	for i := range l.queue.Len() {
		if d := l.queue.At(i).deadline; d > 0 {
			next = min(next, d)
			break // deadlines are in queue order after the first (a retry's is older still)
		}
	}
	l.checkAt = next
	for i := range l.scratch {
		p := l.scratch[i]
		l.scratch[i] = pending{}
		l.deliver(p.tag, l.timeoutError())
	}
	l.scratch = l.scratch[:0]
	l.dispatch()
	l.inHandle = was
	if !was {
		l.flush()
	}
}

func (l *Loop) timeoutError() error {
	return fmt.Errorf("%w: request timeout %v: %w", kserve.ErrTransport, l.cfg.Timeout, context.DeadlineExceeded)
}
