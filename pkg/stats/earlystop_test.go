package stats

import (
	"testing"
	"time"
)

// loadgenLoopT restates LoadGen's SingleStream/MultiStream rank loop
// literally (results.cc), to check MaxOverLatency's shortcut.
func loadgenLoopT(f *MinPassingFinder, n int64) int64 {
	t := int64(1)
	for i := int64(2); i < n+1; i++ {
		if n < f.MinPassing(i)+i {
			t = i - 1
			break
		}
	}
	return t
}

func TestEstimatePercentileMatchesLoadGenLoop(t *testing.T) {
	for _, p := range []float64{0.9, 0.99} {
		f, _ := NewMinPassingFinder(p, EarlyStoppingConfidence)
		for _, n := range []int64{64, 65, 100, 662, 1000, 1024, 5000, 9331, 24576} {
			if n < f.MinPassing(1)+1 {
				continue
			}
			if got, want := f.MaxOverLatency(n), loadgenLoopT(f, n); got != want {
				t.Errorf("p=%v n=%d: t = %d, LoadGen loop gives %d", p, n, got, want)
			}
		}
	}
}

func TestEstimatePercentile(t *testing.T) {
	f90, _ := NewMinPassingFinder(0.9, EarlyStoppingConfidence)
	f99, _ := NewMinPassingFinder(0.99, EarlyStoppingConfidence)
	// Latencies 1..n ns: sorted[n−t] = n−t+1.
	tests := []struct {
		name string
		f    *MinPassingFinder
		n    int
		want PercentileEstimate
	}{
		// h(1)+1 = 64: 63 queries are not enough.
		{"p90 too few", f90, 63, PercentileEstimate{Queries: 63, MinQueries: 64}},
		// n = 64: t = 1 (h(2)+2 = 81 > 64), estimate is the maximum.
		{"p90 at minimum", f90, 64, PercentileEstimate{Met: true, Queries: 64, MinQueries: 64, Latency: 64}},
		// n = 81 = h(2)+2: t = 2, discard 1, estimate sorted[79] = 80.
		{"p90 t=2", f90, 81, PercentileEstimate{Met: true, Queries: 81, MinQueries: 64, Discarded: 1, Latency: 80}},
		// n = 197 = h(10)+10 (h(11) ≥ h(10)+1 so t = 10): sorted[187] = 188.
		{"p90 t=10", f90, 197, PercentileEstimate{Met: true, Queries: 197, MinQueries: 64, Discarded: 9, Latency: 188}},
		// MultiStream p99: h(1)+1 = 662, the mlperf.conf min_query_count.
		{"p99 too few", f99, 661, PercentileEstimate{Queries: 661, MinQueries: 662}},
		{"p99 at minimum", f99, 662, PercentileEstimate{Met: true, Queries: 662, MinQueries: 662, Latency: 662}},
		// n = 2010 = h(10)+10: t = 10, sorted[2000] = 2001.
		{"p99 t=10", f99, 2010, PercentileEstimate{Met: true, Queries: 2010, MinQueries: 662, Discarded: 9, Latency: 2001}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := make([]time.Duration, tc.n)
			for i := range in {
				in[i] = time.Duration(i + 1)
			}
			l, _ := NewLatencies(in)
			if got := tc.f.EstimatePercentile(l); got != tc.want {
				t.Errorf("EstimatePercentile = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestEstimatePercentileSingleStreamSummaryExample(t *testing.T) {
	// LOADGEN-REFERENCE.md §6.1: a SingleStream run of 9331 queries at p90
	// "Would discard 864 highest latency queries".
	f, _ := NewMinPassingFinder(0.9, EarlyStoppingConfidence)
	if got := f.MaxOverLatency(9331) - 1; got != 864 {
		t.Errorf("discarded for n=9331 = %d, want 864", got)
	}
}

func TestServerEarlyStopping(t *testing.T) {
	f, _ := NewMinPassingFinder(0.99, EarlyStoppingConfidence)
	tests := []struct {
		queries, over int64
		want          ServerEarlyStopping
		more          int64
	}{
		{459, 0, ServerEarlyStopping{Met: true, Queries: 459, Required: 459}, 0},
		{458, 0, ServerEarlyStopping{Met: false, Queries: 458, Required: 459}, 1},
		{1010, 10, ServerEarlyStopping{Met: false, Queries: 1010, OverLatency: 10, Required: 2010}, 1000},
		{2010, 10, ServerEarlyStopping{Met: true, Queries: 2010, OverLatency: 10, Required: 2010}, 0},
		{12571, 100, ServerEarlyStopping{Met: true, Queries: 12571, OverLatency: 100, Required: 12571}, 0},
	}
	for _, tc := range tests {
		got := f.Server(tc.queries, tc.over)
		if got != tc.want || got.MoreNeeded() != tc.more {
			t.Errorf("Server(%d, %d) = %+v (more %d), want %+v (more %d)", tc.queries, tc.over, got, got.MoreNeeded(), tc.want, tc.more)
		}
	}
}
