package kserve

// This file converts tensor data between its one in-memory form (raw
// little-endian row-major bytes, see Tensor) and typed values, for the REST
// JSON codec and for gRPC's typed InferTensorContents. Every error wraps
// ErrMalformed.

import (
	"encoding/binary"
	"fmt"
	"math"
)

// malformedError is a decoding failure; it matches ErrMalformed.
type malformedError struct{ msg string }

func (e *malformedError) Error() string { return "malformed message: " + e.msg }
func (e *malformedError) Unwrap() error { return ErrMalformed }

// Malformedf builds an error that wraps ErrMalformed.
func Malformedf(format string, args ...any) error {
	return &malformedError{msg: fmt.Sprintf(format, args...)}
}

// malformedMsg is err's message without the ErrMalformed prefix, for
// wrapping one decoding error in the context of another.
func malformedMsg(err error) string {
	if m, ok := err.(*malformedError); ok {
		return m.msg
	}
	return err.Error()
}

// CountElements validates raw as data of datatype dt and returns how many
// elements it holds: its length over the element size, or for BYTES the
// number of length-prefixed elements (every prefix must fit).
func CountElements(dt DataType, raw []byte) (int64, error) {
	size := dt.Size()
	switch {
	case size < 0:
		return 0, Malformedf("unknown datatype %q", dt)
	case size > 0:
		if len(raw)%size != 0 {
			return 0, Malformedf("%s data of %d bytes is not a whole number of %d-byte elements", dt, len(raw), size)
		}
		return int64(len(raw) / size), nil
	}
	var n int64
	for off := 0; off < len(raw); n++ {
		if len(raw)-off < 4 {
			return 0, Malformedf("BYTES element %d: truncated length prefix (%d bytes left)", n, len(raw)-off)
		}
		l := binary.LittleEndian.Uint32(raw[off:])
		off += 4
		if uint64(l) > uint64(len(raw)-off) {
			return 0, Malformedf("BYTES element %d: length %d exceeds the %d bytes left", n, l, len(raw)-off)
		}
		off += int(l)
	}
	return n, nil
}

// CheckTensorData checks that raw holds exactly the elements shape calls for.
func CheckTensorData(dt DataType, shape []int64, raw []byte) error {
	want := ElementCount(shape)
	if want < 0 {
		return Malformedf("shape %v has a negative dimension", shape)
	}
	if size := dt.Size(); size > 0 {
		// Compare in bytes first: a huge shape must not overflow the product.
		if want > math.MaxInt64/int64(size) || int64(len(raw)) != want*int64(size) {
			return Malformedf("%s data of %d bytes does not match shape %v (%d elements of %d bytes)", dt, len(raw), shape, want, size)
		}
		return nil
	}
	n, err := CountElements(dt, raw)
	if err != nil {
		return err
	}
	if n != want {
		return Malformedf("%s data holds %d elements, shape %v needs %d", dt, n, shape, want)
	}
	return nil
}

// intRange is the range of a signed integer datatype.
func intRange(dt DataType) (lo, hi int64, ok bool) {
	switch dt {
	case Int8:
		return math.MinInt8, math.MaxInt8, true
	case Int16:
		return math.MinInt16, math.MaxInt16, true
	case Int32:
		return math.MinInt32, math.MaxInt32, true
	case Int64:
		return math.MinInt64, math.MaxInt64, true
	}
	return 0, 0, false
}

// uintMax is the largest value of an unsigned integer datatype.
func uintMax(dt DataType) (uint64, bool) {
	switch dt {
	case Uint8:
		return math.MaxUint8, true
	case Uint16:
		return math.MaxUint16, true
	case Uint32:
		return math.MaxUint32, true
	case Uint64:
		return math.MaxUint64, true
	}
	return 0, false
}

// IsSignedInt, IsUnsignedInt and IsFloat classify datatypes by the typed
// value they convert to.
func IsSignedInt(dt DataType) bool   { _, _, ok := intRange(dt); return ok }
func IsUnsignedInt(dt DataType) bool { _, ok := uintMax(dt); return ok }
func IsFloat(dt DataType) bool       { return dt == FP32 || dt == FP64 }

// AppendInt appends v as one element of the signed integer datatype dt,
// checking that it fits.
func AppendInt(dst []byte, dt DataType, v int64) ([]byte, error) {
	lo, hi, ok := intRange(dt)
	if !ok {
		return dst, Malformedf("%s is not a signed integer datatype", dt)
	}
	if v < lo || v > hi {
		return dst, Malformedf("%d is out of range for %s", v, dt)
	}
	return appendFixed(dst, dt.Size(), uint64(v)), nil
}

