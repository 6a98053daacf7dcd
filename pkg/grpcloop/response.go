package grpcloop

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/netloadgen/netloadgen/kserve"
)

// response follows one stream's answer: its header fields as the HPACK
// decoder emits them, its DATA as gRPC length-prefixed messages, and at
// END_STREAM its outcome. Of a message it keeps, as the bytes arrive, every
// top-level field but raw_output_contents (ModelInferResponse's field 6:
// the tensor bytes, skipped), for the answer check (Config.Check).
type response struct {
	headers    bool // the first header block is complete
	httpStatus int
	grpcType   bool // content-type application/grpc[+proto...]
	status     int  // grpc-status; -1: none yet
	message    string
	msgs       int
	prefix     [5]byte
	prefixN    int    // bytes of the current message's prefix seen
	left       uint64 // bytes of the current message still to come
	err        error  // the first framing error
	skim       skimmer
}

func (r *response) reset() { *r = response{status: -1, skim: r.skim.reuse()} }

// field takes one decoded header field of the first block (trailers false)
// or of the trailers.
func (r *response) field(name, value string, trailers bool) {
	switch name {
	case ":status":
		if trailers {
			r.fail("%w: :status in trailers", kserve.ErrMalformed)
			return
		}
		n, err := strconv.Atoi(value)
		if err != nil {
			r.fail("%w: :status %q", kserve.ErrMalformed, value)
			return
		}
		r.httpStatus = n
	case "content-type":
		// gRPC over HTTP/2: "application/grpc" optionally followed by
		// "+proto" or ";params".
		r.grpcType = value == "application/grpc" || strings.HasPrefix(value, "application/grpc+") || strings.HasPrefix(value, "application/grpc;")
	case "grpc-status":
		n, err := strconv.Atoi(value)
		if err != nil || n < 0 {
			r.fail("%w: grpc-status %q", kserve.ErrMalformed, value)
			return
		}
		r.status = n
	case "grpc-message":
		r.message = percentDecode(value)
	}
}

// endBlock notes that a header block ended.
func (r *response) endBlock() { r.headers = true }

// data takes a DATA payload (padding removed).
func (r *response) data(p []byte) {
	if !r.headers {
		r.fail("%w: DATA before HEADERS", kserve.ErrMalformed)
		return
	}
	for len(p) > 0 && r.err == nil {
		if r.left == 0 {
			n := copy(r.prefix[r.prefixN:], p)
			r.prefixN += n
			p = p[n:]
			if r.prefixN < 5 {
				return
			}
			if r.prefix[0] > 1 {
				r.fail("%w: gRPC message flag %d", kserve.ErrMalformed, r.prefix[0])
				return
			}
			r.left = uint64(binary.BigEndian.Uint32(r.prefix[1:]))
			r.prefixN = 0
			r.msgs++
			r.skim.compressed = r.skim.compressed || r.prefix[0] == 1
			continue
		}
		n := min(r.left, uint64(len(p)))
		r.skim.take(p[:n])
		r.left -= n
		p = p[n:]
	}
}

func (r *response) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

// result is the call's outcome once the stream has ended: with answer
// set, an answer that is otherwise a success goes to it with tag, and its
// verdict is the call's.
func (r *response) result(answer func(tag uint64, msg []byte) error, tag uint64) error {
	if err := r.framing(); err != nil || answer == nil {
		return err
	}
	if err := r.skim.end(); err != nil {
		return err
	}
	return answer(tag, r.skim.kept)
}

// framing is result without the answer check.
func (r *response) framing() error {
	switch {
	case r.err != nil:
		return r.err
	case r.httpStatus != 200:
		// gRPC's HTTP-to-status mapping: an answer not from a gRPC
		// server (a proxy's error page, a plain HTTP server).
		return &kserve.Error{Code: codeFromHTTP(r.httpStatus), Message: fmt.Sprintf("HTTP status %d", r.httpStatus)}
	case r.status < 0:
		return fmt.Errorf("%w: answer without grpc-status", kserve.ErrMalformed)
	case r.status != 0:
		return &kserve.Error{Code: codes.Code(r.status), Message: r.message}
	case !r.grpcType:
		return fmt.Errorf("%w: answer is not application/grpc", kserve.ErrMalformed)
	case r.prefixN != 0 || r.left != 0:
		return fmt.Errorf("%w: gRPC message cut short", kserve.ErrMalformed)
	case r.msgs != 1:
		return fmt.Errorf("%w: %d messages in a unary answer", kserve.ErrMalformed, r.msgs)
	}
	return nil
}

// codeFromHTTP is gRPC's mapping of an HTTP status that came without a
// gRPC status (doc/http-grpc-status-mapping.md in the gRPC repository).
func codeFromHTTP(status int) codes.Code {
	switch status {
	case 400:
		return codes.Internal
	case 401:
		return codes.Unauthenticated
	case 403:
		return codes.PermissionDenied
	case 404:
		return codes.Unimplemented
	case 429, 502, 503, 504:
		return codes.Unavailable
	}
	return codes.Unknown
}

// percentDecode undoes grpc-message's percent-encoding (gRPC over HTTP/2,
// "Status-Message"); a malformed escape is kept as it is.
func percentDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b = append(b, byte(v))
				i += 2
				continue
			}
		}
		b = append(b, s[i])
	}
	return string(b)
}
