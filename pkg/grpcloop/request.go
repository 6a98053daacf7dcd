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
// connection: its header block and its gRPC message with the 5-byte length
// prefix (the DATA payload). Sends only read it, so it may be shared by
// loops on other goroutines.
//
// The header block comes in three forms (RFC 7541). lit never touches
// HPACK's dynamic table: fields and names of the static table are referred
// to by index (Appendix A: :method POST 3, :scheme http 6, names
// :authority 1, :path 4, content-type 31), everything else is a literal
// without indexing (§6.2.2), so it is valid on any connection whatever was
// sent before. prime sends the same fields as literals with incremental
// indexing (§6.2.1), which adds them to the server's table; after it,
// indexed names each of them by its table index (§6.1), one byte a field.
// A connection sends prime once and indexed from then on, as gRPC's own
// clients index their headers, so the server sees a call as it would from
// them: it decodes no strings, and reads 7 bytes of header block instead of
// ~100 (bench/nullserver's grpc-go, gRPC Offline: its HPACK decoder went
// from 5.8% to 4.7% of its CPU).
type Request struct {
	lit, prime, indexed []byte
	tableSize           int    // the room prime's fields take in the table (§4.1)
	body                []byte // the length-prefixed message: the DATA payload
}

// hpackField is a header field of the dynamic part of a call's block, its
// name by static index when it has one (0: a literal name).
type hpackField struct {
	nameIndex   uint64
	name, value string
}

// NewRequest encodes a unary call of path (ModelInferPath) to authority
// (host:port, or the name an ingress routes by) carrying msg, an encoded
// protobuf message (see kserve.MarshalGRPCInfer). A timeout > 0 is sent as
// grpc-timeout, so the server may give up when the client does. md are
// further metadata, name/value pairs, names lowercased (the caller checks
// them: kserve.CheckHeaderName), sent after gRPC's own fields.
func NewRequest(path, authority string, timeout time.Duration, msg []byte, md ...string) (*Request, error) {
	if len(msg) > maxMessage-5 {
		return nil, fmt.Errorf("grpcloop: message of %d bytes: larger than gRPC's limit", len(msg))
	}
	if len(md)%2 != 0 {
		return nil, fmt.Errorf("grpcloop: metadata of %d strings: want name/value pairs", len(md))
	}
	fields := []hpackField{
		{staticPath, ":path", path},
		{staticAuthority, ":authority", authority},
		{staticContentType, "content-type", "application/grpc"},
		{0, "te", "trailers"},
	}
	if timeout > 0 {
		fields = append(fields, hpackField{0, "grpc-timeout", grpcTimeout(timeout)})
	}
	for i := 0; i < len(md); i += 2 {
		fields = append(fields, hpackField{0, md[i], md[i+1]})
	}
	var static []byte
	static = appendHpackInt(static, 0x80, 7, staticMethodPost)
	static = appendHpackInt(static, 0x80, 7, staticSchemeHTTP)
	r := &Request{}
	r.lit = append([]byte(nil), static...)
	r.prime = append([]byte(nil), static...)
	r.indexed = append([]byte(nil), static...)
	for i, f := range fields {
		r.lit = appendField(r.lit, 0x00, 4, f)
		r.prime = appendField(r.prime, 0x40, 6, f)
		// The newest entry is index 62, the first added the highest.
		r.indexed = appendHpackInt(r.indexed, 0x80, 7, uint64(staticTableLen+len(fields)-i))
		r.tableSize += len(f.name) + len(f.value) + 32
	}
	if max(len(r.lit), len(r.prime))+1 > defaultMaxFrame {
		// One HEADERS frame, no CONTINUATION: only an absurd path,
		// authority or metadata would need more.
		return nil, fmt.Errorf("grpcloop: header block of %d bytes: larger than a frame", len(r.lit))
	}
	r.body = make([]byte, 5, 5+len(msg))
	binary.BigEndian.PutUint32(r.body[1:5], uint32(len(msg)))
	r.body = append(r.body, msg...)
	return r, nil
}

// appendField appends f as a literal whose first byte carries pattern and
// an n-bit-prefix name index (§6.2.1 with 01 and 6 bits, §6.2.2 with 0000
// and 4), strings raw.
func appendField(b []byte, pattern byte, n uint, f hpackField) []byte {
	b = appendHpackInt(b, pattern, n, f.nameIndex)
	if f.nameIndex == 0 {
		b = appendHpackString(b, f.name)
	}
	return appendHpackString(b, f.value)
}

// Len is the request's largest size on the wire, frames included.
func (r *Request) Len() int { return frameHeaderLen + len(r.lit) + 1 + frameHeaderLen + len(r.body) }

// HPACK static table indices (RFC 7541 Appendix A).
const (
	staticAuthority   = 1
	staticMethodPost  = 3
	staticPath        = 4
	staticSchemeHTTP  = 6
	staticContentType = 31
	staticTableLen    = 61
)

// defaultHeaderTable is HPACK's dynamic table size until the server's
// SETTINGS say otherwise (RFC 7540 §6.5.2).
const defaultHeaderTable = 4096

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
