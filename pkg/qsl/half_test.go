package qsl

import (
	"math"
	"testing"
)

// decodeHalf is the format's definition: sign, biased exponent, mantissa;
// exponent 0 is subnormal.
func decodeHalf(b uint16, man uint, bias int) float64 {
	sign := 1.0
	if b>>(15) == 1 {
		sign = -1
	}
	e := int(b>>man) & (1<<(15-man) - 1)
	m := float64(b & (1<<man - 1))
	if e == 0 {
		return sign * math.Ldexp(m, 1-bias-int(man))
	}
	return sign * math.Ldexp(1+m/float64(uint(1)<<man), e-bias)
}

// TestHalfBitsRoundTrip: every finite FP16 and BF16 value converts back to
// its own bits.
func TestHalfBitsRoundTrip(t *testing.T) {
	for _, f := range []struct {
		name string
		man  uint
		bias int
	}{{"FP16", 10, 15}, {"BF16", 7, 127}} {
		maxExp := 1<<(15-f.man) - 1
		for b := range 1 << 16 {
			if int(uint16(b)>>f.man)&maxExp == maxExp {
				continue // Inf and NaN
			}
			x := decodeHalf(uint16(b), f.man, f.bias)
			got, ok := halfBits(x, f.man, f.bias)
			if !ok || got != uint16(b) {
				t.Fatalf("%s %#04x = %g converts to %#04x (ok %v)", f.name, b, x, got, ok)
			}
		}
	}
}

func TestHalfBitsRounding(t *testing.T) {
	for _, c := range []struct {
		x    float64
		man  uint
		bias int
		want uint16
		ok   bool
	}{
		{1.0 / 3, 10, 15, 0x3555, true},
		{0.1, 10, 15, 0x2e66, true},
		{1 + math.Ldexp(1, -11), 10, 15, 0x3c00, true},   // halfway: to even
		{1 + 3*math.Ldexp(1, -11), 10, 15, 0x3c02, true}, // halfway: to even, up
		{math.Ldexp(1, -25), 10, 15, 0x0000, true},       // half the smallest subnormal: to even (0)
		{65519, 10, 15, 0x7bff, true},                    // rounds down to the largest finite
		{65520, 10, 15, 0, false},                        // rounds to Inf
		{-2, 10, 15, 0xc000, true},
		{math.Copysign(0, -1), 10, 15, 0x8000, true},
		{3.14159, 7, 127, 0x4049, true},
		{1 + math.Ldexp(1, -8), 7, 127, 0x3f80, true},
		{1e39, 7, 127, 0, false},
	} {
		got, ok := halfBits(c.x, c.man, c.bias)
		if got != c.want || ok != c.ok {
			t.Errorf("halfBits(%g, %d, %d) = %#04x %v, want %#04x %v", c.x, c.man, c.bias, got, ok, c.want, c.ok)
		}
	}
}
