package stats

import (
	"errors"
	"math"
	"testing"
)

func TestNumQueriesMatchesMLPerfTable(t *testing.T) {
	// MLPERF.md "Statistics" and SEEDS-DIGEST B-08: exact value and rounded count.
	tests := []struct {
		p       float64
		exact   float64
		rounded int64
	}{
		{0.90, 23885.63, 24576},
		{0.95, 50425.21, 57344},
		{0.97, 85811.33, 90112},
		{0.99, 262741.91, 270336},
	}
	for _, tc := range tests {
		x, err := NumQueriesExact(tc.p, 0.99)
		if err != nil {
			t.Fatalf("NumQueriesExact(%v): %v", tc.p, err)
		}
		if math.Abs(x-tc.exact) > 0.005 {
			t.Errorf("NumQueriesExact(%v) = %.4f, want %.2f", tc.p, x, tc.exact)
		}
		n, err := NumQueries(tc.p, 0.99)
		if err != nil {
			t.Fatalf("NumQueries(%v): %v", tc.p, err)
		}
		if n != tc.rounded {
			t.Errorf("NumQueries(%v) = %d, want %d", tc.p, n, tc.rounded)
		}
	}
}

func TestNumQueriesRejectsBadInput(t *testing.T) {
	for _, tc := range []struct{ p, c float64 }{
		{0, 0.99}, {1, 0.99}, {-0.5, 0.99}, {math.NaN(), 0.99},
		{0.9, 0}, {0.9, 1}, {0.9, math.NaN()}, {1 - 1e-18, 0.99},
	} {
		if _, err := NumQueries(tc.p, tc.c); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("NumQueries(%v, %v) error = %v, want ErrInvalidArgument", tc.p, tc.c, err)
		}
	}
}

func TestInverseNormalCDF(t *testing.T) {
	// Reference quantiles (tables of the normal distribution, 16+ digits).
	known := []struct{ p, z float64 }{
		{0.5, 0},
		{0.005, -2.5758293035489004},
		{0.995, 2.5758293035489004},
		{0.025, -1.959963984540054},
		{0.1, -1.2815515655446004},
		{1e-10, -6.361340902404056},
	}
	for _, tc := range known {
		z, err := InverseNormalCDF(tc.p)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(z-tc.z) > 4e-15*math.Max(1, math.Abs(tc.z)) {
			t.Errorf("InverseNormalCDF(%v) = %.17g, want %.17g", tc.p, z, tc.z)
		}
	}
	// Round trip through Φ over many decades.
	for _, p := range []float64{1e-300, 1e-100, 1e-20, 1e-5, 0.001, 0.02425, 0.3, 0.7, 0.97575, 0.999} {
		z, err := InverseNormalCDF(p)
		if err != nil {
			t.Fatal(err)
		}
		back := 0.5 * math.Erfc(-z/math.Sqrt2)
		if math.Abs(back-p) > 1e-13*p {
			t.Errorf("Φ(Φ⁻¹(%g)) = %g", p, back)
		}
	}
	for _, p := range []float64{0, 1, -1, math.NaN(), math.Inf(1)} {
		if _, err := InverseNormalCDF(p); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("InverseNormalCDF(%v) error = %v", p, err)
		}
	}
}
