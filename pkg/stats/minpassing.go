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
// The odds are evaluated as LoadGen 6.0.17's early_stopping.cc evaluates them
// (odds.go) and h is searched for in LoadGen's bracket with LoadGen's binary
// search (search), so the answers are LoadGen's, including the isolated t
// where its rounding gives one less or one more than an exact computation.
//
// MinPassing(t) is what a fresh LoadGen MinPassingQueriesFinder returns for t
// (LoadGen's Server use). EstimatePercentile runs LoadGen's SingleStream /
// MultiStream loop, in which the finder's memo seeds each search from the
// previous two answers; see loopMinPassing. Both are memoized, so a finder is
// not safe for concurrent use. LoadGen's tolerance d is always 0 and is not
// modelled.
type MinPassingFinder struct {
	p         float64
	threshold float64 // 1 − confidence
	minSlope  float64 // p/(1−p): h(t) grows at least this fast
	h0        int64   // ceil(ln(1−c)/ln p): LoadGen's seed for h(0)
	fresh     map[int64]int64
	seq       []int64 // seq[i−1] = h(i) in LoadGen's loop (loopMinPassing)
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
	threshold := 1 - confidence
	return &MinPassingFinder{
		p:         p,
		threshold: threshold,
		minSlope:  p / (1 - p),
		h0:        int64(math.Ceil(math.Log(threshold) / math.Log(p))),
		fresh:     make(map[int64]int64),
	}, nil
}

// Percentile returns the finder's percentile p.
func (f *MinPassingFinder) Percentile() float64 { return f.p }

// MinQueries is the fewest latencies an early-stopping estimate of the
// percentile is made from (PercentileEstimate.MinQueries): 64 for p = 0.90,
// 662 for p = 0.99.
func (f *MinPassingFinder) MinQueries() int64 { return f.loopMinPassing(1) + 1 }

// MinPassing returns h(t) for t ≥ 0 over-latency queries (h(t) for t < 0 is
// h(0)), as a fresh LoadGen finder returns it. For p = 0.90, c = 0.99:
// h(0) = 44, h(1) = 63, h(100) = 1146.
func (f *MinPassingFinder) MinPassing(t int64) int64 {
	t = max(t, 0)
	if h, ok := f.fresh[t]; ok {
		return h
	}
	// An empty LoadGen memo seeds the search with the points (−1, 0) and
	// (0, h0), whatever t is.
	h := f.search(t, -1, 0, 0, f.h0)
	f.fresh[t] = h
	return h
}

// search is one MinPassingQueriesFinder call for t, given the two memoized
// points (x0, y0), (x1, y1) nearest below t (early_stopping.cc).
//
// LoadGen brackets h(t) between two lines through (x1, y1): from below with
// slope p/(1−p), from above with slope (y1−y0)·(x1−x0). The C++ multiplies
// where the secant's slope would divide; the product is kept because it
// decides which h the binary search visits. The bounds are computed in
// float64 and truncated to integers, as the C++ does.
func (f *MinPassingFinder) search(t, x0, y0, x1, y1 int64) int64 {
	maxSlope := float64((y1 - y0) * (x1 - x0))
	lo := truncInt64(float64(float64(t-x1)*f.minSlope) + float64(y1))
	hi := truncInt64(float64(float64(t-x1)*maxSlope) + float64(y1) + 1)
	return f.lowerBound(lo, hi, t)
}

// lowerBound is LoadGen's find_min_passing: a std::lower_bound-style binary
// search of [lo, hi) for the first h whose odds are below 1 − c, returning hi
// when none in the range is (and lo when the range is empty). It assumes the
// odds fall with h; where LoadGen's rounding makes them not quite monotone,
// the h visited decide the answer, so the midpoints are LoadGen's too.
func (f *MinPassingFinder) lowerBound(lo, hi, t int64) int64 {
	for count := hi - lo; count > 0; {
		step := count / 2
		h := lo + step
		if loadgenOdds(h, t, f.p) < f.threshold {
			count = step
		} else {
			lo = h + 1
			count -= step + 1
		}
	}
	return lo
}

// truncInt64 converts like C++'s double-to-int64_t conversion, truncating
// toward zero. Where C++ would overflow (undefined behaviour, and only for t
// far beyond any run) it saturates instead.
func truncInt64(v float64) int64 {
	const limit = 1 << 62
	switch {
	case v >= limit:
		return limit
	case v <= -limit:
		return -limit
	}
	return int64(v)
}

// loopMinPassing returns h(i), i ≥ 1, as LoadGen's SingleStream/MultiStream
// loop sees it, extending f's memo of that loop up to i as needed.
//
// The loop calls one finder for t = 1, 2, 3, …, so each call after the first
// finds its predecessors memoized and searches the bracket they give:
// (x0, y0) = (i−2, h(i−2)) and (x1, y1) = (i−1, h(i−1)); for i = 2 there is
// one predecessor and (x0, y0) stays (−1, 0). The answer is then sought in
// [h(i−1) + ⌊p/(1−p)⌋, 2·h(i−1) − h(i−2) + 1], a few h wide at large t,
// instead of a fresh call's [t·p/(1−p) + h0, (t+1)·h0 + 1].
//
// Both uses find the same h(i) unless the fresh answer lies outside the
// narrow range, which would take h's increment to grow by two or more from
// one t to the next, or to fall below ⌊p/(1−p)⌋ (LoadGen's ±1 rounding could
// cause either); the loop's h(i) would then be the range's end or start. It
// does not happen for any t up to 10^5 (p = 0.9), 5·10^4 (p = 0.8, 0.99),
// 2·10^4 (p = 0.5, 0.95, 0.97, 0.999) or 2·10^3 (p = 0.9999), but it can, so
// the loop's range is reproduced rather than assumed away.
func (f *MinPassingFinder) loopMinPassing(i int64) int64 {
	if len(f.seq) == 0 {
		// The loop's first call is t = 1 on an empty memo.
		f.seq = append(f.seq, f.MinPassing(1))
	}
	for j := int64(len(f.seq)) + 1; j <= i; j++ {
		x0, y0 := int64(-1), int64(0)
		if j >= 3 {
			x0, y0 = j-2, f.seq[j-3]
		}
		f.seq = append(f.seq, f.search(j, x0, y0, j-1, f.seq[j-2]))
	}
	return f.seq[i-1]
}

// MaxOverLatency returns the largest t ≥ 0 with h(t) + t ≤ n, h being a fresh
// finder's (MinPassing): how many of n queries may be over the latency bound
// and a Server run still pass early stopping. It returns −1 when even t = 0
// fails (n < h(0)).
//
// It relies on h(t)+t strictly increasing with t. LoadGen's h keeps that:
// the exact increment of h(t)+t is at least 1 + ⌊p/(1−p)⌋ (2 for p ≥ 0.5),
// and LoadGen's ±1 departures from the exact h are isolated (none for
// t ≤ 20,000 at p ≤ 0.97, one for t ≤ 50,000 at p = 0.99, 14 for t ≤ 20,000
// at p = 0.999), so no two adjacent t move toward each other.
// LoadGen's SingleStream/MultiStream loop uses the memoized h instead; see
// EstimatePercentile.
func (f *MinPassingFinder) MaxOverLatency(n int64) int64 {
	if n < f.MinPassing(0) {
		return -1
	}
	// Invariant: h(lo)+lo ≤ n < h(hi)+hi. h(t) ≥ t·p/q, so t beyond n·q fails.
	lo, hi := int64(0), int64(float64(n)*(1-f.p))+2
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
