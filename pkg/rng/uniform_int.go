package rng

import "math/bits"

// engineRange is mt19937's max() - min(): the engine yields 32 bits.
const engineRange = 1<<32 - 1

// UniformInt returns a value in [a, b] exactly as libstdc++'s
// std::uniform_int_distribution<T>{a, b}(mt19937) does for any integer T up
// to 64 bits: Lemire's nearly-divisionless method when the range is smaller
// than the engine's, the raw output when it is equal, and libstdc++'s
// recursive upscaling when it is larger. It panics if a > b, a programming
// error (the C++ precondition).
func UniformInt(g *MT19937, a, b uint64) uint64 {
	if a > b {
		panic("rng: UniformInt with a > b")
	}
	return a + uniformUpTo(g, b-a)
}

// uniformUpTo returns a value in [0, urange].
func uniformUpTo(g *MT19937, urange uint64) uint64 {
	switch {
	case urange < engineRange:
		// libstdc++ _S_nd: multiply the 32-bit output by the range size and
		// keep the high word; reject only the low words below 2^32 mod size.
		r := uint32(urange + 1)
		hi, lo := bits.Mul32(g.Uint32(), r)
		if lo < r {
			threshold := -r % r
			for lo < threshold {
				hi, lo = bits.Mul32(g.Uint32(), r)
			}
		}
		return uint64(hi)
	case urange == engineRange:
		return uint64(g.Uint32())
	default:
		// Upscaling: a recursive draw for the high part plus one raw output,
		// retried on overflow or when past the range.
		const erange = engineRange + 1
		for {
			tmp := erange * uniformUpTo(g, urange/erange)
			ret := tmp + uint64(g.Uint32())
			if ret <= urange && ret >= tmp {
				return ret
			}
		}
	}
}
