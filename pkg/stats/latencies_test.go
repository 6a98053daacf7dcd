package stats

import (
	"errors"
	"math"
	"slices"
	"testing"
	"time"
)

func seq(n int) []time.Duration {
	s := make([]time.Duration, n)
	for i := range s {
		s[i] = time.Duration(n - i) // descending on purpose: NewLatencies sorts
	}
	return s
}

func TestPercentileIndexesLikeLoadGen(t *testing.T) {
	tests := []struct {
		name string
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		// sorted[floor(n·p)] of 1..n is floor(n·p)+1.
		{"p90 of 1000", seq(1000), 0.90, 901},
		{"p99 of 1000", seq(1000), 0.99, 991},
		{"p999 of 1000", seq(1000), 0.999, 1000},
		{"p90 of 10", seq(10), 0.9, 10},
		{"p50 of 3", seq(3), 0.5, 2},
		{"p0 is min", seq(7), 0, 1},
		{"p1 clamps to max", seq(7), 1, 7},
		{"floor not round: 0.97*33=32.01", seq(33), 0.97, 33},
		{"floor: 0.9*9=8.1", seq(9), 0.9, 9},
		{"floor: 0.5*9=4.5", seq(9), 0.5, 5},
		{"single", []time.Duration{42}, 0.99, 42},
		{"failed in the tail", []time.Duration{1, 2, FailedLatency}, 0.9, FailedLatency},
		// 0.29*100 = 28.999999999999996 in float64: LoadGen's size_t() gives 28.
		{"float product truncates", seq(100), 0.29, 29},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := NewLatencies(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := l.Percentile(tc.p)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Percentile(%v) = %d, want %d", tc.p, got, tc.want)
			}
		})
	}
}

func TestPercentileErrors(t *testing.T) {
	var empty Latencies
	if _, err := empty.Percentile(0.5); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty: %v", err)
	}
	l, _ := NewLatencies(seq(10))
	for _, p := range []float64{-0.1, 1.01, math.NaN()} {
		if _, err := l.Percentile(p); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Percentile(%v) error = %v", p, err)
		}
	}
	if _, err := NewLatencies([]time.Duration{3, -1}); !errors.Is(err, ErrInvalidLatency) {
		t.Errorf("negative latency: %v", err)
	}
	if _, err := empty.Summary(); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty summary: %v", err)
	}
}

func TestSummary(t *testing.T) {
	tests := []struct {
		name string
		in   []time.Duration
		want Summary
	}{
		{"mean truncates", []time.Duration{1, 2, 2}, Summary{Count: 3, Min: 1, Max: 2, Mean: 1}},
		{"failed excluded from mean", []time.Duration{10, FailedLatency, 20}, Summary{Count: 3, Failed: 1, Min: 10, Max: FailedLatency, Mean: 15}},
		{"all failed", []time.Duration{FailedLatency}, Summary{Count: 1, Failed: 1, Min: FailedLatency, Max: FailedLatency, Mean: FailedLatency}},
		{"sum beyond int64", []time.Duration{math.MaxInt64 - 1, math.MaxInt64 - 3}, Summary{Count: 2, Min: math.MaxInt64 - 3, Max: math.MaxInt64 - 1, Mean: math.MaxInt64 - 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, _ := NewLatencies(tc.in)
			got, err := l.Summary()
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Summary = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestCountOver(t *testing.T) {
	l, _ := NewLatencies([]time.Duration{5, 10, 10, 11, FailedLatency})
	tests := []struct {
		bound time.Duration
		want  int
	}{{0, 5}, {5, 4}, {9, 4}, {10, 2}, {11, 1}, {1 << 62, 1}}
	for _, tc := range tests {
		if got := l.CountOver(tc.bound); got != tc.want {
			t.Errorf("CountOver(%d) = %d, want %d", tc.bound, got, tc.want)
		}
	}
	if l.Failed() != 1 || l.Len() != 5 {
		t.Errorf("Failed = %d, Len = %d", l.Failed(), l.Len())
	}
}

// Completed leaves out the failed samples and keeps the mean of the others.
func TestCompleted(t *testing.T) {
	l, err := NewLatencies([]time.Duration{30, FailedLatency, 10, 20, FailedLatency})
	if err != nil {
		t.Fatal(err)
	}
	c := l.Completed()
	if c.Len() != 3 || c.Failed() != 0 || !slices.Equal(all(t, c), []time.Duration{10, 20, 30}) {
		t.Errorf("Completed: %v, %d failed", all(t, c), c.Failed())
	}
	if s, err := c.Summary(); err != nil || s.Mean != 20 || s.Max != 30 {
		t.Errorf("Completed summary %+v, %v", s, err)
	}
	if p, _ := c.Percentile(1); p != 30 {
		t.Errorf("Completed max %v", p)
	}
	if e := (Latencies{}).Completed(); e.Len() != 0 {
		t.Errorf("empty Completed has %d", e.Len())
	}
}

// The answered percentiles of a record with failures (issue 26 #13) are
// Completed's: the same as the percentiles of the answered latencies
// alone, read from the record's sorted slice without a copy or a sort.
func TestCompletedIsTheAnsweredPercentiles(t *testing.T) {
	answered := []time.Duration{7, 3, 9, 1, 5, 8, 2, 6, 4, 10}
	all := append(slices.Clone(answered), FailedLatency, FailedLatency)
	l, err := NewLatencies(all)
	if err != nil {
		t.Fatal(err)
	}
	only, err := NewLatencies(answered)
	if err != nil {
		t.Fatal(err)
	}
	c := l.Completed()
	if &c.sorted[0] != &l.sorted[0] {
		t.Error("Completed copied the record")
	}
	for _, p := range []float64{0, 0.5, 0.9, 0.99, 1} {
		got, err1 := c.Percentile(p)
		want, err2 := only.Percentile(p)
		if err1 != nil || err2 != nil || got != want || got == FailedLatency {
			t.Errorf("p%v: answered %v (%v), want %v (%v)", p*100, got, err1, want, err2)
		}
	}
	if p99, _ := l.Percentile(0.99); p99 != FailedLatency {
		t.Errorf("LoadGen's p99 %v: want the failed sample's FailedLatency", p99)
	}
}

// all returns every latency of l in ascending order, by rank.
func all(t *testing.T, l Latencies) []time.Duration {
	t.Helper()
	ks := make([]int, l.Len())
	for i := range ks {
		ks[i] = i
	}
	vs, err := l.SelectEach(ks)
	if err != nil {
		t.Fatal(err)
	}
	return vs
}
