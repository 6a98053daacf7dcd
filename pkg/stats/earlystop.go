package stats

import (
	"time"
)

// PercentileEstimate is LoadGen's early-stopping estimate of a latency
// percentile for SingleStream (sample latencies) and MultiStream (query
// latencies) (results.cc EarlyStopping; LOADGEN-REFERENCE.md §5).
type PercentileEstimate struct {
	// Met is false when fewer than MinQueries queries were processed; the
	// other fields but Queries and MinQueries are then zero.
	Met bool
	// Queries is n, the number of latencies.
	Queries int64
	// MinQueries is h(1)+1: 64 for p = 0.90, 662 for p = 0.99.
	MinQueries int64
	// Discarded is t−1, the "Would discard N highest latency queries".
	Discarded int64
	// Latency is sorted[n − t]: early_stopping_latency_ss / _ms.
	Latency time.Duration
}

// EstimatePercentile returns the early-stopping estimate of f's percentile
// over l. With t the largest count such that n ≥ h(t)+t, the estimate is
// the t-th highest latency: whatever the true distribution, the percentile
// is at most this value with the finder's confidence.
//
// h is the one LoadGen's loop computes with its memo (loopMinPassing), and
// t is found as results.cc finds it: t = 1, then i = 2, 3, … up to the first
// n < h(i)+i, t = i−1. That is one search per i, each a few odds wide; f
// keeps the loop's h, so a later call on f for a larger n continues it.
func (f *MinPassingFinder) EstimatePercentile(l Latencies) PercentileEstimate {
	return f.EstimateSelect(int64(l.Len()), func(k int64) time.Duration {
		v, err := l.Select(int(k))
		if err != nil {
			// Only a source that changed between scans; the estimate
			// then claims nothing below every bound.
			return FailedLatency
		}
		return v
	})
}

// EstimateSelect is EstimatePercentile over n ascending values that need
// not be latencies, read by rank: at(k) is the k-th smallest (0-based),
// called at most once. LoadGen runs the same estimate over its per-sample
// token arrays, whose time per output token is negative for a sample of
// fewer than two tokens (results.cc EarlyStopping with
// use_token_latencies).
func (f *MinPassingFinder) EstimateSelect(n int64, at func(k int64) time.Duration) PercentileEstimate {
	est, k := f.estimate(n)
	if est.Met {
		est.Latency = at(k)
	}
	return est
}

// estimate is the estimate of n values but its value, and the index of
// the value in ascending order (n − t).
func (f *MinPassingFinder) estimate(n int64) (PercentileEstimate, int64) {
	est := PercentileEstimate{Queries: n, MinQueries: f.MinQueries()}
	if n < est.MinQueries {
		return est, 0
	}
	t := int64(1)
	for i := int64(2); i <= n; i++ {
		if n < f.loopMinPassing(i)+i {
			t = i - 1
			break
		}
	}
	est.Met = true
	est.Discarded = t - 1
	return est, n - t
}

// ServerEarlyStopping is LoadGen's Server early-stopping verdict.
type ServerEarlyStopping struct {
	Met bool
	// Queries is the number of queries issued.
	Queries int64
	// OverLatency is t, the queries over the latency bound (failed included).
	OverLatency int64
	// Required is h(t)+t, the queries the run needed for its t.
	Required int64
}

// MoreNeeded returns how many more queries, all under the bound, the run
// would have needed ("Would need to run at least N more queries").
func (s ServerEarlyStopping) MoreNeeded() int64 { return max(s.Required-s.Queries, 0) }

// Server returns the Server verdict: pass iff queries ≥ h(t)+t with t the
// over-latency count.
func (f *MinPassingFinder) Server(queries, overLatency int64) ServerEarlyStopping {
	req := f.MinPassing(overLatency) + max(overLatency, 0)
	return ServerEarlyStopping{
		Met:         queries >= req,
		Queries:     queries,
		OverLatency: overLatency,
		Required:    req,
	}
}
