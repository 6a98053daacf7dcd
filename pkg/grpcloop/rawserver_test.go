//go:build linux

package grpcloop

import (
	"encoding/binary"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2/hpack"
)

// rawServer is a minimal HTTP/2 gRPC server for the cases a real one will
// not produce on demand (GOAWAY with a chosen last stream, a reset, a close
// in mid-call) and for allocation counts (it allocates nothing per call, so
// the process's count is the client's). Each call is answered with a fixed
// response, unless act says otherwise.
type rawServer struct {
	ln    net.Listener
	conns atomic.Int64
	calls atomic.Int64
	acks  atomic.Int64 // PING ACKs with the payload sent
	// act, when set, is asked for each call (its connection's index from
	// 0 and the call's count on that connection from 1) what to do.
	act func(conn, n int) action
	// wrote, when set, gets the time of each write that answered calls.
	wrote chan time.Time
	// table, when set, is the SETTINGS_HEADER_TABLE_SIZE the server sends;
	// it then decodes every header block the client sends with that
	// table, counting the blocks that decode (paths) and those that do not.
	table            *uint32
	paths, hpackErrs atomic.Int64
	wg               sync.WaitGroup
}

type action int

const (
	answer      action = iota
	goAway             // GOAWAY with last stream = this one's predecessor, then answer the predecessor only
	goAwayAfter        // answer this call, then GOAWAY with last stream = this one
	reset              // RST_STREAM INTERNAL_ERROR
	closeConn          // close the connection without a word
	silence            // never answer
	errStatus          // trailers-only, grpc-status 5 with a percent-encoded message
	badFrame           // a DATA frame whose message prefix is cut short
	refuse             // RST_STREAM REFUSED_STREAM
	continued          // the answer's headers in HEADERS + CONTINUATION, padded DATA
	pingAfter          // answer, then PING
)

func startRaw(t *testing.T, act func(conn, n int) action) *rawServer {
	t.Helper()
	s := &rawServer{act: act}
	s.start(t)
	return s
}

// start listens and serves until the test ends.
func (s *rawServer) start(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.ln = ln
	s.wg.Go(s.accept)
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
}

func (s *rawServer) addr() string { return s.ln.Addr().String() }

func (s *rawServer) accept() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		i := int(s.conns.Add(1) - 1)
		s.wg.Go(func() { s.serve(c, i) })
	}
}

// appendLiteral appends a literal header field without indexing, new name
// (RFC 7541 §6.2.2), both strings raw.
func appendLiteral(b []byte, name, value string) []byte {
	return appendField(b, 0x00, 4, hpackField{name: name, value: value})
}

// putStream writes a stream id into the frame header at b.
func putStream(b []byte, stream uint32) { binary.BigEndian.PutUint32(b[5:9], stream) }

func frameBytes(typ, flags byte, stream uint32, payload []byte) []byte {
	b := appendFrameHeader(nil, len(payload), typ, flags, stream)
	return append(b, payload...)
}

// rawAnswer is the message of every answer: field 1, "nm".
var rawAnswer = []byte{0x0a, 2, 'n', 'm'}

// answerFrames is a whole answer for stream 0 (patched per call): headers
// (:status 200 from the static table, index 8), one 4-byte message (a
// ModelInferResponse of model_name "nm": rawAnswer) and
// trailers with grpc-status 0. As grpc-go does, the first answer on a
// connection adds content-type and grpc-status to the dynamic table
// (literals with incremental indexing, RFC 7541 §6.2.1) and later ones
// refer to them (indexed, §6.1): content-type went in first, so it is now
// entry 63 and grpc-status 62.
func answerFrames(first bool) []byte {
	hb := []byte{0x88, 0x80 | 63}
	tb := []byte{0x80 | 62}
	if first {
		hb = append([]byte{0x88, 0x40}, appendLiteral(nil, "content-type", "application/grpc")[1:]...)
		tb = append([]byte{0x40}, appendLiteral(nil, "grpc-status", "0")[1:]...)
	}
	b := frameBytes(frameHeaders, flagEndHeaders, 0, hb)
	b = append(b, frameBytes(frameData, 0, 0, append([]byte{0, 0, 0, 0, byte(len(rawAnswer))}, rawAnswer...))...)
	return append(b, frameBytes(frameHeaders, flagEndHeaders|flagEndStream, 0, tb)...)
}

