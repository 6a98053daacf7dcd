package shape

// The fast path of a JSONL trace line: the issuer's cursor reads a line
// per arrival on its own goroutine, and encoding/json's reflection costs
// about 3.5 µs and 20 allocations a line. fastJSONLine reads the lines
// Mooncake's traces hold (the five known keys spelled exactly, whole
// numbers, plain strings) in one pass, and gives up on anything else:
// parseJSONLine, the one judge of a line, then reads it (and names
// what is wrong). FuzzFastJSONLine holds them to the same answer.

import "time"

// fastJSONLine is parseJSONLine for a plain line; ok false when the line
// is not plain, or not a valid request (parseJSONLine then says why).
func fastJSONLine(line []byte) (rec traceRecord, ok bool) {
	s := fastScanner{b: line}
	var ms, in, out int64 = -1, -1, -1
	var ids []int
	if !s.byte('{') {
		return rec, false
	}
	for first := true; ; first = false {
		if s.byte('}') {
			break
		}
		if !first && !s.byte(',') {
			return rec, false
		}
		key, good := s.plainBytes()
		if !good || !s.byte(':') {
			return rec, false
		}
		switch string(key) { // no allocation: the compiler compares the bytes

		case "timestamp":
			ms, good = s.wholeNumber()
		case "input_length":
			in, good = s.wholeNumber()
		case "output_length":
			out, good = s.wholeNumber()
		case "hash_ids":
			ids, good = s.idArray()
		case "model":
			var m []byte
			s.hadModel = true
			m, good = s.plainBytes()
			rec.model = string(m)
		default:
			good = false // another key, or a known one in another case
		}
		if !good {
			return rec, false
		}
	}
	s.space()
	switch {
	case s.i != len(s.b), ms < 0 || float64(ms) > maxTraceMs,
		in < 1 || in > MaxTraceTokens, out < 1 || out > MaxTraceTokens,
		len(ids) > MaxTraceTokens/TraceBlockTokens, s.hadModel && rec.model == "":
		return rec, false
	}
	rec.at, rec.in, rec.out, rec.hashIDs = time.Duration(ms)*time.Millisecond, int(in), int(out), ids
	return rec, true
}

// fastScanner reads a plain JSON line.
type fastScanner struct {
	b        []byte
	i        int
	hadModel bool
}

// space skips JSON's white space.
func (s *fastScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// byte reads c after white space.
func (s *fastScanner) byte(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// plainBytes reads a string of printable ASCII without escapes: its
// bytes, the line's.
func (s *fastScanner) plainBytes() ([]byte, bool) {
	if !s.byte('"') {
		return nil, false
	}
	start := s.i
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return s.b[start : s.i-1], true
		case c < 0x20 || c > 0x7e || c == '\\':
			return nil, false
		}
	}
	return nil, false
}

// wholeNumber reads 0 or a number of up to 15 digits without a leading
// zero, sign, fraction or exponent.
func (s *fastScanner) wholeNumber() (int64, bool) {
	s.space()
	start := s.i
	var v int64
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		v = v*10 + int64(s.b[s.i]-'0')
		s.i++
	}
	n := s.i - start
	if n == 0 || n > 15 || (n > 1 && s.b[start] == '0') {
		return 0, false
	}
	if s.i < len(s.b) {
		switch s.b[s.i] {
		case '.', 'e', 'E':
			return 0, false
		}
	}
	return v, true
}

// idArray reads an array of whole numbers (none: an empty, non-nil
// slice, as encoding/json makes).
func (s *fastScanner) idArray() ([]int, bool) {
	if !s.byte('[') {
		return nil, false
	}
	ids := make([]int, 0, 16)
	for first := true; ; first = false {
		if s.byte(']') {
			return ids, true
		}
		if !first && !s.byte(',') {
			return nil, false
		}
		v, ok := s.wholeNumber()
		if !ok {
			return nil, false
		}
		ids = append(ids, int(v))
	}
}
