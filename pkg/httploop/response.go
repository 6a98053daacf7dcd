package httploop

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/httpclient"
)

// Limits of what the parser accepts from a server.
const (
	maxHeaderBytes = 64 << 10
	// errBodyKeep is how much of a non-2xx body becomes the error message,
	// as httpclient.Client does.
	errBodyKeep = 512
	// maxChunkLine bounds a chunk's size line (its extensions included)
	// and a trailer line: past it the peer is not speaking HTTP.
	maxChunkLine = 4 << 10
)

// errNoResponse is a connection that ended before any byte of the answer
// (transportError makes it a kserve.ErrConnectionClosed).
var errNoResponse = errors.New("end of stream before any response byte")

// Body framing of the response being parsed.
const (
	frameLength  = iota // Content-Length
	frameChunked        // Transfer-Encoding: chunked
	frameClose          // neither: the body runs to the end of the connection
)

// Parser states.
const (
	stHeader = iota
	stBody
	stChunkSize
	stChunkExt
	stChunkSizeLF
	stChunkData
	stChunkDataCR
	stChunkDataLF
	stTrailerStart
	stTrailerLine
	stTrailerLF
	stDone
)

// response parses one HTTP/1.1 response at a time from a byte stream, in
// pieces as they arrive, keeping of a 2xx body only its JSON: the header of
// a binary-extension body (Inference-Header-Content-Length bytes), or a
// whole JSON body, for the answer check (Config.Check); the tensor data of
// a binary body costs no memory. It is reused from response to response
// (reset) and allocates only when a header block arrives split across
// reads, or a JSON larger than any before.
type response struct {
	state     int
	hdr       []byte // a header block that arrived in pieces
	status    int
	frame     int
	closeConn bool
	inferLen  int   // Inference-Header-Content-Length; -1 when absent
	left      int64 // body (frameLength) or chunk bytes still to come
	bodyLen   int64
	first     byte   // first non-whitespace byte of the body; 0 before it
	errBody   []byte // the start of a non-2xx body
	json      []byte // a 2xx body's JSON, within limit
	sawByte   bool   // any byte of this response arrived
	line      int    // bytes of the chunk size or trailer line so far
	interim   int    // interim (1xx) answers skipped before this one

	// limit bounds the body (Config.MaxResponseBytes); budget is what
	// the JSON of every connection's answer may hold at once, of which
	// held is this answer's: what json grew by, given back at reset.
	limit  int
	budget *httpclient.Budget
	held   int64
}

// maxInterim bounds the interim answers skipped before an answer: the
// pool's fasthttp allows as many.
const maxInterim = 100

func (r *response) reset() {
	json := r.json[:0]
	if cap(json) > httpclient.KeepBetweenAnswers {
		json = nil
	}
	if r.held > 0 {
		r.budget.Release(r.held)
	}
	*r = response{hdr: r.hdr[:0], errBody: r.errBody[:0], json: json, inferLen: -1, limit: r.limit, budget: r.budget}
}

// feed consumes the start of b and returns how many bytes it used and
// whether the response is complete; bytes after a complete response are
// left unconsumed.
func (r *response) feed(b []byte) (int, bool, error) {
	if len(b) > 0 {
		r.sawByte = true
	}
	n := 0
	for n < len(b) && r.state != stDone {
		used, err := r.step(b[n:])
		if err != nil {
			return n, false, err
		}
		n += used
	}
	return n, r.state == stDone, nil
}

// eof tells the parser the connection ended; it reports whether that
// completed the response (a body framed by the connection's end).
func (r *response) eof() (bool, error) {
	if r.state == stBody && r.frame == frameClose {
		r.state = stDone
		return true, nil
	}
	if r.state == stDone {
		return true, nil
	}
	if !r.sawByte {
		return false, errNoResponse
	}
	return false, fmt.Errorf("%w: %w: end of stream in the middle of a response", kserve.ErrTransport, kserve.ErrConnectionClosed)
}

