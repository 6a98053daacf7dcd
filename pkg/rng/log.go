package rng

import "math"

// glibc's log constants (e_log_data.c): ln2 split in two parts so that
// k*ln2hi is exact, the degree-11 polynomial for log1p near 1 (poly1) and
// the degree-6 one for the reduced argument (poly).
const (
	logLn2hi = 0x1.62e42fefa3800p-1
	logLn2lo = 0x1.ef35793c76730p-45

	logB0  = -0x1p-1
	logB1  = 0x1.5555555555577p-2
	logB2  = -0x1.ffffffffffdcbp-3
	logB3  = 0x1.999999995dd0cp-3
	logB4  = -0x1.55555556745a7p-3
	logB5  = 0x1.24924a344de3p-3
	logB6  = -0x1.fffffa4423d65p-4
	logB7  = 0x1.c7184282ad6cap-4
	logB8  = -0x1.999eb43b068ffp-4
	logB9  = 0x1.78182f7afd085p-4
	logB10 = -0x1.5521375d145cdp-4

	logA0 = -0x1.0000000000001p-1
	logA1 = 0x1.555555551305bp-2
	logA2 = -0x1.fffffffeb459p-3
	logA3 = 0x1.999b324f10111p-3
	logA4 = -0x1.55575e506c89fp-3

	logTableBits = 7
	logOff       = 0x3fe6000000000000
	logNearOneLo = 0x3fee000000000000 // bits of 1 - 0x1p-4
	logNearOneHi = 0x3ff1090000000000 // bits of 1 + 0x1.09p-4
)

// Log returns the natural logarithm of x bit-identical to glibc 2.28–2.36's
// log on x86-64 CPUs with FMA (the ifunc variant glibc selects there, built
// with -mfma so GCC fuses every multiply-add). std::exponential_distribution
// calls it, and Go's math.Log differs from it in the last bit for about 7%
// of inputs, which can move a truncated nanosecond in LoadGen's schedule.
// Every multiply-add below is written as math.FMA where GCC fuses it and
// with an explicit float64() where it must stay two roundings.
func Log(x float64) float64 {
	ix := math.Float64bits(x)
	if ix-logNearOneLo < logNearOneHi-logNearOneLo {
		return logNearOne(x)
	}
	top := ix >> 48
	if top-0x0010 >= 0x7ff0-0x0010 {
		switch {
		case ix<<1 == 0:
			return math.Inf(-1)
		case ix == math.Float64bits(math.Inf(1)):
			return x
		case top&0x8000 != 0 || top&0x7ff0 == 0x7ff0:
			return math.NaN()
		}
		// Subnormal: scale into the normal range and undo it through k.
		ix = math.Float64bits(x * 0x1p52)
		ix -= 52 << 52
	}
	// x = 2^k z with z in [0x1.6p-1, 0x1.6p0), split into 128 subintervals.
	tmp := ix - logOff
	i := (tmp >> (52 - logTableBits)) % (1 << logTableBits)
	k := int64(tmp) >> 52
	iz := ix - (tmp & (0xfff << 52))
	invc, logc := logTable[i].invc, logTable[i].logc
	z := math.Float64frombits(iz)

	r := math.FMA(z, invc, -1)
	kd := float64(k)
	w := math.FMA(kd, logLn2hi, logc)
	hi := w + r
	lo := math.FMA(kd, logLn2lo, (w-hi)+r)
	r2 := float64(r * r)
	p := math.FMA(r2, math.FMA(r, logA4, logA3), math.FMA(r, logA2, logA1))
	y := math.FMA(float64(r*r2), p, math.FMA(r2, logA0, lo))
	return y + hi
}

// logNearOne is glibc's separate path for |x-1| small, where the table's
// log(c) would lose too much relative accuracy.
func logNearOne(x float64) float64 {
	if x == 1 {
		return 0
	}
	r := x - 1
	r2 := float64(r * r)
	r3 := float64(r * r2)
	p3 := math.FMA(r3, logB10, math.FMA(r2, logB9, math.FMA(r, logB8, logB7)))
	p2 := math.FMA(r3, p3, math.FMA(r2, logB6, math.FMA(r, logB5, logB4)))
	p1 := math.FMA(r3, p2, math.FMA(r2, logB3, math.FMA(r, logB2, logB1)))
	// Split r into a 26-bit high part so rhi*rhi is exact.
	w := float64(r * 0x1p27)
	rhi := (r + w) - w
	rlo := r - rhi
	w = float64(float64(rhi*rhi) * logB0)
	hi := r + w
	lo := (r - hi) + w
	lo = math.FMA(float64(logB0*rlo), rhi+r, lo)
	y := math.FMA(r3, p1, lo)
	return y + hi
}
