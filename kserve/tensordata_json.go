package kserve

// Tensor data in JSON form: row-major arrays of numbers, true/false for BOOL,
// strings for BYTES. Decoding accepts flat or nested arrays; encoding writes
// flat ones.

import (
	"math"
	"strconv"
)

// AppendJSONData appends raw, data of datatype dt, as a flat JSON array.
// FP16 and BF16 cannot travel as JSON (PROTOCOL.md §1), and NaN or infinite
// floats have no JSON form: both are errors. BYTES elements are written as
// JSON strings; bytes that are not UTF-8 become U+FFFD.
func AppendJSONData(dst []byte, dt DataType, raw []byte) ([]byte, error) {
	if !dt.JSONCapable() {
		if dt.Valid() {
			return dst, Malformedf("%s data cannot be sent as JSON; use binary tensor data", dt)
		}
		return dst, Malformedf("unknown datatype %q", dt)
	}
	n, err := CountElements(dt, raw)
	if err != nil {
		return dst, err
	}
	dst = append(dst, '[')
	if dt == Bytes {
		elems, _ := BytesElements(raw) // already validated
		for i, e := range elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, e)
		}
		return append(dst, ']'), nil
	}
	for i := range int(n) {
		if i > 0 {
			dst = append(dst, ',')
		}
		switch {
		case dt == Bool:
			if raw[i] != 0 {
				dst = append(dst, "true"...)
			} else {
				dst = append(dst, "false"...)
			}
		case IsSignedInt(dt):
			dst = strconv.AppendInt(dst, intAt(dt, raw, i), 10)
		case IsUnsignedInt(dt):
			dst = strconv.AppendUint(dst, uintAt(dt, raw, i), 10)
		default:
			f := floatAt(dt, raw, i)
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return dst, Malformedf("%s element %d is %v, which JSON cannot represent", dt, i, f)
			}
			bits := 64
			if dt == FP32 {
				bits = 32
			}
			dst = strconv.AppendFloat(dst, f, 'g', -1, bits)
		}
	}
	return append(dst, ']'), nil
}

// DecodeJSONData decodes data, a JSON array (flat or nested) of elements of
// datatype dt, appending the raw bytes to dst. It returns the extended
// buffer and the number of elements. Integers are range-checked for dt;
// FP32 values that overflow are errors. Errors wrap ErrMalformed.
func DecodeJSONData(dst []byte, dt DataType, data []byte) ([]byte, int64, error) {
	if !dt.JSONCapable() {
		if dt.Valid() {
			return dst, 0, Malformedf("%s data cannot be sent as JSON; use binary tensor data", dt)
		}
		return dst, 0, Malformedf("unknown datatype %q", dt)
	}
	d := jsonDataDecoder{dt: dt, out: dst}
	i := skipWS(data, 0)
	if i >= len(data) || data[i] != '[' {
		return dst, 0, Malformedf("tensor data must be a JSON array")
	}
	i, err := d.array(data, i, 0)
	if err != nil {
		return dst, 0, err
	}
	if i = skipWS(data, i); i != len(data) {
		return dst, 0, Malformedf("unexpected content after tensor data at offset %d", i)
	}
	return d.out, d.n, nil
}

type jsonDataDecoder struct {
	dt  DataType
	out []byte
	n   int64
}

// array decodes the array opening at b[i] and returns the offset after it.
func (d *jsonDataDecoder) array(b []byte, i, depth int) (int, error) {
	if depth >= maxJSONDepth {
		return i, Malformedf("tensor data nested deeper than %d", maxJSONDepth)
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		if i >= len(b) {
			return i, Malformedf("unterminated tensor data array")
		}
		var err error
		if b[i] == '[' {
			i, err = d.array(b, i, depth+1)
		} else {
			i, err = d.element(b, i)
		}
		if err != nil {
			return i, err
		}
		i = skipWS(b, i)
		if i >= len(b) {
			return i, Malformedf("unterminated tensor data array")
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case ']':
			return i + 1, nil
		default:
			return i, Malformedf("expected ',' or ']' in tensor data at offset %d", i)
		}
	}
}

func (d *jsonDataDecoder) element(b []byte, i int) (int, error) {
	d.n++
	switch d.dt {
	case Bool:
		switch {
		case hasPrefixAt(b, i, "true"):
			d.out = append(d.out, 1)
			return i + 4, nil
		case hasPrefixAt(b, i, "false"):
			d.out = append(d.out, 0)
			return i + 5, nil
		}
		return i, Malformedf("BOOL element %d is not true or false", d.n-1)
	case Bytes:
		if b[i] != '"' {
			return i, Malformedf("BYTES element %d is not a JSON string", d.n-1)
		}
		// Reserve the length prefix, decode in place, then fill it in.
		at := len(d.out)
		d.out = append(d.out, 0, 0, 0, 0)
		var err error
		d.out, i, err = scanString(d.out, b, i)
		if err != nil {
			return i, err
		}
		l := len(d.out) - at - 4
		if uint64(l) > math.MaxUint32 {
			return i, Malformedf("BYTES element %d is too long", d.n-1)
		}
		d.out[at], d.out[at+1], d.out[at+2], d.out[at+3] = byte(l), byte(l>>8), byte(l>>16), byte(l>>24)
		return i, nil
	}
	end, isFloat, err := scanNumber(b, i)
	if err != nil {
		return end, Malformedf("%s element %d: %s", d.dt, d.n-1, malformedMsg(err))
	}
	tok := b[i:end]
	switch {
	case IsSignedInt(d.dt):
		var v int64
		if v, err = parseJSONInt(tok, isFloat); err == nil {
			d.out, err = AppendInt(d.out, d.dt, v)
		}
	case IsUnsignedInt(d.dt):
		var v uint64
		if v, err = parseJSONUint(tok, isFloat); err == nil {
			d.out, err = AppendUint(d.out, d.dt, v)
		}
	case d.dt == FP32:
		var f float64
		if f, err = strconv.ParseFloat(string(tok), 32); err != nil {
			err = Malformedf("%s is out of range for FP32", tok)
		} else {
			d.out, err = AppendFloat(d.out, FP32, f)
		}
	default:
		var f float64
		if f, err = strconv.ParseFloat(string(tok), 64); err != nil {
			err = Malformedf("%s is out of range for FP64", tok)
		} else {
			d.out, err = AppendFloat(d.out, FP64, f)
		}
	}
	if err != nil {
		return end, Malformedf("%s element %d: %s", d.dt, d.n-1, malformedMsg(err))
	}
	return end, nil
}

func hasPrefixAt(b []byte, i int, lit string) bool {
	return len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit
}
