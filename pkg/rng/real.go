package rng

import (
	"math"
	"time"
)

// GenerateCanonical returns a value in [0, 1) like libstdc++'s
// std::generate_canonical<double, 53>(mt19937): two 32-bit draws, the first
// as the low part, summed once in double and scaled by 2^-64. A sum that
// rounds up to 1 is replaced by the largest double below 1.
func GenerateCanonical(g *MT19937) float64 {
	lo := float64(g.Uint32())
	hi := float64(g.Uint32())
	// float64() around the product stops the compiler from fusing it with the
	// sum (allowed on arm64 and others): libstdc++ rounds the product (exact
	// here) and then the sum.
	sum := lo + float64(hi*0x1p32)
	ret := sum / 0x1p64
	if ret >= 1 {
		ret = math.Nextafter(1, 0)
	}
	return ret
}

// UniformReal returns a value in [a, b) like
// std::uniform_real_distribution<double>(a, b): canonical*(b-a)+a.
func UniformReal(g *MT19937, a, b float64) float64 {
	return float64(GenerateCanonical(g)*(b-a)) + a
}

// Exponential returns a draw of std::exponential_distribution<double>(lambda)
// as libstdc++ computes it: -log(1 - canonical) / lambda, with glibc's log.
func Exponential(g *MT19937, lambda float64) float64 {
	return -Log(1-GenerateCanonical(g)) / lambda
}

// DurationCastNs converts seconds to nanoseconds like
// std::chrono::duration_cast<std::chrono::nanoseconds>(
// std::chrono::duration<double>(seconds)): one double multiply by 1e9, then
// truncation toward zero. Out-of-range and NaN inputs, undefined in C++,
// saturate (NaN gives 0) so the result is at least defined.
func DurationCastNs(seconds float64) time.Duration {
	ns := seconds * 1e9
	switch {
	case ns != ns:
		return 0
	case ns >= math.MaxInt64:
		return math.MaxInt64
	case ns <= math.MinInt64:
		return math.MinInt64
	}
	return time.Duration(int64(ns))
}
