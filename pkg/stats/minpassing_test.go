package stats

import (
	"errors"
	"testing"
)

// The h(t) table of testdata/loadgen/FORMAT.md, produced by LoadGen 6.0.17.
var loadgenHTable = []struct {
	p float64
	h map[int64]int64
}{
	{0.90, map[int64]int64{0: 44, 1: 63, 2: 79, 3: 94, 4: 109, 5: 122, 6: 136, 7: 149, 8: 162, 9: 174, 10: 187, 100: 1146, 1000: 9722}},
	{0.99, map[int64]int64{0: 459, 1: 661, 2: 836, 3: 998, 4: 1153, 5: 1302, 6: 1447, 7: 1589, 8: 1728, 9: 1865, 10: 2000, 100: 12471, 1000: 106569}},
	{0.999, map[int64]int64{0: 4603, 1: 6635, 2: 8401, 3: 10039, 4: 11597, 5: 13100, 6: 14561, 7: 15989, 8: 17390, 9: 18770, 10: 20130, 100: 125726, 1000: 1075032}},
}

func TestMinPassingReproducesLoadGenTable(t *testing.T) {
	for _, row := range loadgenHTable {
		// A fresh finder per cell and one shared finder must agree (the
		// memo must not change answers), as they do in LoadGen.
		shared, err := NewMinPassingFinder(row.p, EarlyStoppingConfidence)
		if err != nil {
			t.Fatal(err)
		}
		for tt, want := range row.h {
			fresh, _ := NewMinPassingFinder(row.p, EarlyStoppingConfidence)
			if got := fresh.MinPassing(tt); got != want {
				t.Errorf("p=%v: fresh h(%d) = %d, want %d", row.p, tt, got, want)
			}
			if got := shared.MinPassing(tt); got != want {
				t.Errorf("p=%v: shared h(%d) = %d, want %d", row.p, tt, got, want)
			}
		}
	}
}

func TestMinPassingIsTheSmallestPassingH(t *testing.T) {
	f, _ := NewMinPassingFinder(0.9, EarlyStoppingConfidence)
	for tt := int64(0); tt <= 300; tt++ {
		h := f.MinPassing(tt)
		// Definition check with the independent LoadGen formula.
		if loadgenBetaRegularized(0.9, h, 1+tt) >= 0.01 || loadgenBetaRegularized(0.9, h-1, 1+tt) < 0.01 {
			t.Fatalf("h(%d) = %d is not the smallest h with odds < 0.01", tt, h)
		}
	}
}

func TestMaxOverLatency(t *testing.T) {
	f, _ := NewMinPassingFinder(0.9, EarlyStoppingConfidence)
	tests := []struct{ n, want int64 }{
		{0, -1}, {43, -1}, {44, 0}, {63, 0}, {64, 1}, {80, 1}, {81, 2},
		{196, 9}, {197, 10}, {1246, 100}, {1245, 99}, {10722, 1000},
	}
	for _, tc := range tests {
		if got := f.MaxOverLatency(tc.n); got != tc.want {
			t.Errorf("MaxOverLatency(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
}

func TestNewMinPassingFinderRejectsBadInput(t *testing.T) {
	for _, tc := range []struct{ p, c float64 }{{0, 0.99}, {1, 0.99}, {0.9, 1}, {0.9, 0}} {
		if _, err := NewMinPassingFinder(tc.p, tc.c); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("NewMinPassingFinder(%v, %v) error = %v", tc.p, tc.c, err)
		}
	}
}
