package rng

// Parameters of MT19937 (Matsumoto & Nishimura 1998), as fixed by the C++
// standard for std::mt19937.
const (
	mtN         = 624
	mtM         = 397
	mtMatrixA   = 0x9908b0df
	mtUpperMask = 0x80000000
	mtLowerMask = 0x7fffffff
	mtInitMult  = 1812433253
)

// MT19937 is the 32-bit Mersenne Twister, identical to C++ std::mt19937.
// Its zero value is not usable; build it with NewMT19937.
type MT19937 struct {
	state [mtN]uint32
	next  int
}

// DefaultSeed is the seed of a default-constructed std::mt19937.
const DefaultSeed = 5489

// NewMT19937 returns an engine seeded like std::mt19937(seed). LoadGen
// passes its uint64 seeds straight to the constructor, and seed() keeps
// only seed mod 2^32, so only the low 32 bits matter.
func NewMT19937(seed uint64) *MT19937 {
	m := &MT19937{}
	m.Seed(seed)
	return m
}

// Seed re-seeds the engine like std::mt19937::seed(seed).
func (m *MT19937) Seed(seed uint64) {
	m.state[0] = uint32(seed)
	for i := 1; i < mtN; i++ {
		prev := m.state[i-1]
		m.state[i] = mtInitMult*(prev^(prev>>30)) + uint32(i)
	}
	m.next = mtN
}

// Uint32 returns the next output, like std::mt19937::operator().
func (m *MT19937) Uint32() uint32 {
	if m.next >= mtN {
		m.twist()
	}
	y := m.state[m.next]
	m.next++
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	y ^= y >> 18
	return y
}

// twist regenerates the whole state block at once, as libstdc++'s
// _M_gen_rand does; the output sequence is the same as the element-wise form.
func (m *MT19937) twist() {
	s := &m.state
	for i := 0; i < mtN; i++ {
		y := (s[i] & mtUpperMask) | (s[(i+1)%mtN] & mtLowerMask)
		v := s[(i+mtM)%mtN] ^ (y >> 1)
		if y&1 != 0 {
			v ^= mtMatrixA
		}
		s[i] = v
	}
	m.next = 0
}
