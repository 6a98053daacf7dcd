package grpcloop

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/netloadgen/netloadgen/kserve"
)

// rawOutputContents is ModelInferResponse's raw_output_contents, the field
// the skimmer skips.
const rawOutputContents = 6

// maxKept bounds the bytes of a message a skimmer keeps (typed contents are
// kept: they are rare, and a server that sends gigabytes of them is not
// checked but failed).
const maxKept = 64 << 20

// keptReuse is the largest buffer kept from one answer to the next.
const keptReuse = 1 << 20

// Skimmer states.
const (
	skTag    = iota // reading a field's tag
	skVarint        // reading a varint field's value
	skLen           // reading a length-delimited field's length
	skValue         // in a field's value bytes (kept or skipped)
)

// skimmer walks a protobuf message's top-level fields as its bytes arrive,
// in pieces cut anywhere, and keeps every field but raw_output_contents
// (its tag, length and value all dropped): what is left is a valid message
// of the other fields. Only tags and lengths go byte by byte; a value goes
// in one copy, or none.
type skimmer struct {
	kept       []byte
	state      int
	hdr        [20]byte // the current field's tag and length (or varint value)
	hdrN       int
	tagN       int // bytes of hdr that are the tag
	num        protowire.Number
	left       uint64 // value bytes still to come
	keep       bool   // the current value is kept
	over       bool   // more than maxKept bytes to keep
	compressed bool   // a message was compressed: its bytes are not a message
	// fault says what was wrong with the message, when it is not protobuf:
	// a constant, so that a loop without an answer check, which never
	// asks, pays no allocation for it.
	fault string
}

// reuse is a fresh skimmer that keeps the buffer of s, unless it grew large.
func (s *skimmer) reuse() skimmer {
	if cap(s.kept) > keptReuse {
		return skimmer{}
	}
	return skimmer{kept: s.kept[:0]}
}

// take consumes the next bytes of the message.
func (s *skimmer) take(p []byte) {
	if s.state == skTag && s.hdrN == 0 && s.fault == "" {
		p = s.fields(p)
	}
	for len(p) > 0 && s.fault == "" {
		if s.state == skValue {
			n := min(s.left, uint64(len(p)))
			if s.keep {
				s.append(p[:n])
			}
			s.left -= n
			p = p[n:]
			if s.left == 0 {
				s.state = skTag
			}
			continue
		}
		c := p[0]
		p = p[1:]
		if s.hdrN == len(s.hdr) {
			s.fault = "field header too long"
			return
		}
		s.hdr[s.hdrN] = c
		s.hdrN++
		if c&0x80 == 0 {
			s.varintEnded()
		}
	}
}

// fields consumes the whole fields at the start of p, which starts at a
// field's tag, and returns the rest: the common case, a message in one DATA
// frame, walked a field at a time and kept in one copy per run of kept
// fields (bench/nullserver's answer, the response's reset included: 60 ns
// byte by byte, 36 so, 8 before the answer check). The rest, a field cut by
// the frame's end or bytes that are not protobuf, goes byte by byte.
func (s *skimmer) fields(p []byte) []byte {
	run, i := 0, 0
	for i < len(p) {
		tag, n := uvarint(p[i:])
		num, typ := protowire.DecodeTag(tag)
		if n < 0 || num < protowire.MinValidNumber {
			break
		}
		m := fieldLen(typ, p[i+n:])
		if m < 0 {
			break
		}
		if num == rawOutputContents && typ == protowire.BytesType {
			s.append(p[run:i])
			run = i + n + m
		}
		s.num = num
		i += n + m
	}
	s.append(p[run:i])
	return p[i:]
}

// fieldLen is the length of a field's value of wire type typ at the start
// of b, -1 if it is not all there (or typ is a group's).
func fieldLen(typ protowire.Type, b []byte) int {
	switch typ {
	case protowire.VarintType:
		_, n := uvarint(b)
		return n
	case protowire.Fixed32Type:
		return lenIfAll(4, b)
	case protowire.Fixed64Type:
		return lenIfAll(8, b)
	case protowire.BytesType:
		l, n := uvarint(b)
		if n < 0 || l > uint64(len(b)-n) {
			return -1
		}
		return n + int(l)
	}
	return -1
}

func lenIfAll(n int, b []byte) int {
	if len(b) < n {
		return -1
	}
	return n
}

// uvarint is protowire.ConsumeVarint with its one-byte case inline.
func uvarint(b []byte) (uint64, int) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	return protowire.ConsumeVarint(b)
}

// varintEnded acts on a tag, length or varint value just completed in hdr.
func (s *skimmer) varintEnded() {
	switch s.state {
	case skTag:
		v, n := protowire.ConsumeVarint(s.hdr[:s.hdrN])
		num, typ := protowire.DecodeTag(v)
		if n < 0 || num < protowire.MinValidNumber {
			s.fault = "bad field tag"
			return
		}
		s.num, s.tagN = num, s.hdrN
		switch typ {
		case protowire.VarintType:
			s.state = skVarint
		case protowire.BytesType:
			s.state = skLen
		case protowire.Fixed64Type:
			s.value(8, true)
		case protowire.Fixed32Type:
			s.value(4, true)
		default:
			s.fault = "a group field" // deprecated wire types 3 and 4, or invalid
		}
	case skVarint:
		if _, n := protowire.ConsumeVarint(s.hdr[s.tagN:s.hdrN]); n < 0 {
			s.fault = "bad varint"
			return
		}
		s.append(s.hdr[:s.hdrN])
		s.hdrN, s.state = 0, skTag
	case skLen:
		v, n := protowire.ConsumeVarint(s.hdr[s.tagN:s.hdrN])
		if n < 0 {
			s.fault = "bad length"
			return
		}
		s.value(v, s.num != rawOutputContents)
	}
}

// value starts a value of n bytes after the header in hdr, kept or not.
func (s *skimmer) value(n uint64, keep bool) {
	if keep {
		s.append(s.hdr[:s.hdrN])
	}
	s.hdrN, s.keep, s.left, s.state = 0, keep, n, skValue
	if n == 0 {
		s.state = skTag
	}
}

func (s *skimmer) append(b []byte) {
	if len(s.kept)+len(b) > maxKept {
		s.over = true
		return
	}
	s.kept = append(s.kept, b...)
}

// end is the skimmer's verdict once the message is all there.
func (s *skimmer) end() error {
	switch {
	case s.fault != "":
		return fmt.Errorf("%w: response message: %s (field %d)", kserve.ErrMalformed, s.fault, s.num)
	case s.compressed:
		return fmt.Errorf("%w: a compressed answer, which the call did not accept", kserve.ErrMalformed)
	case s.state != skTag || s.hdrN != 0:
		return fmt.Errorf("%w: response message cut inside field %d", kserve.ErrMalformed, s.num)
	case s.over:
		return fmt.Errorf("%w: response fields over %d MiB beside the tensor bytes", kserve.ErrMalformed, maxKept>>20)
	}
	return nil
}
