package stats

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
	"time"
)

// FailedLatency is the latency of a failed sample in sorted Latencies: above
// every real latency, so a failed sample is over every bound and lands in the
// tail of every percentile (MLPERF.md: a failed sample "counts as over the
// latency bound").
const FailedLatency = time.Duration(math.MaxInt64)

// Latencies is an immutable ascending multiset of latencies, the input to
// every exact statistic: LoadGen sorts its sample (or query) latencies once
// and indexes into them. A Latencies gives the same answers (LoadGen's)
// from either of two backings:
//
//   - a sorted slice (NewLatencies), for small sets such as a second's
//     latencies;
//   - a re-scannable source (LatenciesOf, LatencyRecord.Latencies), read
//     again for each selection in memory bounded independently of its
//     size: a run's record is never copied. See scan.go for the cost.
//
// A Latencies may be read from several goroutines at once.
type Latencies struct {
	sorted []time.Duration // the sorted backing
	src    *scanned        // the scanned backing, shared by views
	n      int
	failed int
	mean   time.Duration
}

// NewLatencies copies and sorts ds. An element equal to FailedLatency is a
// failed sample; a negative one is an error.
func NewLatencies(ds []time.Duration) (Latencies, error) {
	s := slices.Clone(ds)
	for i, d := range s {
		if d < 0 {
			return Latencies{}, fmt.Errorf("%w: latency[%d] = %d ns is negative", ErrInvalidLatency, i, d)
		}
	}
	return sortedLatencies(s), nil
}

// sortedLatencies takes ownership of s (non-negative, failed = FailedLatency).
func sortedLatencies(s []time.Duration) Latencies {
	sortDurations(s)
	failed := len(s) - sort.Search(len(s), func(i int) bool { return s[i] == FailedLatency })
	return Latencies{sorted: s, n: len(s), failed: failed, mean: meanOf(s[:len(s)-failed])}
}

// LatenciesOf returns the n latencies scan yields (in any order; an element
// equal to FailedLatency is a failed sample, a negative one an error)
// without holding them: scan is called once here and again for selections
// and counts the histogram cannot answer, and must yield the same values
// each time. It errs if scan yields other than n values.
func LatenciesOf(n int, scan func(yield func(time.Duration) bool)) (Latencies, error) {
	if n < 0 {
		return Latencies{}, fmt.Errorf("%w: latency count %d", ErrInvalidArgument, n)
	}
	blocks := func(yield func([]time.Duration) bool) {
		buf := make([]time.Duration, 0, blockLen)
		for d := range scan {
			if buf = append(buf, d); len(buf) == blockLen {
				if !yield(buf) {
					return
				}
				buf = buf[:0]
			}
		}
		if len(buf) > 0 {
			yield(buf)
		}
	}
	l, err := scannedLatencies(blocks, defaultLimits())
	if err == nil && l.n != n {
		return Latencies{}, fmt.Errorf("%w: the scan yielded %d latencies, n = %d", ErrInvalidArgument, l.n, n)
	}
	return l, err
}

// scannedLatencies builds the scanned backing over blocks.
func scannedLatencies(blocks blockScan, lim selectLimits) (Latencies, error) {
	src, err := newScanned(blocks, lim)
	if err != nil {
		return Latencies{}, err
	}
	return Latencies{src: src, n: src.completed + src.failed, failed: src.failed, mean: src.mean}, nil
}

// meanOf returns LoadGen's mean: the integer sum divided by the count,
// truncated (results.cc: accumulated_sample_latency / sample_count). The sum
// is kept in 128 bits so hour-long latencies cannot overflow it.
func meanOf(s []time.Duration) time.Duration {
	if len(s) == 0 {
		return FailedLatency
	}
	var hi, lo uint64
	for _, d := range s {
		var c uint64
		lo, c = bits.Add64(lo, uint64(d), 0)
		hi += c
	}
	// Every element is < 2^63, so the quotient is too and hi < len(s).
	quo, _ := bits.Div64(hi, lo, uint64(len(s)))
	return time.Duration(quo)
}

// Len returns the number of latencies, failed ones included.
func (l Latencies) Len() int { return l.n }

// Failed returns the number of failed samples (the top Failed() entries).
func (l Latencies) Failed() int { return l.failed }

// Completed returns the latencies without the failed samples, sharing
// their memory and caches (Latencies are immutable): what a latency
// spectrum of the samples that answered shows.
func (l Latencies) Completed() Latencies {
	c := Latencies{src: l.src, n: l.n - l.failed, mean: l.mean}
	if l.src == nil {
		c.sorted = l.sorted[:c.n]
	}
	return c
}

