package rng

// Shuffle permutes s exactly as libstdc++'s std::shuffle(first, last,
// mt19937) does. When n*n fits in the engine's range (n <= 65535 for
// mt19937; libstdc++ tests urngrange/n >= n) one draw picks the swap
// partners of two successive positions; otherwise it is a plain front-to-back
// Fisher–Yates with one draw per position.
func Shuffle[T any](g *MT19937, s []T) {
	n := uint64(len(s))
	if n == 0 {
		return
	}
	if engineRange/n >= n {
		i := uint64(1)
		if n%2 == 0 {
			// An even length leaves an odd number of swaps: do one up front.
			j := uniformUpTo(g, 1)
			s[1], s[j] = s[j], s[1]
			i = 2
		}
		for i != n {
			b0 := i + 1 // swap range for position i
			b1 := i + 2 // and for position i+1
			x := uniformUpTo(g, b0*b1-1)
			j, k := x/b1, x%b1
			s[i], s[j] = s[j], s[i]
			s[i+1], s[k] = s[k], s[i+1]
			i += 2
		}
		return
	}
	for i := uint64(1); i < n; i++ {
		j := uniformUpTo(g, i)
		s[i], s[j] = s[j], s[i]
	}
}
