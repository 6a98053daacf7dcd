package qsl

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// npyHeader is what a .npy file's header says about its array.
type npyHeader struct {
	Descr  string  // numpy's dtype string, e.g. "<f4"
	Shape  []int64 // () is a scalar
	Offset int64   // where the data starts
}

// npyMagic opens every .npy file (format versions 1.0 to 3.0).
var npyMagic = []byte("\x93NUMPY")

// maxNPYHeader bounds a version 2/3 header: real ones are under a hundred
// bytes, and the length field is a file's word, not ours, to allocate.
const maxNPYHeader = 1 << 20

var errNPY = errors.New("not a valid .npy file")

// readNPYHeader parses a .npy header: the magic, the version byte pair, a
// little-endian header length (2 bytes in 1.0, 4 in 2.0 and 3.0) and a
// Python dict literal with the keys descr, fortran_order and shape.
// Fortran order is refused: the protocol's tensors are row-major, and
// transposing would mean reading the whole array.
func readNPYHeader(r io.Reader) (npyHeader, error) {
	var h npyHeader
	pre := make([]byte, len(npyMagic)+2)
	if _, err := io.ReadFull(r, pre); err != nil {
		return h, fmt.Errorf("%w: shorter than the .npy preamble", ErrTruncated)
	}
	if !bytes.Equal(pre[:len(npyMagic)], npyMagic) {
		return h, fmt.Errorf("%w: no \\x93NUMPY magic", errNPY)
	}
	major, minor := pre[len(npyMagic)], pre[len(npyMagic)+1]
	var n int
	switch major {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return h, fmt.Errorf("%w: header length cut short", ErrTruncated)
		}
		n = int(binary.LittleEndian.Uint16(b[:]))
		h.Offset = int64(len(pre) + 2 + n)
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return h, fmt.Errorf("%w: header length cut short", ErrTruncated)
		}
		u := binary.LittleEndian.Uint32(b[:])
		if u > maxNPYHeader {
			return h, fmt.Errorf("%w: header length %d is implausible", errNPY, u)
		}
		n = int(u)
		h.Offset = int64(len(pre) + 4 + n)
	default:
		return h, fmt.Errorf("%w: format version %d.%d (only 1.0, 2.0 and 3.0 exist)", errNPY, major, minor)
	}
	text := make([]byte, n)
	if _, err := io.ReadFull(r, text); err != nil {
		return h, fmt.Errorf("%w: header says %d bytes, file ends first", ErrTruncated, n)
	}
	d, err := parsePyDict(text)
	if err != nil {
		return h, fmt.Errorf("%w: header %q: %v", errNPY, bytes.TrimSpace(text), err)
	}
	descr, ok := d["descr"].(string)
	if !ok {
		if _, isList := d["descr"].([]any); isList {
			return h, fmt.Errorf("%w: structured dtype (record arrays are not tensors)", errNPY)
		}
		return h, fmt.Errorf("%w: header has no descr string", errNPY)
	}
	fortran, ok := d["fortran_order"].(bool)
	if !ok {
		return h, fmt.Errorf("%w: header has no fortran_order True/False", errNPY)
	}
	if fortran {
		return h, fmt.Errorf("%w: fortran_order is True; save the array in C order (numpy.ascontiguousarray)", errNPY)
	}
	tuple, ok := d["shape"].([]any)
	if !ok {
		return h, fmt.Errorf("%w: header has no shape tuple", errNPY)
	}
	for _, v := range tuple {
		dim, ok := v.(int64)
		if !ok || dim < 0 {
			return h, fmt.Errorf("%w: shape %v has a dimension that is not a non-negative integer", errNPY, tuple)
		}
		h.Shape = append(h.Shape, dim)
	}
	if h.Shape == nil {
		h.Shape = []int64{}
	}
	h.Descr = descr
	return h, nil
}

// parsePyDict reads the subset of Python literals a .npy header uses:
// a dict of quoted keys to strings, True/False/None, integers (a trailing
// L from Python 2 allowed) and tuples or lists of them.
func parsePyDict(b []byte) (map[string]any, error) {
	p := &pyParser{b: b}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	d, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("not a dict")
	}
	p.space()
	if p.i != len(p.b) {
		return nil, fmt.Errorf("unexpected %q after the dict", p.b[p.i:])
	}
	return d, nil
}

type pyParser struct {
	b []byte
	i int
}

func (p *pyParser) space() {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\n' || p.b[p.i] == '\t' || p.b[p.i] == '\r') {
		p.i++
	}
}

func (p *pyParser) peek() byte {
	p.space()
	if p.i >= len(p.b) {
		return 0
	}
	return p.b[p.i]
}

func (p *pyParser) value() (any, error) {
	switch c := p.peek(); {
	case c == '{':
		p.i++
		d := map[string]any{}
		for {
			if p.peek() == '}' {
				p.i++
				return d, nil
			}
			k, err := p.value()
			if err != nil {
				return nil, err
			}
			key, ok := k.(string)
			if !ok {
				return nil, fmt.Errorf("dict key %v is not a string", k)
			}
			if p.peek() != ':' {
				return nil, fmt.Errorf("no ':' after key %q", key)
			}
			p.i++
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			d[key] = v
			if !p.sep('}') {
				return nil, errors.New("dict entries not separated by ','")
			}
		}
	case c == '(' || c == '[':
		end := byte(')')
		if c == '[' {
			end = ']'
		}
		p.i++
		var items []any
		for {
			if p.peek() == end {
				p.i++
				if items == nil {
					items = []any{}
				}
				return items, nil
			}
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			items = append(items, v)
			if !p.sep(end) {
				return nil, errors.New("items not separated by ','")
			}
		}
	case c == '\'' || c == '"':
		p.i++
		start := p.i
		for p.i < len(p.b) && p.b[p.i] != c {
			if p.b[p.i] == '\\' {
				return nil, errors.New("escapes in strings are not used by .npy headers")
			}
			p.i++
		}
		if p.i >= len(p.b) {
			return nil, errors.New("unterminated string")
		}
		s := string(p.b[start:p.i])
		p.i++
		return s, nil
	case c == '-' || (c >= '0' && c <= '9'):
		start := p.i
		p.i++
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
		}
		v, err := strconv.ParseInt(string(p.b[start:p.i]), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("integer %q: %v", p.b[start:p.i], err)
		}
		if p.i < len(p.b) && p.b[p.i] == 'L' {
			p.i++
		}
		return v, nil
	default:
		for _, w := range []struct {
			word string
			v    any
		}{{"True", true}, {"False", false}, {"None", nil}} {
			if bytes.HasPrefix(p.b[p.i:], []byte(w.word)) {
				p.i += len(w.word)
				return w.v, nil
			}
		}
		if p.i >= len(p.b) {
			return nil, errors.New("ends early")
		}
		return nil, fmt.Errorf("unexpected %q", p.b[p.i])
	}
}

// sep consumes a ',' (a trailing one before end allowed) and reports
// whether the next thing is an item or end.
func (p *pyParser) sep(end byte) bool {
	switch p.peek() {
	case ',':
		p.i++
		return true
	case end:
		return true
	}
	return false
}
