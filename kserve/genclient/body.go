package genclient

// An HTTP/1.1 response body read as it arrives: by Content-Length, chunked,
// or up to the connection's close, from the connection's buffered reader,
// allocating nothing (chunk-size lines are read in place).

import (
	"bufio"
	"errors"
	"io"
)

type bodyMode int

const (
	bodyLength  bodyMode = iota // Content-Length bytes
	bodyChunked                 // Transfer-Encoding: chunked
	bodyClose                   // up to the end of the connection
)

type bodyReader struct {
	br   *bufio.Reader
	mode bodyMode
	left int64 // bytes left in the body (length) or the current chunk
	done bool
}

// newBody reads a body whose length fasthttp's header reported: n >= 0
// bytes, -1 chunked, -2 until the close.
func (b *bodyReader) init(br *bufio.Reader, n int) {
	*b = bodyReader{br: br}
	switch {
	case n >= 0:
		b.mode, b.left = bodyLength, int64(n)
		b.done = n == 0
	case n == -1:
		b.mode = bodyChunked
	default:
		b.mode = bodyClose
	}
}

// read reads body bytes into p: io.EOF at the body's clean end,
// io.ErrUnexpectedEOF when the connection ends before it, a malformed
// stream error for bad chunk framing.
func (b *bodyReader) read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	if b.mode == bodyChunked && b.left == 0 {
		if err := b.chunkHeader(); err != nil || b.done {
			return 0, errOr(err, io.EOF)
		}
	}
	if b.mode != bodyClose && int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.br.Read(p)
	b.left -= int64(n)
	switch {
	case err == io.EOF && b.mode == bodyClose:
		b.done = true
		return n, io.EOF
	case err == io.EOF:
		return n, io.ErrUnexpectedEOF
	case err != nil:
		return n, err
	}
	if b.left == 0 {
		switch b.mode {
		case bodyLength:
			b.done = true
		case bodyChunked:
			err = b.crlf()
		}
	}
	return n, err
}

func errOr(err, other error) error {
	if err != nil {
		return err
	}
	return other
}

// chunkHeader reads a chunk-size line; a zero size ends the body (after
// its trailers, which are read and dropped).
func (b *bodyReader) chunkHeader() error {
	line, err := b.line()
	if err != nil {
		return err
	}
	size, digits := int64(0), 0
	for _, c := range line {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		case c == ';' || c == ' ' || c == '\t':
			goto ext // a chunk extension follows
		default:
			return streamErrorf("bad HTTP chunk size line %q", clip(line))
		}
		if digits++; digits > 15 {
			return streamErrorf("HTTP chunk size %q too large", clip(line))
		}
		size = size<<4 | int64(d)
	}
ext:
	if digits == 0 {
		return streamErrorf("bad HTTP chunk size line %q", clip(line))
	}
	if size > 0 {
		b.left = size
		return nil
	}
	for {
		t, err := b.line()
		if err != nil {
			return err
		}
		if len(t) == 0 {
			b.done = true
			return nil
		}
	}
}

// line reads one CRLF- (or LF-) terminated line, in place.
func (b *bodyReader) line() ([]byte, error) {
	line, err := b.br.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return nil, streamErrorf("an HTTP chunk line longer than %d bytes", b.br.Size())
	case err == io.EOF:
		return nil, io.ErrUnexpectedEOF
	case err != nil:
		return nil, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

// crlf reads the line end after a chunk's data.
func (b *bodyReader) crlf() error {
	line, err := b.line()
	if err != nil {
		return err
	}
	if len(line) != 0 {
		return streamErrorf("HTTP chunk data longer than its size (%q)", clip(line))
	}
	return nil
}
