package grpcloop

// A Generator connection's session: one TCP connection and its one
// ModelStreamInfer stream, its writer's side (under the genConn's lock)
// and its requests in flight.

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"slices"
	"time"

	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/codes"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/genwire"
	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/rxstamp"
)

// genStreamID is the session's one stream.
const genStreamID = 1

// genReadBuf is the reader's buffer: room for a few frames of the largest
// size we accept (we never raise SETTINGS_MAX_FRAME_SIZE).
const genReadBuf = 64 << 10

// maxGenMessage bounds one streamed response: a token's is a few hundred
// bytes, a non-decoupled model's whole answer some kilobytes.
const maxGenMessage = 64 << 20

type genSession struct {
	c  *genConn
	nc net.Conn
	rx *rxstamp.Conn // nc, when its reads carry kernel timestamps

	// Under c.mu: the writer's side, the requests in flight, the end.
	dead      bool
	pending   map[uint64]*genwire.Call // by request id
	out       []byte                   // frames being written
	backlog   []byte                   // gRPC messages not yet framed: the send window is short
	backOff   int                      // backlog's first unsent byte
	sendWin   int64                    // the connection's send window
	streamWin int64                    // the stream's
	peerInit  int64                    // the server's SETTINGS_INITIAL_WINDOW_SIZE
	maxFrame  int                      // the server's SETTINGS_MAX_FRAME_SIZE

	// The reader's alone.
	rd genReader
}

func newSession(c *genConn, nc net.Conn) *genSession {
	s := &genSession{c: c, nc: nc, pending: make(map[uint64]*genwire.Call),
		sendWin: defaultWindow, streamWin: defaultWindow, peerInit: defaultWindow, maxFrame: defaultMaxFrame}
	if rc, ok := nc.(*rxstamp.Conn); ok && rc.Stamped() {
		s.rx = rc
	}
	s.rd.s = s
	s.rd.dec = hpack.NewDecoder(defaultHeaderTable, s.rd.field)
	s.rd.dec.SetMaxStringLength(1 << 20)
	s.rd.resp.reset()
	return s
}

// dialStamped dials addr with receive timestamps on (pkg/rxstamp).
func dialStamped(ctx context.Context, d *net.Dialer, addr string) (net.Conn, error) {
	return rxstamp.Dial(ctx, d, "tcp", addr)
}

// start writes the connection's preface and settings and opens the
// stream; c.mu is held. A client may send before the server's SETTINGS
// (RFC 7540 §3.5); until they come the defaults hold, which is what we
// assume.
func (s *genSession) start(hdr []byte) error {
	s.out = appendClientStart(s.out[:0])
	s.out = appendFrameHeader(s.out, len(hdr), frameHeaders, flagEndHeaders, genStreamID)
	s.out = append(s.out, hdr...)
	return s.writeOut()
}

// writeOut writes out; c.mu is held.
func (s *genSession) writeOut() error {
	if len(s.out) == 0 {
		return nil
	}
	_, err := s.nc.Write(s.out)
	s.out = s.out[:0]
	return err
}

// sendLocked encodes req as one more message on the stream and sends what
// the windows allow; c.mu is held. The call is in flight from here.
func (s *genSession) sendLocked(req *genai.Request, o *genwire.Options, call *genwire.Call) error {
	if _, dup := s.pending[req.ID]; dup {
		return &kserve.Error{Code: codes.InvalidArgument, Message: fmt.Sprintf("request id %d is already in flight", req.ID)}
	}
	start := len(s.backlog)
	s.backlog = append(s.backlog, 0, 0, 0, 0, 0) // uncompressed, length below
	b, err := genwire.AppendRequest(s.backlog, o, req)
	if err != nil {
		s.backlog = s.backlog[:start]
		return err
	}
	if len(b)-start-5 > maxMessage-5 {
		s.backlog = b[:start]
		return &kserve.Error{Code: codes.InvalidArgument, Message: fmt.Sprintf("request of %d bytes: larger than gRPC's limit", len(b)-start-5)}
	}
	binary.BigEndian.PutUint32(b[start+1:], uint32(len(b)-start-5))
	s.backlog = b
	s.pending[req.ID] = call
	s.c.inflight.Add(1)
	if err := s.flushLocked(); err != nil {
		delete(s.pending, req.ID)
		s.c.inflight.Add(-1)
		s.kill()
		return fmt.Errorf("%w: sending on the ModelStreamInfer stream: %w", kserve.ErrTransport, err)
	}
	return nil
}

// flushLocked frames what of the backlog the windows allow, in DATA frames
// of at most the server's frame size, and writes them with whatever else
// waits in out; c.mu is held.
func (s *genSession) flushLocked() error {
	for s.backOff < len(s.backlog) {
		n := int(min(int64(len(s.backlog)-s.backOff), int64(s.maxFrame), s.sendWin, s.streamWin))
		if n <= 0 {
			break
		}
		s.out = appendFrameHeader(s.out, n, frameData, 0, genStreamID)
		s.out = append(s.out, s.backlog[s.backOff:s.backOff+n]...)
		s.backOff += n
		s.sendWin -= int64(n)
		s.streamWin -= int64(n)
	}
	switch {
	case s.backOff == len(s.backlog):
		s.backlog, s.backOff = s.backlog[:0], 0
	case s.backOff > len(s.backlog)/2:
		s.backlog = s.backlog[:copy(s.backlog, s.backlog[s.backOff:])]
		s.backOff = 0
	}
	return s.writeOut()
}

// kill marks the session dead and closes its socket, so that its reader
// ends it; c.mu is held.
func (s *genSession) kill() {
	s.dead = true
	s.c.open.Store(false)
	s.nc.Close()
}

// endAll ends the session: every request in flight on it fails with err
// (in sending order: a handler may care), and the connection's next
// request dials again.
func (s *genSession) endAll(at time.Time, err error) {
	c := s.c
	c.mu.Lock()
	s.dead = true
	if c.s == s {
		c.s = nil
		c.open.Store(false)
	}
	c.inflight.Add(-int64(len(s.pending)))
	pending := s.pending
	s.pending = nil
	c.mu.Unlock()
	s.nc.Close()
	ids := make([]uint64, 0, len(pending))
	for id := range pending {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		pending[id].End(at, genai.Usage{}, err)
	}
}

// deliver hands one response to its request; an error ends the session.
// raw is the message, valid during the call.
func (s *genSession) deliver(at time.Time, w *genwire.Response, raw []byte) error {
	final := genwire.Final(w, s.c.g.cfg.Options.OneResponse)
	c := s.c
	c.mu.Lock()
	call := s.pending[w.ID]
	if !w.IDOK || w.Err != nil {
		call = nil
	}
	if call != nil && final {
		delete(s.pending, w.ID)
		c.inflight.Add(-1)
	}
	c.mu.Unlock()
	return genwire.Deliver(at, w, raw, call, final)
}
