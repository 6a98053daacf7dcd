package stats

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
	"sync"
	"time"
)

// The scanned backing of Latencies: exact order statistics over latencies
// that can be read again but are not held sorted. A run's record is 8 bytes
// a sample, the one thing a run must keep (issue 28); a sorted copy would
// double it at the end of the run, and its sort scratch more. Instead one
// scan builds a coarse histogram (below), a rank is located in its bucket,
// and the bucket is narrowed by counting scans until its values are few
// enough to collect and sort, or are all one value. Memory is bounded by
// selectLimits whatever the number of latencies.

// Coarse buckets: values below 2^subBits have a bucket each; above, each
// power of two is split into 2^subBits buckets of equal width, so a bucket
// is under 0.8% of its values wide (HdrHistogram's layout at ~2 digits).
const (
	subBits    = 7
	subCount   = 1 << subBits
	numBuckets = (64 - subBits) << subBits // bucketOf(math.MaxInt64) + 1
	// blockLen is how many latencies a scan hands over at once: one call
	// per block, not per value, keeps a scan near memory speed.
	blockLen = 1024
)

// bucketOf returns the coarse bucket of a non-negative value.
func bucketOf(v time.Duration) int {
	u := uint64(v)
	if u < subCount {
		return int(u)
	}
	shift := bits.Len64(u) - 1 - subBits
	return (shift+1)<<subBits + int(u>>shift) - subCount
}

// bucketLo returns the smallest value of bucket b.
func bucketLo(b int) time.Duration {
	if b < subCount {
		return time.Duration(b)
	}
	shift := b>>subBits - 1
	return time.Duration(uint64(b&(subCount-1)+subCount) << shift)
}

// bucketHi returns the largest value of bucket b.
func bucketHi(b int) time.Duration {
	if b == numBuckets-1 {
		return math.MaxInt64
	}
	return bucketLo(b+1) - 1
}

// selectLimits bound a selection's memory: values collected in one scan
// (8 bytes each), the counters of one refining histogram (8 bytes each)
// and how many such histograms one scan fills.
type selectLimits struct {
	collect, refine, ranges int
}

// defaultLimits: at most 2 MiB of collected values and 2 MiB of counters a
// scan. With 128 buckets an octave, a bucket of a 12M-sample run holds a
// few 10^5 values at most unless the latencies are unusually narrow, so one
// scan after the histogram's usually collects them.
func defaultLimits() selectLimits {
	return selectLimits{collect: 1 << 18, refine: 1 << 12, ranges: 64}
}

// errSourceChanged: a re-scannable source yielded other values on a later
// scan (a record written to after Latencies, or a non-deterministic scan).
var errSourceChanged = errors.New("stats: latencies changed between scans")

// blockScan yields the latencies in blocks (non-negative, a failed sample as
// FailedLatency); a block is only valid during its yield.
type blockScan func(yield func([]time.Duration) bool)

// scanned is the state shared by the views (Latencies values) of one source.
type scanned struct {
	blocks blockScan
	lim    selectLimits
	// cum[b] is the number of completed values in buckets below b.
	cum               []int
	completed, failed int
	min, max          time.Duration // of the completed values
	mean              time.Duration
	// sum is the wrapping sum of every value yielded, failed ones
	// included: a later scan that sums otherwise saw other values.
	sum uint64

	mu     sync.Mutex            // guards the caches: views may be read concurrently
	rank   map[int]time.Duration // completed value at each rank selected so far
	atMost map[time.Duration]int // completed values ≤ d, for each d known
}

// newScanned builds the coarse histogram, counts and LoadGen's mean in one
// scan.
func newScanned(blocks blockScan, lim selectLimits) (*scanned, error) {
	s := &scanned{blocks: blocks, lim: lim, cum: make([]int, numBuckets+1), min: FailedLatency,
		rank: make(map[int]time.Duration), atMost: make(map[time.Duration]int)}
	var hi, lo uint64
	seen := 0
	for blk := range blocks {
		for _, d := range blk {
			s.sum += uint64(d)
			switch {
			case d == FailedLatency:
				s.failed++
			case d < 0:
				return nil, fmt.Errorf("%w: latency[%d] = %d ns is negative", ErrInvalidLatency, seen, d)
			default:
				s.cum[bucketOf(d)+1]++
				s.min, s.max = min(s.min, d), max(s.max, d)
				var c uint64
				lo, c = bits.Add64(lo, uint64(d), 0)
				hi += c
			}
			seen++
		}
	}
	for b := 1; b <= numBuckets; b++ {
		s.cum[b] += s.cum[b-1]
	}
	s.completed = s.cum[numBuckets]
	s.mean = FailedLatency
	if s.completed > 0 {
		// As meanOf: every value < 2^63, so hi < completed.
		quo, _ := bits.Div64(hi, lo, uint64(s.completed))
		s.mean = time.Duration(quo)
	}
	return s, nil
}

