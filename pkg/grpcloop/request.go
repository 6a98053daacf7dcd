package grpcloop

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"time"
)

// ModelInferPath is the :path of KServe v2's unary inference call.
const ModelInferPath = "/inference.GRPCInferenceService/ModelInfer"

// maxMessage is the largest message a Request carries: the gRPC length
// prefix is 32 bits, and grpc-go refuses more than 2 GiB - 1 anyway.
const maxMessage = 1<<31 - 1

// Request is one unary call encoded once, sent any number of times on any
// connection: its HEADERS frame (stream id zero, written per send) and its
// gRPC message with the 5-byte length prefix. Sends only read it, so it may
// be shared by loops on other goroutines.
type Request struct {
	headers []byte // a whole HEADERS frame with END_HEADERS
	body    []byte // the length-prefixed message: the DATA payload
	// frames is headers followed by one DATA frame with END_STREAM
	// carrying body, when body fits in the smallest frame size every
	// server accepts: the common case is then one copy.
	frames []byte
}

// NewRequest encodes a unary call of path (ModelInferPath) to authority
// (host:port) carrying msg, an encoded protobuf message (see
// kserve.MarshalGRPCInfer). A timeout > 0 is sent as grpc-timeout, so the
// server may give up when the client does.
//
// The header fields are HPACK literals without indexing (RFC 7541 §6.2.2),
// not Huffman-coded: they add nothing to the server's dynamic table, so the
// same bytes are valid on every connection whatever was sent before.
func NewRequest(path, authority string, timeout time.Duration, msg []byte) (*Request, error) {
	if len(msg) > maxMessage-5 {
		return nil, fmt.Errorf("grpcloop: message of %d bytes: larger than gRPC's limit", len(msg))
	}
	var block []byte
	block = appendLiteral(block, ":method", "POST")
	block = appendLiteral(block, ":scheme", "http")
	block = appendLiteral(block, ":path", path)
	block = appendLiteral(block, ":authority", authority)
	block = appendLiteral(block, "content-type", "application/grpc")
	block = appendLiteral(block, "te", "trailers")
	if timeout > 0 {
		block = appendLiteral(block, "grpc-timeout", grpcTimeout(timeout))
	}
	if len(block) > defaultMaxFrame {
		// One HEADERS frame, no CONTINUATION: only an absurd path or
		// authority would need more.
		return nil, fmt.Errorf("grpcloop: header block of %d bytes: larger than a frame", len(block))
	}
	r := &Request{}
	r.headers = appendFrameHeader(nil, len(block), frameHeaders, flagEndHeaders, 0)
	r.headers = append(r.headers, block...)
	r.body = make([]byte, 5, 5+len(msg))
	binary.BigEndian.PutUint32(r.body[1:5], uint32(len(msg)))
	r.body = append(r.body, msg...)
	if len(r.body) <= defaultMaxFrame {
		r.frames = append(r.frames, r.headers...)
		r.frames = appendFrameHeader(r.frames, len(r.body), frameData, flagEndStream, 0)
		r.frames = append(r.frames, r.body...)
	}
	return r, nil
}

// Len is the request's size on the wire, frames included.
func (r *Request) Len() int { return len(r.headers) + frameHeaderLen + len(r.body) }

// appendLiteral appends a literal header field without indexing, new name
// (RFC 7541 §6.2.2: first byte 0000 0000), both strings raw.
func appendLiteral(b []byte, name, value string) []byte {
	b = append(b, 0)
	b = appendHpackString(b, name)
	return appendHpackString(b, value)
}

// appendHpackString appends a string literal, not Huffman-coded: its
// length as a 7-bit-prefix integer (RFC 7541 §5.1, §5.2), then its bytes.
func appendHpackString(b []byte, s string) []byte {
	n := uint64(len(s))
	if n < 127 {
		b = append(b, byte(n))
	} else {
		b = append(b, 127)
		n -= 127
		for n >= 128 {
			b = append(b, byte(n%128+128))
			n /= 128
		}
		b = append(b, byte(n))
	}
	return append(b, s...)
}

// grpcTimeout is d in the gRPC wire format: at most 8 digits and a unit
// (gRPC over HTTP/2, "Timeout"), in the finest unit that fits, rounded up
// so the server never gives up before the client.
func grpcTimeout(d time.Duration) string {
	const maxDigits = 99_999_999
	units := []struct {
		unit string
		size time.Duration
	}{{"n", time.Nanosecond}, {"u", time.Microsecond}, {"m", time.Millisecond}, {"S", time.Second}, {"M", time.Minute}, {"H", time.Hour}}
	for _, u := range units {
		v := (d + u.size - 1) / u.size
		if v <= maxDigits {
			return strconv.FormatInt(int64(v), 10) + u.unit
		}
	}
	return strconv.Itoa(maxDigits) + "H"
}
