package kserve

// Low-level JSON reading and writing for the REST codec. Tensor data and
// parameters are scanned by hand because they are the bulk of a JSON body
// and their rules (int64 vs float64, range checks per datatype) do not fit
// encoding/json's generic decoding.

import (
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// maxJSONDepth bounds nested data arrays, so hostile input cannot exhaust
// the stack.
const maxJSONDepth = 64

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string; invalid UTF-8 becomes U+FFFD,
// as encoding/json does.
func appendJSONString[S string | []byte](dst []byte, s S) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanNumber returns the end of the JSON number starting at b[i] and whether
// it has a fraction or exponent.
func scanNumber(b []byte, i int) (end int, isFloat bool, err error) {
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return i, false, Malformedf("invalid JSON number at offset %d", start)
	}
	if i < len(b) && b[i] == '.' {
		isFloat = true
		i++
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return i, false, Malformedf("invalid JSON number at offset %d", start)
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		isFloat = true
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return i, false, Malformedf("invalid JSON number at offset %d", start)
		}
	}
	return i, isFloat, nil
}

// scanString decodes the JSON string starting at b[i] (the opening quote),
// appending its content to dst. It returns the offset after the closing quote.
func scanString(dst []byte, b []byte, i int) ([]byte, int, error) {
	start := i
	i++
	run := i
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			return append(dst, b[run:i]...), i + 1, nil
		case c < 0x20:
			return dst, i, Malformedf("control character in JSON string at offset %d", i)
		case c != '\\':
			i++
			continue
		}
		dst = append(dst, b[run:i]...)
		if i+1 >= len(b) {
			break
		}
		switch e := b[i+1]; e {
		case '"', '\\', '/':
			dst = append(dst, e)
			i += 2
		case 'b':
			dst, i = append(dst, '\b'), i+2
		case 'f':
			dst, i = append(dst, '\f'), i+2
		case 'n':
			dst, i = append(dst, '\n'), i+2
		case 'r':
			dst, i = append(dst, '\r'), i+2
		case 't':
			dst, i = append(dst, '\t'), i+2
		case 'u':
			r, ok := hex4(b, i+2)
			if !ok {
				return dst, i, Malformedf("invalid \\u escape at offset %d", i)
			}
			i += 6
			if utf16.IsSurrogate(r) {
				r2, ok2 := rune(0), false
				if i+1 < len(b) && b[i] == '\\' && b[i+1] == 'u' {
					r2, ok2 = hex4(b, i+2)
				}
				if dec := utf16.DecodeRune(r, r2); ok2 && dec != utf8.RuneError {
					r = dec
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
		default:
			return dst, i, Malformedf("invalid escape in JSON string at offset %d", i)
		}
		run = i
	}
	return dst, i, Malformedf("unterminated JSON string at offset %d", start)
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// parseJSONInt parses an integral JSON number token; integral values written
// with a fraction or exponent (1.0, 1e3) are accepted when exact.
func parseJSONInt(tok []byte, isFloat bool) (int64, error) {
	if !isFloat {
		v, err := strconv.ParseInt(string(tok), 10, 64)
		if err != nil {
			return 0, Malformedf("integer %s is out of range", tok)
		}
		return v, nil
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil || f != math.Trunc(f) || f < -(1<<63) || f >= 1<<63 {
		return 0, Malformedf("%s is not an integer in range", tok)
	}
	return int64(f), nil
}

func parseJSONUint(tok []byte, isFloat bool) (uint64, error) {
	if len(tok) > 0 && tok[0] == '-' {
		if v, err := parseJSONInt(tok, isFloat); err == nil && v == 0 {
			return 0, nil
		}
		return 0, Malformedf("negative value %s for an unsigned datatype", tok)
	}
	if !isFloat {
		v, err := strconv.ParseUint(string(tok), 10, 64)
		if err != nil {
			return 0, Malformedf("integer %s is out of range", tok)
		}
		return v, nil
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil || f != math.Trunc(f) || f >= 1<<64 {
		return 0, Malformedf("%s is not an unsigned integer in range", tok)
	}
	return uint64(f), nil
}
