package kserve

// This file converts between the raw little-endian tensor bytes a Tensor holds
// and gRPC's typed InferTensorContents, and checks raw data against a shape.
// Its helpers carry a pb prefix: the REST codec shares the package.

import (
	"encoding/binary"
	"fmt"
	"math"

	"google.golang.org/grpc/codes"

	"github.com/netloadgen/netloadgen/kserve/inferencepb"
)

// pbErrorf is the error every gRPC conversion returns: gRPC answers a
// malformed message with INVALID_ARGUMENT. HTTPStatus stays 0, as for any
// *Error of the gRPC side.
func pbErrorf(format string, args ...any) *Error {
	return &Error{Code: codes.InvalidArgument, Message: fmt.Sprintf(format, args...)}
}

// pbInvalid is pbErrorf naming the tensor at fault.
func pbInvalid(kind, name, format string, args ...any) *Error {
	return pbErrorf("%s '%s': %s", kind, name, fmt.Sprintf(format, args...))
}

// pbElements is the element count of shape, refusing negative dimensions and
// products that overflow (a shape comes off the wire and must not make us
// compare against a wrapped-around length).
func pbElements(kind, name string, shape []int64) (int64, error) {
	n := int64(1)
	for _, d := range shape {
		if d < 0 {
			return 0, pbInvalid(kind, name, "shape %v has a negative dimension", shape)
		}
		if d != 0 && n > math.MaxInt64/d {
			return 0, pbInvalid(kind, name, "shape %v overflows", shape)
		}
		n *= d
	}
	return n, nil
}

// pbCheckRaw checks that data holds exactly the elements shape calls for.
func pbCheckRaw(kind, name string, dt DataType, shape []int64, data []byte) error {
	n, err := pbElements(kind, name, shape)
	if err != nil {
		return err
	}
	size := dt.Size()
	switch {
	case size < 0:
		return pbInvalid(kind, name, "unknown datatype %q", dt)
	case size > 0:
		if n > math.MaxInt64/int64(size) || int64(len(data)) != n*int64(size) {
			return pbInvalid(kind, name, "%s data has %d bytes, shape %v needs %d elements of %d bytes",
				dt, len(data), shape, n, size)
		}
		return nil
	}
	got, err := pbCountBytes(kind, name, data)
	if err != nil {
		return err
	}
	if got != n {
		return pbInvalid(kind, name, "BYTES data holds %d elements, shape %v needs %d", got, shape, n)
	}
	return nil
}

// pbCountBytes walks the 4-byte little-endian length prefixes of raw BYTES
// data and returns the element count.
func pbCountBytes(kind, name string, data []byte) (int64, error) {
	var n int64
	for off := 0; off < len(data); n++ {
		if len(data)-off < 4 {
			return 0, pbInvalid(kind, name, "BYTES element %d: truncated length prefix", n)
		}
		l := binary.LittleEndian.Uint32(data[off:])
		off += 4
		if uint64(l) > uint64(len(data)-off) {
			return 0, pbInvalid(kind, name, "BYTES element %d: length %d exceeds the %d bytes left", n, l, len(data)-off)
		}
		off += int(l)
	}
	return n, nil
}

// pbContentsField names the InferTensorContents field a datatype travels in
// (KServe v2: 8- to 32-bit signed integers share int_contents, unsigned ones
// uint_contents). FP16 and BF16 have none: they travel only as raw bytes.
func pbContentsField(dt DataType) string {
	switch dt {
	case Bool:
		return "bool_contents"
	case Int8, Int16, Int32:
		return "int_contents"
	case Int64:
		return "int64_contents"
	case Uint8, Uint16, Uint32:
		return "uint_contents"
	case Uint64:
		return "uint64_contents"
	case FP32:
		return "fp32_contents"
	case FP64:
		return "fp64_contents"
	case Bytes:
		return "bytes_contents"
	}
	return ""
}