// span is a range of values lo … hi that holds wanted ranks: base
// completed values lie below lo and count within.
type span struct {
	lo, hi      time.Duration
	base, count int
	ranks       []int // ascending, all in [base, base+count)

	// One scan's work: collect the values, or count them in hist buckets
	// of step values each.
	vals  []time.Duration
	extra bool // more values than count came to be collected
	hist  []int
	step  uint64
}

// selectRanks returns the completed values at ranks ks (each in
// [0, completed)), selecting the ones not cached.
func (s *scanned) selectRanks(ks []int) ([]time.Duration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var todo []int
	for _, k := range ks {
		if _, ok := s.rank[k]; !ok {
			todo = append(todo, k)
		}
	}
	if len(todo) > 0 {
		slices.Sort(todo)
		spans := s.coarseSpans(slices.Compact(todo))
		for len(spans) > 0 {
			var err error
			if spans, err = s.narrow(spans); err != nil {
				return nil, err
			}
		}
	}
	out := make([]time.Duration, len(ks))
	for i, k := range ks {
		out[i] = s.rank[k]
	}
	return out, nil
}

// coarseSpans returns the coarse buckets holding ranks (ascending, distinct).
func (s *scanned) coarseSpans(ranks []int) []*span {
	var spans []*span
	for _, k := range ranks {
		if n := len(spans); n > 0 && k < spans[n-1].base+spans[n-1].count {
			spans[n-1].ranks = append(spans[n-1].ranks, k)
			continue
		}
		b := sort.Search(numBuckets, func(b int) bool { return s.cum[b+1] > k })
		// Within the values seen: the top bucket's would hold FailedLatency.
		spans = append(spans, &span{lo: max(bucketLo(b), s.min), hi: min(bucketHi(b), s.max), base: s.cum[b],
			count: s.cum[b+1] - s.cum[b], ranks: []int{k}})
	}
	return spans
}

// narrow resolves the spans it can in one scan and returns the narrower
// spans left (ascending by value, as spans are).
func (s *scanned) narrow(spans []*span) ([]*span, error) {
	var active []*span
	budget, refining := s.lim.collect, 0
	for _, sp := range spans {
		switch {
		case sp.lo == sp.hi:
			// One value: all equal latencies end here, never collected.
			s.resolve(sp.ranks, sp.lo, sp.base+sp.count)
		case sp.count <= budget:
			sp.vals = make([]time.Duration, 0, sp.count)
			budget -= sp.count
			active = append(active, sp)
		case refining < s.lim.ranges:
			width := uint64(sp.hi-sp.lo) + 1
			nb := min(uint64(s.lim.refine), width)
			sp.step = (width + nb - 1) / nb
			sp.hist = make([]int, (width+sp.step-1)/sp.step)
			refining++
			active = append(active, sp)
		}
		// Otherwise the span waits for a later scan.
	}
	if len(active) > 0 {
		if sum := s.fill(active); sum != s.sum {
			return nil, fmt.Errorf("%w: the values sum to %d, %d before", errSourceChanged, sum, s.sum)
		}
	}
	var next []*span
	for _, sp := range spans {
		switch {
		case sp.lo == sp.hi:
		case sp.vals != nil:
			if sp.extra || len(sp.vals) != sp.count {
				return nil, fmt.Errorf("%w: %d values in [%d, %d], %d before", errSourceChanged, len(sp.vals), sp.lo, sp.hi, sp.count)
			}
			slices.Sort(sp.vals)
			for _, k := range sp.ranks {
				v := sp.vals[k-sp.base]
				at, _ := slices.BinarySearch(sp.vals, v+1) // v < FailedLatency: no overflow
				s.resolve([]int{k}, v, sp.base+at)
			}
		case sp.hist != nil:
			children, err := sp.split()
			if err != nil {
				return nil, err
			}
			next = append(next, children...)
		default:
			next = append(next, sp)
		}
	}
	return next, nil
}

// resolve records that the value at every rank of ranks is v and that
// atMost completed values are ≤ v.
func (s *scanned) resolve(ranks []int, v time.Duration, atMost int) {
	for _, k := range ranks {
		s.rank[k] = v
	}
	s.atMost[v] = atMost
}

