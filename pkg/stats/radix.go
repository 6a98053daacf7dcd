package stats

import (
	"slices"
	"time"
)

// Radix sort of latencies: a run's results sort every sample latency, every
// issue lateness and, when queries carry several samples, every query
// latency, and the run log sorts the samples again. At 20,000 QPS for 10 s those comparison sorts took 3.6% of the
// whole process's CPU (perf, issue 8); a least-significant-digit radix sort
// over 11-bit digits does the same work in a few linear passes, and skips
// the passes whose digit is the same in every element (nanosecond latencies
// under 2^33 ns need 3 of the 6).
const (
	radixBits    = 11
	radixBuckets = 1 << radixBits
	radixPasses  = (63 + radixBits - 1) / radixBits // non-negative int64: 63 bits
	// Below this a comparison sort is as fast and needs no scratch space.
	radixMin = 512
)

// sortDurations sorts s ascending; every element must be non-negative.
func sortDurations(s []time.Duration) {
	if len(s) < radixMin {
		slices.Sort(s)
		return
	}
	var counts [radixPasses][radixBuckets]int
	for _, v := range s {
		u := uint64(v)
		for p := range radixPasses {
			counts[p][(u>>(p*radixBits))&(radixBuckets-1)]++
		}
	}
	src, dst := s, make([]time.Duration, len(s))
	for p := range radixPasses {
		c := &counts[p]
		if c[(uint64(src[0])>>(p*radixBits))&(radixBuckets-1)] == len(s) {
			continue // every element has this digit: the pass would not move any
		}
		sum := 0
		for i, n := range c {
			c[i] = sum
			sum += n
		}
		shift := p * radixBits
		for _, v := range src {
			d := (uint64(v) >> shift) & (radixBuckets - 1)
			dst[c[d]] = v
			c[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &s[0] {
		copy(s, src)
	}
}
