package stats

import (
	"bufio"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
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

type hRow struct {
	p    float64
	t, h int64
}

// readHTable reads testdata/htable_sample.txt (a copy of the shared
// testdata/loadgen file; FORMAT.md "Early-stopping table"): `p t h` rows from
// the C++ LoadGen 6.0.17, a fresh finder per row, confidence 0.99.
func readHTable(t *testing.T) []hRow {
	t.Helper()
	fh, err := os.Open("testdata/htable_sample.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var rows []hRow
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("htable line %q: want `p t h`", line)
		}
		p, err1 := strconv.ParseFloat(f[0], 64)
		tt, err2 := strconv.ParseInt(f[1], 10, 64)
		h, err3 := strconv.ParseInt(f[2], 10, 64)
		if err := errors.Join(err1, err2, err3); err != nil {
			t.Fatalf("htable line %q: %v", line, err)
		}
		rows = append(rows, hRow{p, tt, h})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestMinPassingReproducesLoadGenSample(t *testing.T) {
	rows := readHTable(t)
	if len(rows) < 2000 {
		t.Fatalf("htable_sample.txt has %d rows; the sample has 2254", len(rows))
	}
	named := map[hRow]bool{{0.99, 8550, 868100}: false, {0.9999, 243, 2817760}: false}
	for _, r := range rows {
		if _, ok := named[r]; ok {
			named[r] = true
		}
		f, _ := NewMinPassingFinder(r.p, EarlyStoppingConfidence)
		if got := f.MinPassing(r.t); got != r.h {
			t.Errorf("p=%v: h(%d) = %d, LoadGen %d", r.p, r.t, got, r.h)
		}
	}
	for r, seen := range named {
		if !seen {
			t.Errorf("htable_sample.txt lacks the row %v", r)
		}
	}
}

// At these rows LoadGen's rounded odds pass an h whose exact odds do not:
// the reason the finder evaluates the odds LoadGen's way.
func TestLoadGenOddsDepartFromExactCDF(t *testing.T) {
	for _, r := range []hRow{{0.99, 8550, 868100}, {0.9999, 243, 2817760}} {
		f, _ := NewMinPassingFinder(r.p, EarlyStoppingConfidence)
		if odds := loadgenOdds(r.h, r.t, r.p); odds >= f.threshold {
			t.Errorf("p=%v t=%d: LoadGen odds at h=%d = %.17g, want < %v", r.p, r.t, r.h, odds, f.threshold)
		}
		if cdf := binomialCDF(r.t, r.h+r.t, 1-r.p, r.p); cdf < f.threshold {
			t.Errorf("p=%v t=%d: exact odds at h=%d = %.17g, want ≥ %v", r.p, r.t, r.h, cdf, f.threshold)
		}
	}
}

// LoadGen's SingleStream/MultiStream loop calls one finder for t = 1, 2, …,
// each search bracketed by the memo's last two answers. In these ranges,
// which hold every t ≤ 2000 at p = 0.9999 where LoadGen's rounding moves h
// (243, 725, 1667, 1742) and p = 0.99's t = 8550, the loop's h(t) is a fresh
// finder's.
func TestLoopMinPassingEqualsFresh(t *testing.T) {
	limits := []struct {
		p float64
		n int64
	}{{0.5, 2000}, {0.9, 3000}, {0.99, 9000}, {0.999, 2000}, {0.9999, 2000}}
	for _, l := range limits {
		loop, _ := NewMinPassingFinder(l.p, EarlyStoppingConfidence)
		fresh, _ := NewMinPassingFinder(l.p, EarlyStoppingConfidence)
		loop.loopMinPassing(l.n)
		for i := int64(1); i <= l.n; i++ {
			if got, want := loop.loopMinPassing(i), fresh.MinPassing(i); got != want {
				t.Errorf("p=%v: loop h(%d) = %d, fresh %d", l.p, i, got, want)
			}
		}
	}
}

// search brackets h(t) as early_stopping.cc does from the memo's two points
// nearest below t; a bracket that misses the answer yields its end.
func TestSearchUsesLoadGenBracket(t *testing.T) {
	f, _ := NewMinPassingFinder(0.9, EarlyStoppingConfidence)
	h98, h99, h100 := f.MinPassing(98), f.MinPassing(99), f.MinPassing(100)
	if h100 != h99+10 {
		t.Fatalf("h(99), h(100) = %d, %d; the cases below assume an increment of 10", h99, h100)
	}
	tests := []struct {
		name           string
		x0, y0, x1, y1 int64
		want           int64
	}{
		{"memo of the loop", 98, h98, 99, h99, h100},
		// [y1 + ⌊p/(1−p)⌋, y1 + (y1−y0)·(x1−x0) + 1) = [h99+9, h99+9) is
		// empty and its start, one below h100, is returned.
		{"increment too small", 98, h99 - 8, 99, h99, h99 + 9},
		// The slope is (y1−y0)·(x1−x0) = 10, not 2.5: the end h99+11 holds h100.
		{"slope multiplied", 97, h99 - 5, 99, h99, h100},
		// Lower end y1 + ⌊p/(1−p)⌋ passes already and is returned.
		{"lower end above", 98, h98, 99, h99 + 5, h99 + 5 + 9},
		{"fresh", -1, 0, 0, 44, h100},
	}
	for _, tc := range tests {
		if got := f.search(100, tc.x0, tc.y0, tc.x1, tc.y1); got != tc.want {
			t.Errorf("%s: search(100) = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// At p = 0.99, t = 8550 LoadGen's h is one below the exact one, so a run of
// h+t = 876650 queries with 8550 over the bound passes (Server) and its
// estimate discards 8549 (SingleStream/MultiStream), where the exact h would
// fail it and discard one fewer.
func TestEarlyStoppingAtLoadGenRoundedRow(t *testing.T) {
	f, _ := NewMinPassingFinder(0.99, EarlyStoppingConfidence)
	const n = 868100 + 8550
	if v := f.Server(n, 8550); !v.Met || v.Required != n {
		t.Errorf("Server(%d, 8550) = %+v, want met with %d required", n, v, n)
	}
	if v := f.Server(n-1, 8550); v.Met || v.MoreNeeded() != 1 {
		t.Errorf("Server(%d, 8550) = %+v, want 1 more needed", n-1, v)
	}
	in := make([]time.Duration, n)
	for i := range in {
		in[i] = time.Duration(i + 1)
	}
	l, _ := NewLatencies(in)
	want := PercentileEstimate{Met: true, Queries: n, MinQueries: 662, Discarded: 8549, Latency: n - 8550 + 1}
	if got := f.EstimatePercentile(l); got != want {
		t.Errorf("EstimatePercentile(n=%d) = %+v, want %+v", n, got, want)
	}
	// The loop's memo then serves a smaller run as a fresh finder would.
	l2, _ := NewLatencies(in[:2010])
	want2 := PercentileEstimate{Met: true, Queries: 2010, MinQueries: 662, Discarded: 9, Latency: 2001}
	if got := f.EstimatePercentile(l2); got != want2 {
		t.Errorf("EstimatePercentile(n=2010) after n=%d = %+v, want %+v", n, got, want2)
	}
}