// split turns a counted span into the narrower spans holding its ranks.
func (sp *span) split() ([]*span, error) {
	total := 0
	for _, c := range sp.hist {
		total += c
	}
	if total != sp.count {
		return nil, fmt.Errorf("%w: %d values in [%d, %d], %d before", errSourceChanged, total, sp.lo, sp.hi, sp.count)
	}
	var out []*span
	below, j := sp.base, 0
	for _, k := range sp.ranks {
		for k >= below+sp.hist[j] {
			below += sp.hist[j]
			j++
		}
		if n := len(out); n > 0 && out[n-1].base == below {
			out[n-1].ranks = append(out[n-1].ranks, k)
			continue
		}
		off := uint64(j) * sp.step
		lo := sp.lo + time.Duration(off)
		hi := sp.hi
		if uint64(sp.hi-lo) >= sp.step {
			hi = lo + time.Duration(sp.step) - 1
		}
		out = append(out, &span{lo: lo, hi: hi, base: below, count: sp.hist[j], ranks: []int{k}})
	}
	return out, nil
}

// fill scans the source once, collecting or counting the values of the
// active spans (ascending and disjoint, each within one coarse bucket). It
// returns the sum of the values, as newScanned's.
func (s *scanned) fill(active []*span) (sum uint64) {
	first := routes(len(active), func(i int) time.Duration { return active[i].lo })
	for blk := range s.blocks {
		for _, d := range blk {
			sum += uint64(d)
			i := first[bucketOf(d)]
			if i < 0 {
				continue
			}
			for ; int(i) < len(active); i++ {
				sp := active[i]
				if d < sp.lo {
					break
				}
				if d > sp.hi {
					continue
				}
				if sp.vals != nil {
					if len(sp.vals) < cap(sp.vals) {
						sp.vals = append(sp.vals, d)
					} else {
						sp.extra = true // the source changed: never grow past the limit
					}
				} else {
					sp.hist[uint64(d-sp.lo)/sp.step]++
				}
				break
			}
		}
	}
	return sum
}

// routes maps each coarse bucket to the first of n ascending targets
// (target i starting at lo(i)) in it, −1 for none: a scan finds a value's
// target in a table lookup, not a search over all targets.
func routes(n int, lo func(i int) time.Duration) []int32 {
	first := make([]int32, numBuckets)
	for b := range first {
		first[b] = -1
	}
	for i := n - 1; i >= 0; i-- {
		first[bucketOf(lo(i))] = int32(i)
	}
	return first
}

// countsAtMost returns, for each d, the completed values ≤ d: from the
// histogram and the cache when d is a bucket's top or known, else from one
// scan for all the others.
func (s *scanned) countsAtMost(ds []time.Duration) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]int, len(ds))
	var pending []time.Duration
	for i, d := range ds {
		b := 0
		if d >= 0 {
			b = bucketOf(d)
		}
		c, ok := s.atMost[d]
		switch {
		case ok:
		case d < s.min:
			c = 0
		case d >= s.max:
			c = s.completed
		case d == bucketHi(b):
			c = s.cum[b+1]
		default:
			pending = append(pending, d)
			continue
		}
		out[i] = c
	}
	if len(pending) > 0 {
		slices.Sort(pending)
		pending = slices.Compact(pending)
		s.countPending(pending)
		for i, d := range ds {
			if c, ok := s.atMost[d]; ok {
				out[i] = c
			}
		}
	}
	return out
}

// countPending counts, in one scan, the completed values ≤ each d of ds
// (ascending, distinct, each within [min, max)) into the cache.
func (s *scanned) countPending(ds []time.Duration) {
	first := routes(len(ds), func(i int) time.Duration { return ds[i] })
	// n[j]: values v of d_j's bucket with d_{j−1} < v ≤ d_j (d_{j−1} taken
	// as below the bucket when it is in another).
	n := make([]int, len(ds))
	// end[i]: one past the last d in d_i's bucket.
	end := make([]int, len(ds))
	for j := len(ds) - 1; j >= 0; j-- {
		end[j] = j + 1
		if j+1 < len(ds) && bucketOf(ds[j+1]) == bucketOf(ds[j]) {
			end[j] = end[j+1]
		}
	}
	for blk := range s.blocks {
		for _, v := range blk {
			i := int(first[bucketOf(v)])
			if i < 0 {
				continue
			}
			if j := i + sort.Search(end[i]-i, func(j int) bool { return ds[i+j] >= v }); j < end[i] {
				n[j]++
			}
		}
	}
	for j, d := range ds {
		b := bucketOf(d)
		c := n[j]
		if j > 0 && bucketOf(ds[j-1]) == b {
			c += s.atMost[ds[j-1]]
		} else {
			c += s.cum[b]
		}
		s.atMost[d] = c
	}
}
