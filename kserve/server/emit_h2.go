package server

// This file follows a gRPC server's HTTP/2 bytes as they are written, for
// EmitConn: frames (a 9-byte header, then the payload), the gRPC messages
// in each stream's DATA frames (a 5-byte prefix: compressed flag, length;
// a message may span frames and writes), and in each completed
// ModelStreamInferResponse the response's id (field 2 infer_response,
// then ModelInferResponse's field 3 id), which names the tokens it carries.

import (
	"encoding/binary"

	"google.golang.org/protobuf/encoding/protowire"
)

// HTTP/2 frame types and flags followed (RFC 9113 §6).
const (
	h2Data      = 0x0
	h2Headers   = 0x1
	h2RSTStream = 0x3
	h2EndStream = 0x1
	h2Padded    = 0x8
)

// h2Msg is a stream's gRPC message being written.
type h2Msg struct {
	pre  [5]byte
	npre int
	buf  []byte // the message so far (reused: no allocation per message)
}

// h2Expect is one id's tokens not yet written: the emissions in order,
// and how many each response carries.
type h2Expect struct {
	toks  []Emission
	sizes []int
}

type h2Wire struct {
	hdr  [9]byte
	nhdr int
	// The current frame: payload bytes left, of which data are DATA bytes
	// for stream (after a pad length byte, when padLen), the rest padding
	// or a payload not read.
	left, data int
	padLen     bool
	stream     uint32
	end        bool // the frame ends its stream
	streams    map[uint32]*h2Msg
	expects    map[string]*h2Expect
}

func newH2Wire() *h2Wire {
	return &h2Wire{streams: map[uint32]*h2Msg{}, expects: map[string]*h2Expect{}}
}

// expect queues toks as the next response with id.
func (w *h2Wire) expect(id string, toks []Emission) {
	x := w.expects[id]
	if x == nil {
		x = &h2Expect{}
		w.expects[id] = x
	}
	x.toks = append(x.toks, toks...)
	x.sizes = append(x.sizes, len(toks))
}

// write follows p and appends to out the tokens it completes.
func (w *h2Wire) write(p []byte, out []Emission) []Emission {
	for len(p) > 0 {
		if w.nhdr < len(w.hdr) {
			k := copy(w.hdr[w.nhdr:], p)
			p, w.nhdr = p[k:], w.nhdr+k
			if w.nhdr == len(w.hdr) {
				w.frame()
			}
		} else {
			p, out = w.payload(p, out)
		}
		if w.nhdr == len(w.hdr) && w.left == 0 {
			w.frameDone()
		}
	}
	return out
}

// frame starts the frame whose header is complete.
func (w *h2Wire) frame() {
	h := w.hdr[:]
	w.left = int(h[0])<<16 | int(h[1])<<8 | int(h[2])
	typ, flags := h[3], h[4]
	w.stream = binary.BigEndian.Uint32(h[5:]) & 0x7fffffff
	w.end = flags&h2EndStream != 0 && (typ == h2Data || typ == h2Headers) || typ == h2RSTStream
	w.data, w.padLen = 0, false
	if typ == h2Data {
		w.data = w.left
		w.padLen = flags&h2Padded != 0
	}
}

// frameDone ends the current frame (its header and payload all seen).
func (w *h2Wire) frameDone() {
	if w.end {
		delete(w.streams, w.stream)
	}
	w.nhdr, w.end = 0, false
}

// payload consumes the current frame's payload from p.
func (w *h2Wire) payload(p []byte, out []Emission) ([]byte, []Emission) {
	if w.padLen {
		// The pad length byte: the padding at the end is not data.
		w.data -= 1 + int(p[0])
		w.left--
		w.padLen = false
		return p[1:], out
	}
	k := min(w.left, len(p))
	d := min(w.data, k)
	if d > 0 {
		out = w.messages(p[:d], out)
		w.data -= d
	}
	w.left -= k
	return p[k:], out
}

// messages follows DATA bytes of the current stream.
func (w *h2Wire) messages(b []byte, out []Emission) []Emission {
	m := w.streams[w.stream]
	if m == nil {
		m = &h2Msg{}
		w.streams[w.stream] = m
	}
	for len(b) > 0 {
		if m.npre < len(m.pre) {
			k := copy(m.pre[m.npre:], b)
			b, m.npre = b[k:], m.npre+k
			m.buf = m.buf[:0]
		} else {
			need := int(binary.BigEndian.Uint32(m.pre[1:])) - len(m.buf)
			k := min(need, len(b))
			m.buf = append(m.buf, b[:k]...)
			b = b[k:]
		}
		if m.npre == len(m.pre) && len(m.buf) == int(binary.BigEndian.Uint32(m.pre[1:])) {
			if m.pre[0] == 0 { // a compressed message is not read
				out = w.completed(m.buf, out)
			}
			m.npre = 0
		}
	}
	return out
}

// completed appends the tokens of the response msg: the next ones expected
// for its id (none: a response not carrying tokens, or an unknown id).
func (w *h2Wire) completed(msg []byte, out []Emission) []Emission {
	id, ok := responseID(msg)
	if !ok {
		return out
	}
	x := w.expects[string(id)]
	if x == nil || len(x.sizes) == 0 {
		return out
	}
	n := x.sizes[0]
	out = append(out, x.toks[:n]...)
	x.toks, x.sizes = x.toks[n:], x.sizes[1:]
	if len(x.sizes) == 0 {
		delete(w.expects, string(id))
	}
	return out
}

// responseID reads a ModelStreamInferResponse's infer_response.id, without
// copying.
func responseID(msg []byte) ([]byte, bool) {
	resp, ok := bytesField(msg, 2)
	if !ok {
		return nil, false
	}
	return bytesField(resp, 3)
}

// bytesField is the last occurrence of length-delimited field num in msg
// (proto3's rule for a repeated singular field).
func bytesField(msg []byte, num protowire.Number) ([]byte, bool) {
	var v []byte
	found := false
	for len(msg) > 0 {
		n, typ, k := protowire.ConsumeTag(msg)
		if k < 0 {
			return nil, false
		}
		msg = msg[k:]
		if n == num && typ == protowire.BytesType {
			b, k := protowire.ConsumeBytes(msg)
			if k < 0 {
				return nil, false
			}
			v, found = b, true
			msg = msg[k:]
			continue
		}
		k = protowire.ConsumeFieldValue(n, typ, msg)
		if k < 0 {
			return nil, false
		}
		msg = msg[k:]
	}
	return v, found
}
