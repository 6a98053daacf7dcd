package stats

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"
)

func TestMaxOverForPercentile(t *testing.T) {
	tests := []struct {
		n    int64
		p    float64
		want int64
	}{
		{1000, 0.99, 9},  // rank 990: 991 must be ≤ bound
		{1000, 0.90, 99}, // rank 900
		{270336, 0.99, 2703},
		{1, 0.99, 0},
		{10, 1, 0},
		{10, 0, 9},
		{100, 0.29, 71}, // 100·0.29 = 28.999…: rank 28
	}
	for _, tc := range tests {
		got, err := MaxOverForPercentile(tc.n, tc.p)
		if err != nil || got != tc.want {
			t.Errorf("MaxOverForPercentile(%d, %v) = %d, %v; want %d", tc.n, tc.p, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		n int64
		p float64
	}{{0, 0.9}, {10, 1.5}, {10, -1}} {
		if _, err := MaxOverForPercentile(tc.n, tc.p); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("MaxOverForPercentile(%d, %v) error = %v", tc.n, tc.p, err)
		}
	}
}

// The allowance must agree with the percentile itself on random data.
func TestMaxOverForPercentileAgreesWithPercentile(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		n := 1 + rng.IntN(300)
		p := []float64{0.5, 0.9, 0.97, 0.99, 0.999}[rng.IntN(5)]
		bound := time.Duration(rng.IntN(100))
		in := make([]time.Duration, n)
		for i := range in {
			in[i] = time.Duration(rng.IntN(110))
		}
		l, _ := NewLatencies(in)
		pct, _ := l.Percentile(p)
		allowed, _ := MaxOverForPercentile(int64(n), p)
		if (pct <= bound) != (int64(l.CountOver(bound)) <= allowed) {
			t.Fatalf("n=%d p=%v bound=%d: percentile %d, over %d, allowed %d", n, p, bound, pct, l.CountOver(bound), allowed)
		}
	}
}

func TestDecide(t *testing.T) {
	tests := []struct {
		allowed, total, done, over int64
		want                       Verdict
	}{
		{9, 1000, 10, 10, Fail},
		{9, 1000, 10, 9, Undecided},
		{9, 1000, 995, 4, Pass},
		{9, 1000, 995, 5, Undecided},
		{9, 1000, 1000, 9, Pass},
		{-1, 40, 0, 0, Fail}, // MaxOverLatency −1: too few queries to ever pass
	}
	for _, tc := range tests {
		if got := Decide(tc.allowed, tc.total, tc.done, tc.over); got != tc.want {
			t.Errorf("Decide(%d, %d, %d, %d) = %v, want %v", tc.allowed, tc.total, tc.done, tc.over, got, tc.want)
		}
	}
}
