package rng

import (
	"math"
	"slices"
	"testing"
)

func TestMT19937StandardCheckValue(t *testing.T) {
	// The C++ standard ([rand.predef]) requires the 10000th consecutive
	// output of a default-constructed mt19937 to be 4123659995.
	g := NewMT19937(DefaultSeed)
	var v uint32
	for range 10000 {
		v = g.Uint32()
	}
	if v != 4123659995 {
		t.Fatalf("10000th output = %d, want 4123659995", v)
	}
}

func TestMT19937SeedKeepsLow32Bits(t *testing.T) {
	a := NewMT19937(0x1_0000_0007)
	b := NewMT19937(7)
	for i := range 1000 {
		if x, y := a.Uint32(), b.Uint32(); x != y {
			t.Fatalf("output %d: %d != %d", i, x, y)
		}
	}
}

func TestUniformIntStaysInRange(t *testing.T) {
	tests := []struct {
		name string
		a, b uint64
	}{
		{"single value", 5, 5},
		{"two values", 0, 1},
		{"small", 10, 17},
		{"non power of two", 0, 999},
		{"whole engine range", 0, 1<<32 - 1},
		{"upscaling", 0, 1<<40 + 12345},
		{"upscaling full uint64", 0, math.MaxUint64},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := NewMT19937(42)
			for range 2000 {
				v := UniformInt(g, tc.a, tc.b)
				if v < tc.a || v > tc.b {
					t.Fatalf("UniformInt(%d, %d) = %d", tc.a, tc.b, v)
				}
			}
		})
	}
}

func TestUniformIntCoversSmallRange(t *testing.T) {
	g := NewMT19937(1)
	seen := make([]int, 7)
	for range 7000 {
		seen[UniformInt(g, 0, 6)]++
	}
	for v, n := range seen {
		if n < 800 || n > 1200 {
			t.Errorf("value %d drawn %d times of 7000", v, n)
		}
	}
}

func TestShuffleIsAPermutation(t *testing.T) {
	// 65535 and 65536 straddle libstdc++'s switch from two swaps per draw to one.
	for _, n := range []int{0, 1, 2, 3, 4, 1023, 1024, 65535, 65536, 70001} {
		s := make([]int, n)
		for i := range s {
			s[i] = i
		}
		Shuffle(NewMT19937(uint64(n)), s)
		got := slices.Clone(s)
		slices.Sort(got)
		for i, v := range got {
			if v != i {
				t.Fatalf("n=%d: not a permutation (sorted[%d] = %d)", n, i, v)
			}
		}
		if n >= 4 && slices.IsSorted(s) {
			t.Errorf("n=%d: shuffle left the slice in order", n)
		}
	}
}

func TestShuffleDrawCount(t *testing.T) {
	// The two-swaps-per-draw path uses about n/2 draws, the one-swap path
	// n-1: observable as how far the engine has advanced afterwards.
	tests := []struct {
		n, draws int
	}{
		{1, 0},
		{2, 1},
		{3, 1},
		{4, 2},
		{1001, 500},
		{65535, 32767},
		{65536, 65535},
	}
	for _, tc := range tests {
		g := NewMT19937(9)
		Shuffle(g, make([]int, tc.n))
		ref := NewMT19937(9)
		// Lemire rejections add draws: rarely for small ranges, for up to half
		// the draws when the range is between 2^31 and 2^32 (n near 65535).
		next := g.Uint32()
		found := -1
		for i := 0; i <= 2*tc.draws+8; i++ {
			if ref.Uint32() == next && i >= tc.draws {
				found = i
				break
			}
		}
		if found < tc.draws || found > 2*tc.draws+8 {
			t.Errorf("n=%d: engine advanced %d draws, want about %d", tc.n, found, tc.draws)
		}
	}
}

func TestGenerateCanonicalInUnitInterval(t *testing.T) {
	g := NewMT19937(3)
	for range 100000 {
		u := GenerateCanonical(g)
		if u < 0 || u >= 1 {
			t.Fatalf("canonical %v outside [0,1)", u)
		}
	}
}

func TestUniformRealRange(t *testing.T) {
	g := NewMT19937(4)
	for range 10000 {
		if v := UniformReal(g, -2, 3); v < -2 || v >= 3 {
			t.Fatalf("UniformReal = %v", v)
		}
	}
}

func TestDurationCastNs(t *testing.T) {
	tests := []struct {
		s    float64
		want int64
	}{
		{0, 0},
		{1e-3, 1000000},
		{1.0 / 3, 333333333},
		{2.9999999999e-9, 2}, // truncation, not rounding
		{-1.5e-9, -1},        // toward zero
		{math.NaN(), 0},
		{math.Inf(1), math.MaxInt64},
		{math.Inf(-1), math.MinInt64},
	}
	for _, tc := range tests {
		if got := int64(DurationCastNs(tc.s)); got != tc.want {
			t.Errorf("DurationCastNs(%v) = %d, want %d", tc.s, got, tc.want)
		}
	}
}

func TestLogSpecialValues(t *testing.T) {
	tests := []struct {
		x, want float64
	}{
		{1, 0},
		{0, math.Inf(-1)},
		{math.Copysign(0, -1), math.Inf(-1)},
		{math.Inf(1), math.Inf(1)},
		{math.E, 1},
		{2, math.Ln2},
	}
	for _, tc := range tests {
		if got := Log(tc.x); got != tc.want {
			t.Errorf("Log(%v) = %v, want %v", tc.x, got, tc.want)
		}
	}
	for _, x := range []float64{-1, math.NaN(), math.Inf(-1)} {
		if got := Log(x); !math.IsNaN(got) {
			t.Errorf("Log(%v) = %v, want NaN", x, got)
		}
	}
}

func TestLogWithinOneUlpOfGo(t *testing.T) {
	// glibc's log is accurate to 0.52 ulp and Go's to under 1 ulp, so the
	// two never differ by more than one ulp, over every range of inputs
	// (subnormal, near 1, large).
	g := NewMT19937(11)
	for i := range 200000 {
		var x float64
		switch i % 4 {
		case 0:
			x = math.Float64frombits(uint64(g.Uint32())<<32 | uint64(g.Uint32())&^(1<<63))
		case 1:
			x = 1 + (GenerateCanonical(g)-0.5)/4
		case 2:
			x = math.Float64frombits(uint64(g.Uint32()) << 20) // subnormal
		default:
			x = 1 - GenerateCanonical(g)
		}
		if math.IsNaN(x) || math.IsInf(x, 0) || x == 0 {
			continue
		}
		got, want := Log(x), math.Log(x)
		if x < 0x1p-1022 {
			// Go's amd64 math.Log is wrong for subnormals (it returns
			// about log(1.6e-308) for 1.03e-308): compare on the rescaled
			// input instead, to a relative 1e-15.
			want = math.Log(x*0x1p52) - 52*math.Ln2
			if math.Abs(got-want) > 1e-15*math.Abs(want) {
				t.Fatalf("Log(%x) = %v, want about %v", math.Float64bits(x), got, want)
			}
			continue
		}
		d := int64(math.Float64bits(got)) - int64(math.Float64bits(want))
		if d < -1 || d > 1 {
			t.Fatalf("Log(%x) = %x, math.Log = %x", math.Float64bits(x), math.Float64bits(got), math.Float64bits(want))
		}
	}
}
