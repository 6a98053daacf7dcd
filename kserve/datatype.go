package kserve

// DataType is a KServe v2 tensor datatype name as it appears on the wire.
type DataType string

// The datatypes of the protocol.
const (
	Bool   DataType = "BOOL"
	Uint8  DataType = "UINT8"
	Uint16 DataType = "UINT16"
	Uint32 DataType = "UINT32"
	Uint64 DataType = "UINT64"
	Int8   DataType = "INT8"
	Int16  DataType = "INT16"
	Int32  DataType = "INT32"
	Int64  DataType = "INT64"
	FP16   DataType = "FP16"
	FP32   DataType = "FP32"
	FP64   DataType = "FP64"
	BF16   DataType = "BF16"
	Bytes  DataType = "BYTES"
)

// DataTypes lists every datatype, in the protocol's order.
var DataTypes = []DataType{Bool, Uint8, Uint16, Uint32, Uint64, Int8, Int16, Int32, Int64, FP16, FP32, FP64, BF16, Bytes}

// Size is the byte size of one element: 0 for BYTES (variable: each element is
// a 4-byte little-endian length and its bytes) and -1 for an unknown datatype.
func (d DataType) Size() int {
	switch d {
	case Bool, Uint8, Int8:
		return 1
	case Uint16, Int16, FP16, BF16:
		return 2
	case Uint32, Int32, FP32:
		return 4
	case Uint64, Int64, FP64:
		return 8
	case Bytes:
		return 0
	}
	return -1
}

// Valid reports whether d is a datatype of the protocol.
func (d DataType) Valid() bool { return d.Size() >= 0 }

// JSONCapable reports whether d can travel as JSON data; FP16 and BF16 go only
// as binary.
func (d DataType) JSONCapable() bool { return d.Valid() && d != FP16 && d != BF16 }
