package genclient

// A parser of server-sent events (the WHATWG HTML standard's "event
// stream" format) that allocates nothing once its buffers have grown to the
// stream's largest event: the bytes read are appended to one buffer, lines
// are found in place, and an event's data is gathered in a second buffer
// both reused for the whole stream (and, pooled, for later streams).

import (
	"bytes"
	"fmt"
)

// sseEvent is one dispatched event. Its slices are the parser's and valid
// until the parser is next written to (space) or reset.
type sseEvent struct {
	Type []byte // the event field; empty for the default "message"
	Data []byte // the data lines joined by \n
}

// sseParser splits a stream into events. Write bytes into space(), commit
// them with wrote(n), then call next until it says no more.
type sseParser struct {
	buf     []byte // received bytes; buf[off:] not parsed yet
	off     int
	scan    int    // buf[off:scan] holds no line end (so a long line is searched once)
	data    []byte // the current event's data, lines joined by \n
	typ     []byte // the current event's type
	hasData bool   // a data field was seen since the last dispatch
	skipLF  bool   // the previous line ended in \r: a \n first is its end
	max     int    // the longest line and the largest event accepted
}

const sseMinBuffer = 4 << 10

func (p *sseParser) reset(max int) {
	p.buf, p.off, p.scan = p.buf[:0], 0, 0
	p.data, p.typ = p.data[:0], p.typ[:0]
	p.hasData, p.skipLF = false, false
	p.max = max
}

// space returns free room to read into, moving the unparsed bytes to the
// front first and growing the buffer (up to max plus a read's margin)
// when it is full of one unfinished line.
func (p *sseParser) space() ([]byte, error) {
	if p.off > 0 && (p.off == len(p.buf) || cap(p.buf)-len(p.buf) < sseMinBuffer/4) {
		n := copy(p.buf, p.buf[p.off:])
		p.buf, p.scan, p.off = p.buf[:n], p.scan-p.off, 0
	}
	if cap(p.buf)-len(p.buf) < sseMinBuffer/4 {
		if len(p.buf) > p.max {
			return nil, streamErrorf("an SSE line longer than %d bytes", p.max)
		}
		nb := make([]byte, len(p.buf), max(2*cap(p.buf), sseMinBuffer))
		copy(nb, p.buf)
		p.buf = nb
	}
	return p.buf[len(p.buf):cap(p.buf)], nil
}

// wrote commits n bytes written into space's slice.
func (p *sseParser) wrote(n int) { p.buf = p.buf[:len(p.buf)+n] }

// next returns the next complete event; ok is false when the buffered bytes
// hold none (read more). A line that is not a field this client knows
// (data, event, id, retry, or a comment) is bad framing: an endpoint
// sending anything else is not speaking the protocol asked for.
func (p *sseParser) next() (ev sseEvent, ok bool, err error) {
	for {
		rest := p.buf[p.off:]
		if p.skipLF && len(rest) > 0 {
			p.skipLF = false
			if rest[0] == '\n' {
				p.off++
				continue
			}
		}
		from := max(p.scan-p.off, 0)
		i := bytes.IndexAny(rest[from:], "\r\n")
		if i < 0 {
			p.scan = len(p.buf)
			return sseEvent{}, false, nil
		}
		i += from
		line := rest[:i]
		p.off += i + 1
		p.skipLF = rest[i] == '\r'
		if len(line) == 0 {
			if ev, ok := p.dispatch(); ok {
				return ev, true, nil
			}
			continue
		}
		if err := p.field(line); err != nil {
			return sseEvent{}, false, err
		}
	}
}

// dispatch ends the current event at a blank line; one without data is
// not dispatched (the standard's rule), and its type is forgotten.
func (p *sseParser) dispatch() (sseEvent, bool) {
	if !p.hasData {
		p.typ = p.typ[:0]
		return sseEvent{}, false
	}
	ev := sseEvent{Type: p.typ, Data: p.data}
	p.data, p.typ, p.hasData = p.data[:0], p.typ[:0], false
	return ev, true
}

func (p *sseParser) field(line []byte) error {
	if line[0] == ':' {
		return nil // a comment (keep-alives are sent so)
	}
	name, value, found := bytes.Cut(line, []byte{':'})
	if found && len(value) > 0 && value[0] == ' ' {
		value = value[1:]
	}
	switch string(name) { // no allocation: the compiler compares in place
	case "data":
		if p.hasData {
			p.data = append(p.data, '\n')
		}
		if len(p.data)+len(value) > p.max {
			return streamErrorf("an SSE event larger than %d bytes", p.max)
		}
		p.data = append(p.data, value...)
		p.hasData = true
	case "event":
		p.typ = append(p.typ[:0], value...)
	case "id", "retry":
	default:
		return streamErrorf("bad SSE line %q: not a data, event, id or retry field, nor a comment", clip(line))
	}
	return nil
}

// end checks the stream's end: bytes after the last complete line, or an
// event not closed by its blank line, are a stream cut short.
func (p *sseParser) end() error {
	if rest := p.buf[p.off:]; len(rest) > 0 {
		return streamErrorf("the stream ended inside an SSE line (%q)", clip(rest))
	}
	if p.hasData {
		return streamErrorf("the stream ended inside an SSE event (no blank line after its data)")
	}
	return nil
}

// clip shortens what an error quotes.
func clip(b []byte) string {
	const n = 80
	if len(b) > n {
		return fmt.Sprintf("%s…", b[:n])
	}
	return string(b)
}
