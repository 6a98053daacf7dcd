package server

// This file follows an HTTP/1.1 response's bytes as they are written, for
// EmitConn: the header, then a chunked body of server-sent events (each
// event ends at a blank line, "\n\n", whatever chunks and writes split it)
// or a body of known length.

// sseWire states.
const (
	sseIdle      = iota // no response followed: bytes pass unread
	sseHeader           // the header, up to its blank line
	sseChunkSize        // a chunk's size line (hex, extensions, CRLF)
	sseChunkData        // a chunk's data
	sseChunkEnd         // the CRLF after a chunk's data
	sseBody             // a body of known length
)

// sseEvent is one event the handler queued; tok says it carries a token.
type sseEvent struct {
	tok bool
	e   Emission
}

type sseWire struct {
	state int
	// header: how much of "\r\n\r\n" was matched; chunk size line: past
	// the digits (an extension or the CR)
	match int
	left  int  // chunk data, or a known-length body: bytes left
	nl    bool // the body's latest byte ended a line
	// events are the events queued and not yet written, in order from head.
	events []sseEvent
	head   int
	whole  []Emission // a known-length body's tokens
}

// begin starts following a response: chunked (n < 0) or of n body bytes
// carrying toks.
func (w *sseWire) begin(n int, toks []Emission) {
	w.state, w.match, w.nl = sseHeader, 0, false
	w.events, w.head = w.events[:0], 0
	w.left = n
	w.whole = append(w.whole[:0], toks...)
}

// queue adds the events of b (one per "\n\n"); the last carries tok.
func (w *sseWire) queue(b []byte, tok *Emission) {
	n := countEvents(b)
	for i := range n {
		ev := sseEvent{}
		if i == n-1 && tok != nil {
			ev = sseEvent{tok: true, e: *tok}
		}
		w.events = append(w.events, ev)
	}
}

// countEvents counts the blank lines ending events in b (alone: b holds
// whole events).
func countEvents(b []byte) int {
	n, nl := 0, false
	for _, c := range b {
		if c == '\n' {
			if nl {
				n++
			}
			nl = !nl
		} else {
			nl = false
		}
	}
	return n
}

// write follows p and appends to out the tokens it completes.
func (w *sseWire) write(p []byte, out []Emission) []Emission {
	for len(p) > 0 {
		switch w.state {
		case sseIdle:
			return out
		case sseHeader:
			p = w.header(p)
			if w.state == sseBody && w.left == 0 {
				out = w.endWhole(out)
			}
		case sseChunkSize:
			p = w.chunkSize(p)
		case sseChunkData:
			k := min(w.left, len(p))
			out = w.events1(p[:k], out)
			p, w.left = p[k:], w.left-k
			if w.left == 0 {
				w.state, w.match = sseChunkEnd, 0
			}
		case sseChunkEnd:
			k := min(2-w.match, len(p))
			p, w.match = p[k:], w.match+k
			if w.match == 2 {
				w.state, w.match = sseChunkSize, 0
			}
		case sseBody:
			k := min(w.left, len(p))
			p, w.left = p[k:], w.left-k
			if w.left == 0 {
				out = w.endWhole(out)
			}
		}
	}
	return out
}

// header consumes the header up to its blank line.
func (w *sseWire) header(p []byte) []byte {
	const end = "\r\n\r\n"
	for i, c := range p {
		switch {
		case c == end[w.match]:
			w.match++
		case c == end[0]:
			w.match = 1
		default:
			w.match = 0
		}
		if w.match == len(end) {
			w.match = 0
			if w.left >= 0 {
				w.state = sseBody
			} else {
				w.state, w.left = sseChunkSize, 0
			}
			return p[i+1:]
		}
	}
	return nil
}

// chunkSize consumes a chunk's size line; a last chunk (size 0) ends the
// response (its trailer and CRLF pass unread).
func (w *sseWire) chunkSize(p []byte) []byte {
	for i, c := range p {
		switch {
		case c == '\n':
			if w.left == 0 {
				w.state = sseIdle
			} else {
				w.state = sseChunkData
			}
			w.match = 0
			return p[i+1:]
		case w.match == 0 && hexDigit(c) >= 0:
			w.left = w.left<<4 | hexDigit(c)
		default:
			w.match = 1 // CR or an extension: the digits are over
		}
	}
	return nil
}

func hexDigit(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// events1 follows body data, appending the token of each event it ends.
func (w *sseWire) events1(b []byte, out []Emission) []Emission {
	for _, c := range b {
		if c != '\n' {
			w.nl = false
			continue
		}
		if !w.nl {
			w.nl = true
			continue
		}
		w.nl = false
		if w.head < len(w.events) {
			if ev := w.events[w.head]; ev.tok {
				out = append(out, ev.e)
			}
			w.head++
		}
	}
	if w.head == len(w.events) {
		w.events, w.head = w.events[:0], 0 // all written: reuse the queue
	}
	return out
}

// endWhole records a known-length body's tokens at its last byte.
func (w *sseWire) endWhole(out []Emission) []Emission {
	out = append(out, w.whole...)
	w.whole = w.whole[:0]
	w.state = sseIdle
	return out
}
