package grpcloop

// A Generator session's reader: blocking reads of the socket into one
// buffer, the frames parsed in place, the stream's gRPC messages read where
// they lie (assembled only when one spans frames), each handed to its
// request. Nothing here allocates per token.

import (
	"encoding/binary"
	"fmt"
	"time"

	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/codes"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/genwire"
)

// genReader is a session's reading state.
type genReader struct {
	s   *genSession
	buf []byte
	w   genwire.Response

	dec      *hpack.Decoder
	resp     response // the stream's header fields and status
	hdrID    uint32   // the stream of the header block in progress; 0: none
	hdrOurs  bool     // that block is our stream's
	hdrEnd   bool     // it ends its stream
	hdrTrls  bool     // it is the stream's trailers
	hdrSize  int
	settings bool // the server's SETTINGS came

	prefix  [5]byte // the current message's length prefix, as it arrives
	prefixN int
	left    int    // bytes of the current message still to come
	inMsg   bool   // a message's prefix is complete and its bytes are coming
	asm     []byte // a message that spans frames, assembled

	recvConn, recvStream int64 // DATA bytes since our last WINDOW_UPDATEs
	ctl                  []byte
	lastData             int // the last DATA frame's size, header included
}

// want is how many bytes the next read asks for, have bytes of a frame in
// hand: up to the end of that frame, so that the read ends where the frame
// ends. The kernel's stamp is the last segment's a read takes from, so a
// read that ran on into frames written later would give this one their
// later arrival (a server writes a decode step's tokens as a burst of
// frames, each its own write). With the next frame's header still to come,
// a frame as long as the last DATA one: token frames are alike, and one
// that is longer takes a second read.
func (r *genReader) want(have int) int {
	room := len(r.buf) - have
	if have >= frameHeaderLen {
		if h := parseFrameHeader(r.buf[:have]); h.length <= defaultMaxFrame {
			return min(max(frameHeaderLen+h.length-have, 1), room)
		}
		return room // frames fails it
	}
	if r.lastData == 0 {
		return room // the connection's first frames: SETTINGS and such
	}
	return min(max(r.lastData, frameHeaderLen)-have, room)
}

// field takes a decoded header field of our stream's block.
func (r *genReader) field(f hpack.HeaderField) {
	if r.hdrOurs {
		r.resp.field(f.Name, f.Value, r.hdrTrls)
	}
}

// read runs until the session ends: reads, parses, delivers, then fails
// whatever is still in flight.
func (s *genSession) read() {
	defer s.c.g.wg.Done()
	r := &s.rd
	r.buf = make([]byte, genReadBuf)
	have := 0
	for {
		n, err := s.nc.Read(r.buf[have : have+r.want(have)])
		at := s.arrival()
		if n > 0 {
			have += n
			used, ferr := r.frames(at, r.buf[:have])
			have = copy(r.buf, r.buf[used:have])
			if ferr == nil {
				ferr = r.sendCtl()
			}
			if ferr != nil {
				s.endAll(at, ferr)
				return
			}
		}
		if err != nil {
			s.endAll(at, s.readFail(err))
			return
		}
	}
}

// arrival is when the bytes just read reached this host: the kernel's
// stamp when the socket gives one.
func (s *genSession) arrival() time.Time {
	now := time.Now()
	if s.rx != nil {
		if at, ok := s.rx.Arrival(now); ok {
			return at
		}
	}
	return now
}

// readFail is the error of a read that failed.
func (s *genSession) readFail(err error) error {
	if s.c.g.closed.Load() {
		return fmt.Errorf("%w: the generator was closed before the answer", ErrClosed)
	}
	if isClosedConn(err) {
		// Our own kill after a failed write.
		return connClosed("the connection failed")
	}
	return connClosed("the server closed the connection before the request's final response: %v", err)
}

// frames acts on every complete frame of b and says how many bytes it
// used; an error ends the session.
func (r *genReader) frames(at time.Time, b []byte) (int, error) {
	used := 0
	for len(b)-used >= frameHeaderLen {
		h := parseFrameHeader(b[used:])
		if h.length > defaultMaxFrame {
			return used, connClosed("HTTP/2 frame of %d bytes, over the %d we accept (FRAME_SIZE_ERROR)", h.length, defaultMaxFrame)
		}
		if len(b)-used < frameHeaderLen+h.length {
			break
		}
		p := b[used+frameHeaderLen : used+frameHeaderLen+h.length]
		used += frameHeaderLen + h.length
		if err := r.frame(at, h, p); err != nil {
			return used, err
		}
	}
	return used, nil
}

