package qsl

import (
	"fmt"
	"strconv"

	"github.com/netloadgen/netloadgen/kserve"
)

// npyDatatype maps a numpy dtype string to the KServe datatype of the model
// input it feeds, and says whether the elements need byte-swapping (a
// big-endian file: the protocol's tensors are little-endian). BF16 has no
// numpy dtype; its bits are stored as <u2, accepted only for a BF16 input.
func npyDatatype(descr string, want kserve.DataType) (dt kserve.DataType, swap bool, err error) {
	if len(descr) < 3 {
		return "", false, fmt.Errorf("dtype %q is not a numpy dtype string", descr)
	}
	order, kind := descr[0], descr[1]
	size, perr := strconv.Atoi(descr[2:])
	if perr != nil || (order != '<' && order != '>' && order != '|' && order != '=') {
		return "", false, fmt.Errorf("dtype %q is not a numpy dtype string", descr)
	}
	switch {
	case kind == 'b' && size == 1:
		dt = kserve.Bool
	case kind == 'i' && size == 1:
		dt = kserve.Int8
	case kind == 'i' && size == 2:
		dt = kserve.Int16
	case kind == 'i' && size == 4:
		dt = kserve.Int32
	case kind == 'i' && size == 8:
		dt = kserve.Int64
	case kind == 'u' && size == 1:
		dt = kserve.Uint8
	case kind == 'u' && size == 2:
		dt = kserve.Uint16
		if want == kserve.BF16 {
			dt = kserve.BF16
		}
	case kind == 'u' && size == 4:
		dt = kserve.Uint32
	case kind == 'u' && size == 8:
		dt = kserve.Uint64
	case kind == 'f' && size == 2:
		dt = kserve.FP16
	case kind == 'f' && size == 4:
		dt = kserve.FP32
	case kind == 'f' && size == 8:
		dt = kserve.FP64
	default:
		return "", false, fmt.Errorf("dtype %q has no KServe datatype this reader maps (bool, int8-64, uint8-64, float16-64)", descr)
	}
	return dt, order == '>' && size > 1, nil
}

// swapBytes reverses each size-byte element of b in place.
func swapBytes(b []byte, size int) {
	for i := 0; i+size <= len(b); i += size {
		e := b[i : i+size]
		for l, r := 0, size-1; l < r; l, r = l+1, r-1 {
			e[l], e[r] = e[r], e[l]
		}
	}
}