// AppendUint appends v as one element of the unsigned integer datatype dt,
// checking that it fits.
func AppendUint(dst []byte, dt DataType, v uint64) ([]byte, error) {
	hi, ok := uintMax(dt)
	if !ok {
		return dst, Malformedf("%s is not an unsigned integer datatype", dt)
	}
	if v > hi {
		return dst, Malformedf("%d is out of range for %s", v, dt)
	}
	return appendFixed(dst, dt.Size(), v), nil
}

// AppendFloat appends v as one FP32 or FP64 element; a finite value too large
// for FP32 is an error rather than a silent infinity.
func AppendFloat(dst []byte, dt DataType, v float64) ([]byte, error) {
	switch dt {
	case FP32:
		f := float32(v)
		if math.IsInf(float64(f), 0) && !math.IsInf(v, 0) {
			return dst, Malformedf("%g is out of range for FP32", v)
		}
		return binary.LittleEndian.AppendUint32(dst, math.Float32bits(f)), nil
	case FP64:
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(v)), nil
	}
	return dst, Malformedf("%s is not a floating-point datatype convertible from float64", dt)
}

// AppendBool appends one BOOL element.
func AppendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, 1)
	}
	return append(dst, 0)
}

// AppendBytesElement appends one BYTES element: its 4-byte little-endian
// length, then b.
func AppendBytesElement(dst []byte, b []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(b)))
	return append(dst, b...)
}

func appendFixed(dst []byte, size int, v uint64) []byte {
	switch size {
	case 1:
		return append(dst, byte(v))
	case 2:
		return binary.LittleEndian.AppendUint16(dst, uint16(v))
	case 4:
		return binary.LittleEndian.AppendUint32(dst, uint32(v))
	}
	return binary.LittleEndian.AppendUint64(dst, v)
}

// Int64s returns the elements of raw, data of a signed integer datatype.
func Int64s(dt DataType, raw []byte) ([]int64, error) {
	if !IsSignedInt(dt) {
		return nil, Malformedf("%s is not a signed integer datatype", dt)
	}
	n, err := CountElements(dt, raw)
	if err != nil {
		return nil, err
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = intAt(dt, raw, i)
	}
	return out, nil
}

// Uint64s returns the elements of raw, data of an unsigned integer datatype.
func Uint64s(dt DataType, raw []byte) ([]uint64, error) {
	if !IsUnsignedInt(dt) {
		return nil, Malformedf("%s is not an unsigned integer datatype", dt)
	}
	n, err := CountElements(dt, raw)
	if err != nil {
		return nil, err
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = uintAt(dt, raw, i)
	}
	return out, nil
}

// Float64s returns the elements of raw, FP32 or FP64 data.
func Float64s(dt DataType, raw []byte) ([]float64, error) {
	if !IsFloat(dt) {
		return nil, Malformedf("%s is not FP32 or FP64", dt)
	}
	n, err := CountElements(dt, raw)
	if err != nil {
		return nil, err
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = floatAt(dt, raw, i)
	}
	return out, nil
}

// Bools returns the elements of raw, BOOL data (any non-zero byte is true).
func Bools(raw []byte) []bool {
	out := make([]bool, len(raw))
	for i, b := range raw {
		out[i] = b != 0
	}
	return out
}

// BytesElements splits raw, BYTES data, into its elements; they alias raw.
func BytesElements(raw []byte) ([][]byte, error) {
	n, err := CountElements(Bytes, raw)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, 0, n)
	for off := 0; off < len(raw); {
		l := int(binary.LittleEndian.Uint32(raw[off:]))
		off += 4
		out = append(out, raw[off:off+l:off+l])
		off += l
	}
	return out, nil
}

func intAt(dt DataType, raw []byte, i int) int64 {
	switch dt {
	case Int8:
		return int64(int8(raw[i]))
	case Int16:
		return int64(int16(binary.LittleEndian.Uint16(raw[2*i:])))
	case Int32:
		return int64(int32(binary.LittleEndian.Uint32(raw[4*i:])))
	}
	return int64(binary.LittleEndian.Uint64(raw[8*i:]))
}

func uintAt(dt DataType, raw []byte, i int) uint64 {
	switch dt {
	case Uint8:
		return uint64(raw[i])
	case Uint16:
		return uint64(binary.LittleEndian.Uint16(raw[2*i:]))
	case Uint32:
		return uint64(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return binary.LittleEndian.Uint64(raw[8*i:])
}

func floatAt(dt DataType, raw []byte, i int) float64 {
	if dt == FP32 {
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
}