func (s *rawServer) serve(c net.Conn, ci int) {
	defer c.Close()
	pre := make([]byte, len(clientPreface))
	if _, err := io.ReadFull(c, pre); err != nil || string(pre) != clientPreface {
		return
	}
	var settings []byte
	var dec *hpack.Decoder
	if s.table != nil {
		settings = appendSetting(nil, settingHeaderTableSize, *s.table)
		dec = hpack.NewDecoder(*s.table, func(f hpack.HeaderField) {
			if f.Name == ":path" {
				s.paths.Add(1)
			}
		})
	}
	if _, err := c.Write(frameBytes(frameSettings, 0, 0, settings)); err != nil {
		return
	}
	ans, later := answerFrames(true), answerFrames(false)
	hdrLen := frameHeaderLen + int(ans[2])
	dataLen := frameHeaderLen + 9
	next := func() {
		ans, hdrLen = later, frameHeaderLen+int(later[2])
	}
	out := make([]byte, 0, 4096)
	var hdr [frameHeaderLen]byte
	payload := make([]byte, defaultMaxFrame)
	n := 0
	for {
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			return
		}
		h := parseFrameHeader(hdr[:])
		if _, err := io.ReadFull(c, payload[:h.length]); err != nil {
			return
		}
		out = out[:0]
		if dec != nil && h.typ == frameHeaders {
			if _, err := dec.Write(payload[:h.length]); err != nil {
				s.hpackErrs.Add(1)
			}
		}
		switch {
		case h.typ == framePing && h.flags&flagAck != 0 && string(payload[:h.length]) == "pingpong":
			s.acks.Add(1)
		case h.typ == frameSettings && h.flags&flagAck == 0:
			out = append(out, frameBytes(frameSettings, flagAck, 0, nil)...)
		case (h.typ == frameData || h.typ == frameHeaders) && h.flags&flagEndStream != 0:
			n++
			s.calls.Add(1)
			a := answer
			if s.act != nil {
				a = s.act(ci, n)
			}
			id := h.stream
			switch a {
			case answer, goAwayAfter, pingAfter:
				off := len(out)
				out = append(out, ans...)
				putStream(out[off:], id)
				putStream(out[off+hdrLen:], id)
				putStream(out[off+hdrLen+dataLen:], id)
				next()
				if a == pingAfter {
					out = append(out, frameBytes(framePing, 0, 0, []byte("pingpong"))...)
				}
				if a == goAwayAfter {
					out = append(out, frameBytes(frameGoAway, 0, 0, binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, id), 0))...)
				}
			case goAway:
				out = append(out, frameBytes(frameGoAway, 0, 0, binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, id-2), 0))...)
				off := len(out)
				out = append(out, ans...)
				putStream(out[off:], id-2)
				putStream(out[off+hdrLen:], id-2)
				putStream(out[off+hdrLen+dataLen:], id-2)
				next()
			case reset:
				out = appendRSTStream(out, id, 2)
			case refuse:
				out = appendRSTStream(out, id, errCodeRefusedStream)
			case continued:
				hb := appendLiteral([]byte{0x88}, "content-type", "application/grpc")
				out = append(out, frameBytes(frameHeaders, 0, id, hb[:5])...)
				out = append(out, frameBytes(frameContinuation, 0, id, hb[5:9])...)
				out = append(out, frameBytes(frameContinuation, flagEndHeaders, id, hb[9:])...)
				out = append(out, frameBytes(frameData, flagPadded, id, []byte{3, 0, 0, 0, 0, 1, 7, 0, 0, 0})...)
				out = append(out, frameBytes(frameHeaders, flagEndHeaders|flagEndStream, id, appendLiteral(nil, "grpc-status", "0"))...)
			case closeConn:
				return
			case silence:
			case errStatus:
				var hb []byte
				hb = append(hb, 0x88)
				hb = appendLiteral(hb, "content-type", "application/grpc")
				hb = appendLiteral(hb, "grpc-status", "5")
				hb = appendLiteral(hb, "grpc-message", "no model %22m%22")
				out = append(out, frameBytes(frameHeaders, flagEndHeaders|flagEndStream, id, hb)...)
			case badFrame:
				var hb []byte
				hb = append(hb, 0x88)
				hb = appendLiteral(hb, "content-type", "application/grpc")
				out = append(out, frameBytes(frameHeaders, flagEndHeaders, id, hb)...)
				out = append(out, frameBytes(frameData, 0, id, []byte{0, 0, 0, 0, 9, 1})...)
				out = append(out, frameBytes(frameHeaders, flagEndHeaders|flagEndStream, id, appendLiteral(nil, "grpc-status", "0"))...)
			}
		}
		if len(out) > 0 {
			if _, err := c.Write(out); err != nil {
				return
			}
			if s.wrote != nil && h.flags&flagEndStream != 0 {
				s.wrote <- time.Now()
			}
		}
	}
}
