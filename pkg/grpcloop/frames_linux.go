//go:build linux

package grpcloop

import (
	"encoding/binary"
	"fmt"

	"github.com/netloadgen/netloadgen/kserve"
)

// frame acts on one frame the server sent on c (RFC 7540 §6).
func (l *Loop) frame(c *conn, h frameHeader, p []byte) {
	if c.hdrID != 0 && h.typ != frameContinuation {
		// A header block is one unit on the wire (§6.10).
		l.connError(c, errCodeProtocol, "frame type %d inside a header block", h.typ)
		return
	}
	if c.state == stateHandshake && (h.typ != frameSettings || h.flags&flagAck != 0) {
		// The server's preface is a SETTINGS frame (RFC 7540 §3.5).
		l.connError(c, errCodeProtocol, "the server's first frame is type %d, not SETTINGS", h.typ)
		return
	}
	switch h.typ {
	case frameData:
		l.data(c, h, p)
	case frameHeaders:
		if h.stream == 0 {
			l.connError(c, errCodeProtocol, "HEADERS on stream 0")
			return
		}
		frag, ok := stripPadding(p, h.flags, true)
		if !ok {
			l.connError(c, errCodeProtocol, "HEADERS padding")
			return
		}
		s := c.streams.get(h.stream)
		c.hdr, c.hdrID, c.hdrEnd, c.hdrSize = s, h.stream, h.flags&flagEndStream != 0, 0
		c.hdrTrls = s != nil && s.resp.headers
		if s != nil && c.hdrTrls && !c.hdrEnd {
			s.resp.fail("%w: trailers without END_STREAM", kserve.ErrMalformed)
		}
		l.headerBlock(c, frag, h.flags&flagEndHeaders != 0)
	case frameContinuation:
		if c.hdrID == 0 || h.stream != c.hdrID {
			l.connError(c, errCodeProtocol, "CONTINUATION out of place")
			return
		}
		l.headerBlock(c, p, h.flags&flagEndHeaders != 0)
	case frameRSTStream:
		if len(p) != 4 || h.stream == 0 {
			l.connError(c, errCodeProtocol, "RST_STREAM of %d bytes", len(p))
			return
		}
		if s := c.streams.get(h.stream); s != nil {
			l.reset(c, s, binary.BigEndian.Uint32(p))
		}
	case frameSettings:
		l.settings(c, h, p)
	case framePing:
		if len(p) != 8 || h.stream != 0 {
			l.connError(c, errCodeProtocol, "PING of %d bytes", len(p))
			return
		}
		if h.flags&flagAck == 0 {
			c.out = appendFrameHeader(c.out, 8, framePing, flagAck, 0)
			c.out = append(c.out, p...)
			l.ackLater(c)
		}
	case frameGoAway:
		if len(p) < 8 || h.stream != 0 {
			l.connError(c, errCodeProtocol, "GOAWAY of %d bytes", len(p))
			return
		}
		l.goAway(c, binary.BigEndian.Uint32(p)&maxWindow)
	case frameWindowUpdate:
		if len(p) != 4 {
			l.connError(c, errCodeProtocol, "WINDOW_UPDATE of %d bytes", len(p))
			return
		}
		l.windowUpdate(c, h.stream, int64(binary.BigEndian.Uint32(p)&maxWindow))
	case framePushPromise:
		// We said SETTINGS_ENABLE_PUSH 0 (§8.2).
		l.connError(c, errCodeProtocol, "PUSH_PROMISE with push disabled")
	default:
		// PRIORITY and unknown types are ignored (§4.1, §5.5).
	}
}

// data takes a DATA frame: flow control counts it whether or not its
// stream is still ours (one we gave up on may still be sending).
func (l *Loop) data(c *conn, h frameHeader, p []byte) {
	if h.stream == 0 {
		l.connError(c, errCodeProtocol, "DATA on stream 0")
		return
	}
	c.recvTaken += int64(len(p))
	if c.recvTaken >= recvWindow/2 {
		c.out = appendWindowUpdate(c.out, 0, uint32(c.recvTaken))
		c.recvTaken = 0
		l.flushLater(c)
	}
	payload, ok := stripPadding(p, h.flags, false)
	if !ok {
		l.connError(c, errCodeProtocol, "DATA padding")
		return
	}
	s := c.streams.get(h.stream)
	if s == nil {
		return
	}
	s.resp.data(payload)
	if h.flags&flagEndStream != 0 {
		l.finish(c, s)
		return
	}
	s.recvd += int64(len(p))
	if s.recvd >= recvWindow/2 {
		c.out = appendWindowUpdate(c.out, s.id, uint32(s.recvd))
		s.recvd = 0
		l.flushLater(c)
	}
}