func (r *response) step(b []byte) (int, error) {
	switch r.state {
	case stHeader:
		return r.header(b)
	case stBody:
		n := len(b)
		if r.frame == frameLength && int64(n) > r.left {
			n = int(r.left)
		}
		if err := r.body(b[:n]); err != nil {
			return n, err
		}
		if r.frame == frameLength {
			r.left -= int64(n)
			if r.left == 0 {
				r.state = stDone
			}
		}
		return n, nil
	case stChunkData:
		n := len(b)
		if int64(n) > r.left {
			n = int(r.left)
		}
		if err := r.body(b[:n]); err != nil {
			return n, err
		}
		if r.left -= int64(n); r.left == 0 {
			r.state = stChunkDataCR
		}
		return n, nil
	}
	return 1, r.chunkByte(b[0])
}

// chunkByte advances the chunked-encoding state machine by one byte of
// framing (sizes, extensions, CRLFs, trailers).
func (r *response) chunkByte(c byte) error {
	if err := r.lineByte(); err != nil {
		return err
	}
	switch r.state {
	case stChunkSize:
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
			if r.left > (1<<40)>>4 {
				return kserve.Malformedf("HTTP chunk size too large")
			}
			r.left = r.left<<4 | int64(unhex(c))
		case c == ';' || c == ' ' || c == '\t':
			r.state = stChunkExt
		case c == '\r':
			r.state = stChunkSizeLF
		case c == '\n':
			return r.endChunkSize()
		default:
			return kserve.Malformedf("bad HTTP chunk size byte %q", c)
		}
	case stChunkExt:
		switch c {
		case '\r':
			r.state = stChunkSizeLF
		case '\n':
			return r.endChunkSize()
		}
	case stChunkSizeLF:
		if c != '\n' {
			return kserve.Malformedf("HTTP chunk size line not ended by CRLF")
		}
		return r.endChunkSize()
	case stChunkDataCR:
		switch c {
		case '\r':
			r.state = stChunkDataLF
		case '\n':
			r.startChunk()
		default:
			return kserve.Malformedf("HTTP chunk data longer than its size")
		}
	case stChunkDataLF:
		if c != '\n' {
			return kserve.Malformedf("HTTP chunk data not ended by CRLF")
		}
		r.startChunk()
	case stTrailerStart:
		switch c {
		case '\r':
			r.state = stTrailerLF
		case '\n':
			r.state = stDone
		default:
			r.state = stTrailerLine
		}
	case stTrailerLine:
		if c == '\n' {
			r.state, r.line = stTrailerStart, 0
		}
	case stTrailerLF:
		if c != '\n' {
			return kserve.Malformedf("HTTP trailer not ended by CRLF")
		}
		r.state = stDone
	}
	return nil
}

// lineByte counts a byte of a chunk size line (its extensions included)
// or of a trailer line: a line without end is not HTTP, and would be read
// for ever.
func (r *response) lineByte() error {
	switch r.state {
	case stChunkSize, stChunkExt, stTrailerLine:
		if r.line++; r.line > maxChunkLine {
			return kserve.Malformedf("HTTP chunk size or trailer line over %d bytes", maxChunkLine)
		}
	}
	return nil
}

func (r *response) startChunk() { r.state, r.left, r.line = stChunkSize, 0, 0 }

// endChunkSize ends a chunk's size line: the chunk's data follows, or the
// trailer after the last chunk. A chunk that would take the body past the
// limit fails before a byte of it is read.
func (r *response) endChunkSize() error {
	r.line = 0
	if r.left == 0 {
		r.state = stTrailerStart
		return nil
	}
	if r.bodyLen+r.left > int64(r.limit) {
		return httpclient.TooLarge(r.bodyLen+r.left, r.limit)
	}
	r.state = stChunkData
	return nil
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// body takes body bytes: their count, the first non-whitespace byte, for a
// 2xx answer its JSON, and for a non-2xx answer the start of the message.
// A body past the limit fails (a body framed by the connection's end: the
// others fail on their announced sizes).
func (r *response) body(b []byte) error {
	if r.bodyLen+int64(len(b)) > int64(r.limit) {
		return httpclient.TooLarge(r.bodyLen+int64(len(b)), r.limit)
	}
	if r.ok() {
		if err := r.keepJSON(b); err != nil {
			return err
		}
	}
	r.bodyLen += int64(len(b))
	if r.first == 0 {
		for _, c := range b {
			if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
				r.first = c
				break
			}
		}
	}
	if !r.ok() && len(r.errBody) < errBodyKeep {
		r.errBody = append(r.errBody, b[:min(len(b), errBodyKeep-len(r.errBody))]...)
	}
	return nil
}

