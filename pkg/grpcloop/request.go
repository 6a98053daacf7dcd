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
// The header fields never touch HPACK's dynamic table (RFC 7541): fields
// and names of the static table are referred to by index, which costs the
// server no string decoding (Appendix A: :method POST 3, :scheme http 6,
// names :authority 1, :path 4, content-type 31), and everything else is a
// literal without indexing (§6.2.2), not Huffman-coded. So the same bytes
// are valid on every connection whatever was sent before.
func NewRequest(path, authority string, timeout time.Duration, msg []byte) (*Request, error) {
	if len(msg) > maxMessage-5 {
		return nil, fmt.Errorf("grpcloop: message of %d bytes: larger than gRPC's limit", len(msg))
	}
	var block []byte
	block = appendHpackInt(block, 0x80, 7, staticMethodPost)
	block = appendHpackInt(block, 0x80, 7, staticSchemeHTTP)
	block = appendIndexedName(block, staticPath, path)
	block = appendIndexedName(block, staticAuthority, authority)
	block = appendIndexedName(block, staticContentType, "application/grpc")
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

// HPACK static table indices (RFC 7541 Appendix A).
const (
	staticAuthority   = 1
	staticMethodPost  = 3
	staticPath        = 4
	staticSchemeHTTP  = 6
	staticContentType = 31
)

// appendIndexedName appends a literal header field without indexing whose
// name is static table entry index (§6.2.2: 0000 and a 4-bit-prefix index).
func appendIndexedName(b []byte, index uint64, value string) []byte {
	b = appendHpackInt(b, 0, 4, index)
	return appendHpackString(b, value)
}

// appendHpackInt appends v as an integer with an n-bit prefix (§5.1), the
// first byte's other bits set from first.
func appendHpackInt(b []byte, first byte, n uint, v uint64) []byte {
	limit := uint64(1)<<n - 1
	if v < limit {
		return append(b, first|byte(v))
	}
	b = append(b, first|byte(limit))
	v -= limit
	for v >= 128 {
		b = append(b, byte(v%128+128))
		v /= 128
	}
	return append(b, byte(v))
}

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
	return append(appendHpackInt(b, 0, 7, uint64(len(s))), s...)
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
