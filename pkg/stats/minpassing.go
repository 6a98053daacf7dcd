package stats

import (
	"fmt"
	"math"
)

// EarlyStoppingConfidence is the confidence LoadGen 6.0 uses for every early
// stopping decision (results.cc: confidence = 0.99, tolerance = 0).
const EarlyStoppingConfidence = 0.99

// MinPassingFinder computes LoadGen's h(t) for one percentile and confidence:
// the smallest number h of queries under the latency bound such that, with t
// queries over it, BetaRegularized(p; h, 1+t) < 1 − confidence. That
// probability is P[at most t of h+t queries are over latency] if the true
// pass rate were exactly p, so passing h(t) means the p-th percentile is
// within the bound with the given confidence.
//
// The results are memoized, as LoadGen's MinPassingQueriesFinder does; a
// finder is therefore not safe for concurrent use. LoadGen's tolerance d is
// always 0 and is not modelled.
type MinPassingFinder struct {
	p, q      float64
	threshold float64 // 1 − confidence
	cache     map[int64]int64
}

// NewMinPassingFinder returns a finder for percentile p and confidence c, both
// in (0, 1).
func NewMinPassingFinder(p, confidence float64) (*MinPassingFinder, error) {
	if !(p > 0 && p < 1) {
		return nil, fmt.Errorf("%w: percentile %v not in (0, 1)", ErrInvalidArgument, p)
	}
	if !(confidence > 0 && confidence < 1) {
		return nil, fmt.Errorf("%w: confidence %v not in (0, 1)", ErrInvalidArgument, confidence)
	}
	return &MinPassingFinder{
		p:         p,
		q:         1 - p,
		threshold: 1 - confidence,
		cache:     make(map[int64]int64),
	}, nil
}

// Percentile returns the finder's percentile p.
func (f *MinPassingFinder) Percentile() float64 { return f.p }

// passes reports whether h under-latency queries suffice for t over-latency
// ones: LoadGen's odds(h, t, p, 0) < 1 − c.
func (f *MinPassingFinder) passes(h, t int64) bool {
	return binomialCDF(t, h+t, f.q, f.p) < f.threshold
}

// MinPassing returns h(t) for t ≥ 0 over-latency queries (h(t) for t < 0 is
// h(0)). For p = 0.90, c = 0.99: h(0) = 44, h(1) = 63, h(100) = 1146.
//
// The search brackets the answer from the mean t·p/(1−p) (where the odds are
// about ½, so failing) by doubling, then bisects: it finds the true smallest
// h wherever it lies, which is what LoadGen's interpolated bounds also find.
func (f *MinPassingFinder) MinPassing(t int64) int64 {
	t = max(t, 0)
	if h, ok := f.cache[t]; ok {
		return h
	}
	// lo always fails (or is 0, which is no query at all); hi always passes.
	lo := int64(math.Floor(float64(t) * f.p / f.q))
	if lo < 1 || f.passes(lo, t) {
		lo = 0
	}
	step := max(int64(math.Sqrt(float64(t)*f.p)/f.q), 8)
	hi := lo + step
	for !f.passes(hi, t) {
		lo = hi
		step *= 2
		hi = lo + step
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if f.passes(mid, t) {
			hi = mid
		} else {
			lo = mid
		}
	}
	f.cache[t] = hi
	return hi
}

// MaxOverLatency returns the largest t ≥ 0 with h(t) + t ≤ n: how many of n
// queries may be over the latency bound and the run still pass early
// stopping. It returns −1 when even t = 0 fails (n < h(0)).
//
// h(t)+t strictly increases with t, so this is also the t LoadGen's
// SingleStream/MultiStream loop stops at (the last i with n ≥ h(i)+i).
func (f *MinPassingFinder) MaxOverLatency(n int64) int64 {
	if n < f.MinPassing(0) {
		return -1
	}
	// Invariant: h(lo)+lo ≤ n < h(hi)+hi. h(t) ≥ t·p/q, so t beyond n·q fails.
	lo, hi := int64(0), int64(float64(n)*f.q)+2
	for f.MinPassing(hi)+hi <= n { // guard against rounding in the bound
		lo, hi = hi, 2*hi
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if f.MinPassing(mid)+mid <= n {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}