// frame acts on one frame (RFC 7540 §6).
func (r *genReader) frame(at time.Time, h frameHeader, p []byte) error {
	if r.hdrID != 0 && h.typ != frameContinuation {
		return protocolError("frame type %d inside a header block", h.typ)
	}
	if !r.settings && (h.typ != frameSettings || h.flags&flagAck != 0) {
		return protocolError("the server's first frame is type %d, not SETTINGS", h.typ)
	}
	switch h.typ {
	case frameData:
		r.lastData = frameHeaderLen + h.length
		return r.data(at, h, p)
	case frameHeaders:
		return r.headers(h, p)
	case frameContinuation:
		if r.hdrID == 0 || h.stream != r.hdrID {
			return protocolError("CONTINUATION out of place")
		}
		return r.headerBlock(p, h.flags&flagEndHeaders != 0)
	case frameRSTStream:
		if len(p) != 4 || h.stream == 0 {
			return protocolError("RST_STREAM of %d bytes", len(p))
		}
		if h.stream == genStreamID {
			return connClosed("the server reset the ModelStreamInfer stream (HTTP/2 error %s)", errCodeName(binary.BigEndian.Uint32(p)))
		}
	case frameSettings:
		return r.peerSettings(h, p)
	case framePing:
		if len(p) != 8 || h.stream != 0 {
			return protocolError("PING of %d bytes", len(p))
		}
		if h.flags&flagAck == 0 {
			r.ctl = appendFrameHeader(r.ctl, 8, framePing, flagAck, 0)
			r.ctl = append(r.ctl, p...)
		}
	case frameGoAway:
		if len(p) < 8 || h.stream != 0 {
			return protocolError("GOAWAY of %d bytes", len(p))
		}
		return connClosed("the server sent GOAWAY (HTTP/2 error %s)", errCodeName(binary.BigEndian.Uint32(p[4:8])))
	case frameWindowUpdate:
		if len(p) != 4 {
			return protocolError("WINDOW_UPDATE of %d bytes", len(p))
		}
		return r.s.windowUpdate(h.stream, int64(binary.BigEndian.Uint32(p)&maxWindow))
	case framePushPromise:
		return protocolError("PUSH_PROMISE with push disabled")
	}
	// PRIORITY and unknown types are ignored (§4.1, §5.5).
	return nil
}

// protocolError is a server that broke HTTP/2: the connection ends, and
// its requests with it.
func protocolError(format string, args ...any) error {
	return fmt.Errorf("%w: HTTP/2: %s", kserve.ErrMalformed, fmt.Sprintf(format, args...))
}

// data takes a DATA frame: flow control counts it whatever its stream.
func (r *genReader) data(at time.Time, h frameHeader, p []byte) error {
	if h.stream == 0 {
		return protocolError("DATA on stream 0")
	}
	if r.recvConn += int64(len(p)); r.recvConn >= recvWindow/2 {
		r.ctl = appendWindowUpdate(r.ctl, 0, uint32(r.recvConn))
		r.recvConn = 0
	}
	payload, ok := stripPadding(p, h.flags, false)
	if !ok {
		return protocolError("DATA padding")
	}
	if h.stream != genStreamID {
		return nil
	}
	if !r.resp.headers {
		return fmt.Errorf("%w: DATA before HEADERS", kserve.ErrMalformed)
	}
	if r.recvStream += int64(len(p)); r.recvStream >= recvWindow/2 {
		r.ctl = appendWindowUpdate(r.ctl, genStreamID, uint32(r.recvStream))
		r.recvStream = 0
	}
	if err := r.messages(at, payload); err != nil {
		return err
	}
	if h.flags&flagEndStream != 0 {
		// The stream ended without trailers: no status.
		return fmt.Errorf("%w: ModelStreamInfer stream ended without grpc-status", kserve.ErrMalformed)
	}
	return nil
}