// Select returns the latency of rank k (0-based, ascending): the k-th
// smallest, FailedLatency for a failed sample's rank.
func (l Latencies) Select(k int) (time.Duration, error) {
	vs, err := l.SelectEach([]int{k})
	if err != nil {
		return 0, err
	}
	return vs[0], nil
}

// SelectEach returns the latencies of ranks ks, as Select would one by
// one; over a scanned source it selects them together, in one or a few
// scans for all.
func (l Latencies) SelectEach(ks []int) ([]time.Duration, error) {
	out := make([]time.Duration, len(ks))
	var want []int // completed ranks of the scanned backing
	for i, k := range ks {
		switch {
		case k < 0 || k >= l.n:
			return nil, fmt.Errorf("%w: rank %d of %d latencies", ErrOutOfRange, k, l.n)
		case l.src == nil:
			out[i] = l.sorted[k]
		case k >= l.n-l.failed:
			out[i] = FailedLatency
		default:
			want = append(want, k)
		}
	}
	if len(want) == 0 {
		return out, nil
	}
	vs, err := l.src.selectRanks(want)
	if err != nil {
		return nil, err
	}
	j := 0
	for i, k := range ks {
		if k < l.n-l.failed {
			out[i], j = vs[j], j+1
		}
	}
	return out, nil
}

// Percentile returns LoadGen's percentile: sorted[size_t(n × p)] (results.cc,
// ProcessLatencies), the product computed in float64 and truncated. p = 1 (or
// a product that rounds to n) gives the maximum rather than an index past the
// end. The result is FailedLatency when that rank is a failed sample.
func (l Latencies) Percentile(p float64) (time.Duration, error) {
	vs, err := l.Percentiles([]float64{p})
	if err != nil {
		return 0, err
	}
	return vs[0], nil
}

// Percentiles returns Percentile of each of ps, selected together: a caller
// that wants several asks for them at once.
func (l Latencies) Percentiles(ps []float64) ([]time.Duration, error) {
	if l.n == 0 {
		return nil, ErrEmpty
	}
	ks := make([]int, len(ps))
	for i, p := range ps {
		k, err := percentileIndex(l.n, p)
		if err != nil {
			return nil, err
		}
		ks[i] = k
	}
	return l.SelectEach(ks)
}

// percentileIndex returns min(floor(n × p), n−1) for n ≥ 1.
func percentileIndex(n int, p float64) (int, error) {
	if !(p >= 0 && p <= 1) {
		return 0, fmt.Errorf("%w: percentile %v not in [0, 1]", ErrInvalidArgument, p)
	}
	return min(int(float64(n)*p), n-1), nil
}

// CountOver returns how many latencies are strictly greater than bound, failed
// samples included: LoadGen's overlatency count (latency > target_latency).
func (l Latencies) CountOver(bound time.Duration) int { return l.n - l.CountAtMost(bound) }

// CountAtMost returns how many latencies are at most d (the rank just past
// the last value ≤ d); failed samples count only for d = FailedLatency.
func (l Latencies) CountAtMost(d time.Duration) int { return l.CountsAtMost([]time.Duration{d})[0] }

// CountsAtMost returns CountAtMost of each of ds, counted together: over a
// scanned source, in at most one scan for all.
func (l Latencies) CountsAtMost(ds []time.Duration) []int {
	var out []int
	if l.src == nil {
		out = make([]int, len(ds))
		for i, d := range ds {
			out[i] = sort.Search(l.n, func(j int) bool { return l.sorted[j] > d })
		}
		return out
	}
	out = l.src.countsAtMost(ds)
	for i, d := range ds {
		if d == FailedLatency {
			out[i] += l.failed
		}
	}
	return out
}

// Summary is the min/max/mean block of LoadGen's summary.
type Summary struct {
	Count  int           // latencies, failed ones included
	Failed int           // failed samples
	Min    time.Duration // smallest latency (FailedLatency if all failed)
	Max    time.Duration // largest latency (FailedLatency if any failed)
	// Mean of the completed samples, truncated to the nanosecond like
	// LoadGen's integer mean; FailedLatency if none completed.
	Mean time.Duration
}

// Summary returns count, min, max and mean; ErrEmpty for no latencies.
func (l Latencies) Summary() (Summary, error) {
	if l.n == 0 {
		return Summary{}, ErrEmpty
	}
	sum := Summary{Count: l.n, Failed: l.failed, Mean: l.mean}
	switch {
	case l.src == nil:
		sum.Min, sum.Max = l.sorted[0], l.sorted[l.n-1]
	case l.failed == l.n:
		sum.Min, sum.Max = FailedLatency, FailedLatency
	case l.failed > 0:
		sum.Min, sum.Max = l.src.min, FailedLatency
	default:
		sum.Min, sum.Max = l.src.min, l.src.max
	}
	return sum, nil
}