// pbFieldLen is the element count of one InferTensorContents field.
type pbFieldLen struct {
	field string
	n     int
}

// pbContentsLens returns the length of every field of c.
func pbContentsLens(c *inferencepb.InferTensorContents) [8]pbFieldLen {
	return [8]pbFieldLen{
		{"bool_contents", len(c.GetBoolContents())},
		{"int_contents", len(c.GetIntContents())},
		{"int64_contents", len(c.GetInt64Contents())},
		{"uint_contents", len(c.GetUintContents())},
		{"uint64_contents", len(c.GetUint64Contents())},
		{"fp32_contents", len(c.GetFp32Contents())},
		{"fp64_contents", len(c.GetFp64Contents())},
		{"bytes_contents", len(c.GetBytesContents())},
	}
}

// pbContentsUsed reports whether c carries any element.
func pbContentsUsed(c *inferencepb.InferTensorContents) bool {
	for _, f := range pbContentsLens(c) {
		if f.n > 0 {
			return true
		}
	}
	return false
}

// pbContentsToRaw converts typed contents holding n elements of dt to raw
// bytes. Elements must sit in dt's field only, and narrow integers must fit
// their datatype.
func pbContentsToRaw(kind, name string, dt DataType, n int64, c *inferencepb.InferTensorContents) ([]byte, error) {
	field := pbContentsField(dt)
	if field == "" {
		if dt.Valid() {
			return nil, pbInvalid(kind, name, "%s data travels only in raw contents", dt)
		}
		return nil, pbInvalid(kind, name, "unknown datatype %q", dt)
	}
	for _, f := range pbContentsLens(c) {
		switch {
		case f.field == field && int64(f.n) != n:
			return nil, pbInvalid(kind, name, "%s has %d elements, shape needs %d", field, f.n, n)
		case f.field != field && f.n > 0:
			return nil, pbInvalid(kind, name, "%s data in %s (expected %s)", dt, f.field, field)
		}
	}
	size := dt.Size()
	switch dt {
	case Bool:
		out := make([]byte, n)
		for i, v := range c.GetBoolContents() {
			if v {
				out[i] = 1
			}
		}
		return out, nil
	case Int8, Int16, Int32:
		lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
		if dt != Int32 {
			hi = int64(1)<<(8*size-1) - 1
			lo = -hi - 1
		}
		out := make([]byte, 0, int(n)*size)
		for i, v := range c.GetIntContents() {
			if int64(v) < lo || int64(v) > hi {
				return nil, pbInvalid(kind, name, "element %d: %d out of range for %s", i, v, dt)
			}
			out = pbAppendLE(out, size, uint64(v))
		}
		return out, nil
	case Uint8, Uint16, Uint32:
		hi := uint64(math.MaxUint32)
		if dt != Uint32 {
			hi = uint64(1)<<(8*size) - 1
		}
		out := make([]byte, 0, int(n)*size)
		for i, v := range c.GetUintContents() {
			if uint64(v) > hi {
				return nil, pbInvalid(kind, name, "element %d: %d out of range for %s", i, v, dt)
			}
			out = pbAppendLE(out, size, uint64(v))
		}
		return out, nil
	case Int64:
		out := make([]byte, 0, int(n)*8)
		for _, v := range c.GetInt64Contents() {
			out = binary.LittleEndian.AppendUint64(out, uint64(v))
		}
		return out, nil
	case Uint64:
		out := make([]byte, 0, int(n)*8)
		for _, v := range c.GetUint64Contents() {
			out = binary.LittleEndian.AppendUint64(out, v)
		}
		return out, nil
	case FP32:
		out := make([]byte, 0, int(n)*4)
		for _, v := range c.GetFp32Contents() {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(v))
		}
		return out, nil
	case FP64:
		out := make([]byte, 0, int(n)*8)
		for _, v := range c.GetFp64Contents() {
			out = binary.LittleEndian.AppendUint64(out, math.Float64bits(v))
		}
		return out, nil
	}
	// BYTES
	total := 0
	for _, b := range c.GetBytesContents() {
		total += 4 + len(b)
	}
	out := make([]byte, 0, total)
	for i, b := range c.GetBytesContents() {
		if uint64(len(b)) > math.MaxUint32 {
			return nil, pbInvalid(kind, name, "BYTES element %d is longer than 4 GiB", i)
		}
		out = binary.LittleEndian.AppendUint32(out, uint32(len(b)))
		out = append(out, b...)
	}
	return out, nil
}

