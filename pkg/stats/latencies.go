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

// Latencies is an immutable ascending set of latencies, the input to every
// exact statistic: LoadGen sorts its sample (or query) latencies once and
// indexes into them. Build it with NewLatencies or LatencyRecord.Latencies.
type Latencies struct {
	sorted []time.Duration
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
	return Latencies{sorted: s, failed: failed, mean: meanOf(s[:len(s)-failed])}
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
func (l Latencies) Len() int { return len(l.sorted) }

// Failed returns the number of failed samples (the top Failed() entries).
func (l Latencies) Failed() int { return l.failed }

// Completed returns the latencies without the failed samples, sharing
// their memory (Latencies are immutable): what a latency spectrum of the
// samples that answered shows.
func (l Latencies) Completed() Latencies {
	return Latencies{sorted: l.sorted[:len(l.sorted)-l.failed], mean: l.mean}
}

// Sorted returns the ascending latencies; the slice is shared, do not modify it.
func (l Latencies) Sorted() []time.Duration { return l.sorted }

// Percentile returns LoadGen's percentile: sorted[size_t(n × p)] (results.cc,
// ProcessLatencies), the product computed in float64 and truncated. p = 1 (or
// a product that rounds to n) gives the maximum rather than an index past the
// end. The result is FailedLatency when that rank is a failed sample.
func (l Latencies) Percentile(p float64) (time.Duration, error) {
	if len(l.sorted) == 0 {
		return 0, ErrEmpty
	}
	i, err := percentileIndex(len(l.sorted), p)
	if err != nil {
		return 0, err
	}
	return l.sorted[i], nil
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
func (l Latencies) CountOver(bound time.Duration) int {
	return len(l.sorted) - sort.Search(len(l.sorted), func(i int) bool { return l.sorted[i] > bound })
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
	if len(l.sorted) == 0 {
		return Summary{}, ErrEmpty
	}
	return Summary{
		Count:  len(l.sorted),
		Failed: l.failed,
		Min:    l.sorted[0],
		Max:    l.sorted[len(l.sorted)-1],
		Mean:   l.mean,
	}, nil
}