// keepJSON keeps the bytes of b, the body from offset bodyLen on, that are
// JSON: all of a body without Inference-Header-Content-Length, else its
// first inferLen bytes. The buffer grows by reservations from the budget:
// at once to the JSON's end where it is known (Inference-Header-Content-
// Length, or a Content-Length body's), else by doubling.
func (r *response) keepJSON(b []byte) error {
	end := int64(r.inferLen)
	if end < 0 {
		end = r.bodyLen + int64(len(b))
	}
	n := end - r.bodyLen
	if n <= 0 {
		return nil
	}
	take := b[:min(int64(len(b)), n)]
	if need := len(r.json) + len(take); need > cap(r.json) {
		size := max(2*cap(r.json), need, 4<<10)
		switch {
		case r.inferLen >= 0:
			size = max(r.inferLen, need)
		case r.frame == frameLength:
			size = max(int(r.bodyLen+r.left), need)
		}
		grown, err := r.budget.Grow(r.json, min(size, r.limit), &r.held)
		if err != nil {
			return err
		}
		r.json = grown
	}
	r.json = append(r.json, take...)
	return nil
}

func (r *response) ok() bool { return r.status >= 200 && r.status < 300 }

// header collects the header block, parsing it straight from b when it
// arrived whole (the usual case: no copy).
func (r *response) header(b []byte) (int, error) {
	if len(r.hdr) == 0 {
		end, err := r.parseHeader(b)
		if end >= 0 || err != nil {
			return end, err
		}
	}
	old := len(r.hdr)
	take := min(len(b), maxHeaderBytes+4-old)
	r.hdr = append(r.hdr, b[:take]...)
	end, err := r.parseHeader(r.hdr)
	if err != nil {
		return take, err
	}
	if end < 0 {
		if len(r.hdr) > maxHeaderBytes {
			return take, kserve.Malformedf("HTTP response header over %d bytes", maxHeaderBytes)
		}
		return take, nil
	}
	r.hdr = r.hdr[:0]
	return end - old, nil
}

// parseHeader reads the status line and the headers that frame the body
// from the start of b, and returns the length of the header block through
// its blank line, or -1 when the block is not all there yet (the fields it
// set are set again, to the same values, when the rest has arrived). One
// pass over the lines: finding the block's end first and then parsing it
// scanned the header twice (perf: 1.8% of the CPU at 20k QPS).
func (r *response) parseHeader(b []byte) (int, error) {
	line, rest, ok := cutLine(b)
	if !ok {
		return -1, nil
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return 0, kserve.Malformedf("bad HTTP status line %q", clip(line))
	}
	st := 0
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return 0, kserve.Malformedf("bad HTTP status line %q", clip(line))
		}
		st = st*10 + int(c-'0')
	}
	if len(line) > 12 && line[12] != ' ' {
		return 0, kserve.Malformedf("bad HTTP status line %q", clip(line))
	}
	r.status = st
	http10 := line[7] == '0'
	r.closeConn = http10
	length := int64(-1)
	for {
		line, rest, ok = cutLine(rest)
		if !ok {
			return -1, nil
		}
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return 0, kserve.Malformedf("bad HTTP header line %q", clip(line))
		}
		// The length first: most headers are none of these, and are
		// passed over without trimming or a case-folding compare.
		switch len(name) {
		case len("Content-Length"), len("Transfer-Encoding"), len("Connection"), len(kserve.HeaderInferenceContentLength):
		default:
			continue
		}
		value = bytes.TrimSpace(value)
		switch len(name) {
		case len("Content-Length"):
			if !bytes.EqualFold(name, []byte("Content-Length")) {
				continue
			}
			n, ok := parseUint(value)
			if !ok || (length >= 0 && n != length) {
				return 0, kserve.Malformedf("bad Content-Length %q", clip(value))
			}
			length = n
		case len("Transfer-Encoding"):
			if !bytes.EqualFold(name, []byte("Transfer-Encoding")) {
				continue
			}
			if !hasToken(value, "chunked") {
				return 0, kserve.Malformedf("unsupported Transfer-Encoding %q", clip(value))
			}
			r.frame = frameChunked
		case len("Connection"):
			if !bytes.EqualFold(name, []byte("Connection")) {
				continue
			}
			if hasToken(value, "close") {
				r.closeConn = true
			} else if http10 && hasToken(value, "keep-alive") {
				r.closeConn = false
			}
		case len(kserve.HeaderInferenceContentLength):
			if !bytes.EqualFold(name, []byte(kserve.HeaderInferenceContentLength)) {
				continue
			}
			// As kserve.ParseInferenceHeaderLength, without its allocation.
			n, ok := parseUint(value)
			switch {
			case len(value) == 0:
				r.inferLen = -1
			case !ok || n > 1<<40:
				return 0, kserve.Malformedf("bad %s %q", kserve.HeaderInferenceContentLength, clip(value))
			default:
				r.inferLen = int(n)
			}
		}
	}
	end := len(b) - len(rest)
	switch {
	case st == 101:
		// A protocol switch nobody asked for: the answer (a failed one),
		// with no body, after which the connection no longer speaks HTTP.
		r.state, r.closeConn = stDone, true
	case st >= 100 && st < 200:
		// An interim answer (100 Continue, 103): the real one follows,
		// within maxInterim of them, as fasthttp bounds the pool's.
		n := r.interim + 1
		if n > maxInterim {
			return 0, kserve.Malformedf("more than %d interim (1xx) answers before the answer", maxInterim)
		}
		r.reset()
		r.interim = n
		return end, nil
	case st == 204 || st == 304:
		r.state = stDone
	case r.frame == frameChunked:
		r.state = stChunkSize
	case length > int64(r.limit):
		// Refused on its header: not a byte of it is read.
		return end, httpclient.TooLarge(length, r.limit)
	case length >= 0:
		r.frame, r.left = frameLength, length
		r.state = stBody
		if length == 0 {
			r.state = stDone
		}
	default:
		r.frame, r.closeConn = frameClose, true
		r.state = stBody
	}
	return end, nil
}