// headerBlock feeds a fragment of a header block to the connection's HPACK
// decoder, which every block must go through (even one of a stream we gave
// up on) to keep its dynamic table in step with the server's.
func (l *Loop) headerBlock(c *conn, frag []byte, end bool) {
	if c.hdrSize += len(frag); c.hdrSize > maxHeaderBlock {
		l.connError(c, errCodeProtocol, "header block over %d bytes", maxHeaderBlock)
		return
	}
	if _, err := c.dec.Write(frag); err != nil {
		l.connError(c, errCodeCompression, "HPACK: %v", err)
		return
	}
	if !end {
		return
	}
	if err := c.dec.Close(); err != nil {
		l.connError(c, errCodeCompression, "HPACK: %v", err)
		return
	}
	s, endStream := c.hdr, c.hdrEnd
	c.hdr, c.hdrID = nil, 0
	if s == nil {
		return
	}
	s.resp.endBlock()
	if endStream {
		l.finish(c, s)
	}
}

// settings applies the server's SETTINGS and acknowledges them; the first
// makes the connection ready for calls.
func (l *Loop) settings(c *conn, h frameHeader, p []byte) {
	if h.stream != 0 || len(p)%6 != 0 {
		l.connError(c, errCodeFrameSize, "SETTINGS of %d bytes", len(p))
		return
	}
	if h.flags&flagAck != 0 {
		return
	}
	for ; len(p) > 0; p = p[6:] {
		v := binary.BigEndian.Uint32(p[2:6])
		switch binary.BigEndian.Uint16(p) {
		case settingMaxConcurrentStreams:
			c.maxStreams = int(min(v, maxStreamID))
		case settingInitialWindowSize:
			if v > maxWindow {
				l.connError(c, errCodeFlowControl, "INITIAL_WINDOW_SIZE %d", v)
				return
			}
			// The change applies to every open stream (§6.9.2).
			delta := int64(v) - c.peerWin
			c.peerWin = int64(v)
			for _, s := range c.streams.tab {
				if s != nil {
					s.sendWin += delta
				}
			}
		case settingHeaderTableSize:
			if v < defaultHeaderTable && !c.noPrime {
				// The server's table is smaller than our encoder may
				// assume: empty it, and index nothing more.
				c.primed, c.noPrime, c.cutTable = nil, true, true
			}
		case settingMaxFrameSize:
			if v < defaultMaxFrame || v > 1<<24-1 {
				l.connError(c, errCodeProtocol, "MAX_FRAME_SIZE %d", v)
				return
			}
			c.maxFrame = int(v)
		}
	}
	c.out = appendFrameHeader(c.out, 0, frameSettings, flagAck, 0)
	l.flushLater(c)
	l.unblock(c)
	if c.state == stateHandshake {
		c.state = stateReady
		l.dispatch()
	}
}

func (l *Loop) windowUpdate(c *conn, id uint32, inc int64) {
	if id == 0 {
		c.sendWin += inc
	} else if s := c.streams.get(id); s != nil {
		s.sendWin += inc
	}
	l.unblock(c)
}

// goAway stops new streams on c. The streams the server says it never
// processed (above last) go again, once, on another connection; the rest
// finish here.
func (l *Loop) goAway(c *conn, last uint32) {
	c.draining = true
	l.scratch = l.scratch[:0]
	for _, s := range c.streams.tab {
		if s != nil && s.id > last {
			l.scratch = append(l.scratch, l.removeStream(c, s))
		}
	}
	for i := range l.scratch {
		p := l.scratch[i]
		l.scratch[i] = pending{}
		l.retryOrFail(p, fmt.Errorf("%w: the server sent GOAWAY before processing the call", kserve.ErrTransport))
	}
	l.scratch = l.scratch[:0]
	if c.streams.n == 0 {
		l.closeConn(c)
	}
	l.dispatch()
}

// reset ends a stream the server reset. REFUSED_STREAM means it did no
// work on it (§8.1.4), so the call goes again, once.
func (l *Loop) reset(c *conn, s *stream, code uint32) {
	p := l.removeStream(c, s)
	err := fmt.Errorf("%w: stream reset by the server (HTTP/2 error %s)", kserve.ErrTransport, errCodeName(code))
	if code == errCodeRefusedStream {
		l.retryOrFail(p, err)
	} else {
		l.deliver(p.tag, err)
	}
	l.streamEnded(c)
}
