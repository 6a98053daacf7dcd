package qsl

import "math"

// halfBits rounds x to nearest-even in a binary float format with manBits
// mantissa bits and the given exponent bias (FP16: 10, 15; BF16: 7, 127)
// and returns its bits; ok is false when x overflows the format. Converting
// straight from float64 avoids the double rounding of going through float32.
func halfBits(x float64, manBits uint, bias int) (bits uint16, ok bool) {
	var sign uint64
	if math.Signbit(x) {
		sign = 1 << 15 // both formats are 16 bits with the sign on top
	}
	ax := math.Abs(x)
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, false
	}
	if ax == 0 {
		return uint16(sign), true
	}
	_, exp := math.Frexp(ax)
	e := exp - 1 // ax = 1.f × 2^e
	minE := 1 - bias
	var b uint64
	if e < minE {
		// Subnormal: units of 2^(minE-manBits); a round up to 1<<manBits
		// lands exactly on the smallest normal's bits.
		b = uint64(math.RoundToEven(math.Ldexp(ax, int(manBits)-minE)))
	} else {
		// m in [2^manBits, 2^(manBits+1)]; a round up to the top carries
		// into the exponent, which the sum below does by itself.
		m := uint64(math.RoundToEven(math.Ldexp(ax, int(manBits)-e)))
		b = uint64(e+bias)<<manBits + m - 1<<manBits
	}
	if b >= uint64(2*bias+1)<<manBits {
		return 0, false
	}
	return uint16(sign | b), true
}