// pbAppendLE appends the low size bytes of v, little-endian.
func pbAppendLE(dst []byte, size int, v uint64) []byte {
	for i := range size {
		dst = append(dst, byte(v>>(8*i)))
	}
	return dst
}

// pbRawToContents converts raw bytes, already checked by pbCheckRaw, to typed
// contents. BYTES elements alias data.
func pbRawToContents(kind, name string, dt DataType, data []byte) (*inferencepb.InferTensorContents, error) {
	c := &inferencepb.InferTensorContents{}
	size := dt.Size()
	if size > 0 && len(data)%size != 0 {
		return nil, pbInvalid(kind, name, "%s data of %d bytes is not a whole number of elements", dt, len(data))
	}
	switch dt {
	case Bool:
		c.BoolContents = make([]bool, len(data))
		for i, b := range data {
			c.BoolContents[i] = b != 0
		}
	case Int8, Int16, Int32:
		c.IntContents = make([]int32, len(data)/size)
		for i := range c.IntContents {
			c.IntContents[i] = int32(pbSignExtend(pbLoadLE(data[i*size:], size), size))
		}
	case Uint8, Uint16, Uint32:
		c.UintContents = make([]uint32, len(data)/size)
		for i := range c.UintContents {
			c.UintContents[i] = uint32(pbLoadLE(data[i*size:], size))
		}
	case Int64:
		c.Int64Contents = make([]int64, len(data)/8)
		for i := range c.Int64Contents {
			c.Int64Contents[i] = int64(binary.LittleEndian.Uint64(data[i*8:]))
		}
	case Uint64:
		c.Uint64Contents = make([]uint64, len(data)/8)
		for i := range c.Uint64Contents {
			c.Uint64Contents[i] = binary.LittleEndian.Uint64(data[i*8:])
		}
	case FP32:
		c.Fp32Contents = make([]float32, len(data)/4)
		for i := range c.Fp32Contents {
			c.Fp32Contents[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[i*4:]))
		}
	case FP64:
		c.Fp64Contents = make([]float64, len(data)/8)
		for i := range c.Fp64Contents {
			c.Fp64Contents[i] = math.Float64frombits(binary.LittleEndian.Uint64(data[i*8:]))
		}
	case Bytes:
		for off := 0; off < len(data); {
			if len(data)-off < 4 {
				return nil, pbInvalid(kind, name, "BYTES data: truncated length prefix")
			}
			l := int(binary.LittleEndian.Uint32(data[off:]))
			off += 4
			if l > len(data)-off {
				return nil, pbInvalid(kind, name, "BYTES data: length %d exceeds the %d bytes left", l, len(data)-off)
			}
			c.BytesContents = append(c.BytesContents, data[off:off+l:off+l])
			off += l
		}
	default:
		if dt.Valid() {
			return nil, pbInvalid(kind, name, "%s data travels only in raw contents", dt)
		}
		return nil, pbInvalid(kind, name, "unknown datatype %q", dt)
	}
	return c, nil
}

// pbLoadLE reads a size-byte little-endian unsigned integer.
func pbLoadLE(b []byte, size int) uint64 {
	var v uint64
	for i := range size {
		v |= uint64(b[i]) << (8 * i)
	}
	return v
}

// pbSignExtend widens a size-byte two's-complement value.
func pbSignExtend(v uint64, size int) int64 {
	shift := 64 - 8*size
	return int64(v<<shift) >> shift
}