// check applies httpclient.Client.InferPreparedCheck's rules to a complete
// response: 2xx, a non-empty body that starts with a JSON object, an
// Inference-Header-Content-Length within it; then, with answer set, hands
// it the answer's JSON, tag and the bytes after the JSON (-1: a JSON body)
// and returns its verdict.
func (r *response) check(answer func(tag uint64, json []byte, binLen int64) error, tag uint64) error {
	if err := r.framing(); err != nil || answer == nil {
		return err
	}
	bin := int64(-1)
	if r.inferLen >= 0 {
		bin = r.bodyLen - int64(r.inferLen)
	}
	return answer(tag, r.json, bin)
}

// framing is check without the answer check.
func (r *response) framing() error {
	if !r.ok() {
		msg := strings.TrimSpace(string(r.errBody))
		var e struct {
			Error *string `json:"error"`
		}
		if json.Unmarshal(r.errBody, &e) == nil && e.Error != nil {
			msg = *e.Error
		}
		if msg == "" {
			msg = fmt.Sprintf("status %d", r.status)
		}
		return &kserve.Error{Code: kserve.CodeFromHTTP(r.status), HTTPStatus: r.status, Message: msg}
	}
	switch {
	case r.bodyLen == 0:
		return kserve.Malformedf("empty inference response")
	case r.inferLen == 0 || int64(r.inferLen) > r.bodyLen:
		return kserve.Malformedf("%s %d with a body of %d bytes", kserve.HeaderInferenceContentLength, r.inferLen, r.bodyLen)
	case r.first != '{':
		return kserve.Malformedf("inference response does not start with a JSON object")
	}
	return nil
}

// parseUint reads a decimal header value; false if it is not one.
func parseUint(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 18 {
		return 0, false
	}
	n := int64(0)
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// cutLine splits off b's first line, without its CR LF (or bare LF); false
// if no line end has arrived yet.
func cutLine(b []byte) (line, rest []byte, ok bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return nil, b, false
	}
	line = b[:i]
	if i > 0 && line[i-1] == '\r' {
		line = line[:i-1]
	}
	return line, b[i+1:], true
}

// hasToken reports whether the comma-separated list v holds tok.
func hasToken(v []byte, tok string) bool {
	for len(v) > 0 {
		var t []byte
		t, v, _ = bytes.Cut(v, []byte(","))
		if bytes.EqualFold(bytes.TrimSpace(t), []byte(tok)) {
			return true
		}
	}
	return false
}

func clip(b []byte) []byte { return b[:min(len(b), 80)] }