// messages takes a DATA payload of our stream: gRPC length-prefixed
// messages, which may span frames. A message wholly inside p is read where
// it lies.
func (r *genReader) messages(at time.Time, p []byte) error {
	for len(p) > 0 {
		if !r.inMsg {
			n := copy(r.prefix[r.prefixN:], p)
			r.prefixN += n
			p = p[n:]
			if r.prefixN < 5 {
				return nil
			}
			if r.prefix[0] != 0 {
				// We offer no compression (no grpc-accept-encoding).
				return fmt.Errorf("%w: gRPC message flag %d", kserve.ErrMalformed, r.prefix[0])
			}
			size := binary.BigEndian.Uint32(r.prefix[1:])
			if size > maxGenMessage {
				return fmt.Errorf("%w: gRPC message of %d bytes, over %d", kserve.ErrMalformed, size, maxGenMessage)
			}
			r.prefixN, r.left, r.inMsg = 0, int(size), true
		}
		if len(r.asm) == 0 && len(p) >= r.left {
			msg := p[:r.left]
			p = p[r.left:]
			r.inMsg = false
			if err := r.message(at, msg); err != nil {
				return err
			}
			continue
		}
		n := min(r.left, len(p))
		r.asm = append(r.asm, p[:n]...)
		r.left -= n
		p = p[n:]
		if r.left == 0 {
			r.inMsg = false
			err := r.message(at, r.asm)
			r.asm = r.asm[:0]
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// message reads one ModelStreamInferResponse and delivers it.
func (r *genReader) message(at time.Time, msg []byte) error {
	r.w.Walk(msg)
	return r.s.deliver(at, &r.w, msg)
}

// headers starts a header block.
func (r *genReader) headers(h frameHeader, p []byte) error {
	if h.stream == 0 {
		return protocolError("HEADERS on stream 0")
	}
	frag, ok := stripPadding(p, h.flags, true)
	if !ok {
		return protocolError("HEADERS padding")
	}
	r.hdrID, r.hdrOurs, r.hdrEnd, r.hdrSize = h.stream, h.stream == genStreamID, h.flags&flagEndStream != 0, 0
	r.hdrTrls = r.hdrOurs && r.resp.headers
	if r.hdrTrls && !r.hdrEnd {
		return fmt.Errorf("%w: trailers without END_STREAM", kserve.ErrMalformed)
	}
	return r.headerBlock(frag, h.flags&flagEndHeaders != 0)
}

// headerBlock feeds a fragment of a header block to the HPACK decoder
// (every block goes through it, to keep its table in step with the
// server's); at the block's end, it checks what our stream's said.
func (r *genReader) headerBlock(frag []byte, end bool) error {
	if r.hdrSize += len(frag); r.hdrSize > maxHeaderBlock {
		return protocolError("header block over %d bytes", maxHeaderBlock)
	}
	if _, err := r.dec.Write(frag); err != nil {
		return fmt.Errorf("%w: HPACK: %v", kserve.ErrMalformed, err)
	}
	if !end {
		return nil
	}
	if err := r.dec.Close(); err != nil {
		return fmt.Errorf("%w: HPACK: %v", kserve.ErrMalformed, err)
	}
	ours, endStream := r.hdrOurs, r.hdrEnd
	r.hdrID, r.hdrOurs = 0, false
	if !ours {
		return nil
	}
	first := !r.resp.headers
	r.resp.endBlock()
	switch {
	case endStream:
		return r.streamEnd()
	case r.resp.err != nil:
		return r.resp.err
	case first && r.resp.httpStatus != 200:
		return &kserve.Error{Code: codeFromHTTP(r.resp.httpStatus), Message: fmt.Sprintf("HTTP status %d", r.resp.httpStatus)}
	case first && !r.resp.grpcType:
		return fmt.Errorf("%w: answer is not application/grpc", kserve.ErrMalformed)
	}
	return nil
}

// streamEnd is the error that ends the session when the server ends the
// stream with its trailers (or a trailers-only answer): its status, or for
// an OK one, the final responses that never came.
func (r *genReader) streamEnd() error {
	switch {
	case r.resp.err != nil:
		return r.resp.err
	case r.resp.httpStatus != 200 && r.resp.httpStatus != 0:
		return &kserve.Error{Code: codeFromHTTP(r.resp.httpStatus), Message: fmt.Sprintf("HTTP status %d", r.resp.httpStatus)}
	case r.resp.status < 0:
		return fmt.Errorf("%w: ModelStreamInfer stream ended without grpc-status", kserve.ErrMalformed)
	case r.resp.status != 0:
		return &kserve.Error{Code: codes.Code(r.resp.status), Message: r.resp.message}
	}
	return genwire.ErrStreamEnded
}

// peerSettings applies the server's SETTINGS and acknowledges them.
func (r *genReader) peerSettings(h frameHeader, p []byte) error {
	if h.stream != 0 || len(p)%6 != 0 {
		return protocolError("SETTINGS of %d bytes", len(p))
	}
	if h.flags&flagAck != 0 {
		return nil
	}
	r.settings = true
	s := r.s
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	for ; len(p) > 0; p = p[6:] {
		v := binary.BigEndian.Uint32(p[2:6])
		switch binary.BigEndian.Uint16(p) {
		case settingInitialWindowSize:
			if v > maxWindow {
				return protocolError("INITIAL_WINDOW_SIZE %d", v)
			}
			// The change applies to the open stream (§6.9.2).
			s.streamWin += int64(v) - s.peerInit
			s.peerInit = int64(v)
		case settingMaxFrameSize:
			if v < defaultMaxFrame || v > 1<<24-1 {
				return protocolError("MAX_FRAME_SIZE %d", v)
			}
			s.maxFrame = int(v)
		}
	}
	s.out = appendFrameHeader(s.out, 0, frameSettings, flagAck, 0)
	if err := s.flushLocked(); err != nil {
		return connClosed("writing to the server: %v", err)
	}
	return nil
}

// windowUpdate opens a send window and sends what waited for it.
func (s *genSession) windowUpdate(stream uint32, inc int64) error {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	switch stream {
	case 0:
		s.sendWin += inc
	case genStreamID:
		s.streamWin += inc
	default:
		return nil
	}
	if s.backOff == len(s.backlog) {
		return nil
	}
	if err := s.flushLocked(); err != nil {
		return connClosed("writing to the server: %v", err)
	}
	return nil
}

// sendCtl writes the acknowledgements and window updates the frames just
// read called for.
func (r *genReader) sendCtl() error {
	if len(r.ctl) == 0 {
		return nil
	}
	s := r.s
	s.c.mu.Lock()
	s.out = append(s.out, r.ctl...)
	err := s.writeOut()
	s.c.mu.Unlock()
	r.ctl = r.ctl[:0]
	if err != nil {
		return connClosed("writing to the server: %v", err)
	}
	return nil
}
