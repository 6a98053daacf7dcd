package serverview

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
)

// MetricsFile is the run directory's file of every scraped sample,
// server_metrics.jsonl: one Line per scrape and series.
const MetricsFile = "server_metrics.jsonl"

// Bucket is one cumulative histogram bucket: LE is the bucket's "le"
// label as the server wrote it ("0.005", "+Inf"), Count the observations
// at or below it.
type Bucket struct {
	LE    string  `json:"le"`
	Count float64 `json:"count"`
}

// Line is one line of server_metrics.jsonl: one series in one scrape, T
// seconds after the run's start (a scrape before the start is negative).
// A histogram has Count, Sum and Buckets instead of Value.
type Line struct {
	T        float64           `json:"t"`
	Endpoint string            `json:"endpoint"`
	Name     string            `json:"name"`
	Labels   map[string]string `json:"labels"`
	Type     string            `json:"type"`
	Value    *float64          `json:"value,omitempty"`
	Count    *float64          `json:"count,omitempty"`
	Sum      *float64          `json:"sum,omitempty"`
	Buckets  []Bucket          `json:"buckets,omitempty"`
}

// Key identifies a line's series: its endpoint, name and labels.
func (l *Line) Key() string {
	// On the stack for the usual few labels: a scrape keys every line.
	var room [8][2]string
	pairs := room[:0]
	for k, v := range l.Labels {
		pairs = append(pairs, [2]string{k, v})
	}
	slices.SortFunc(pairs, byName)
	return seriesKey(l.Endpoint, l.Name, pairs)
}

func byName(a, b [2]string) int { return cmp.Compare(a[0], b[0]) }

// SeriesKey is Key of the line of endpoint, name and the label pairs
// (name, value) in any order, which it sorts in place: what a reader
// checks before it builds the line (Summarizer.KnownKey).
func SeriesKey(endpoint, name string, labels [][2]string) string {
	slices.SortFunc(labels, byName)
	return seriesKey(endpoint, name, labels)
}

func seriesKey(endpoint, name string, sorted [][2]string) string {
	n := len(endpoint) + 1 + len(name)
	for _, p := range sorted {
		n += 2 + len(p[0]) + len(p[1])
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(endpoint)
	b.WriteByte(0)
	b.WriteString(name)
	for _, p := range sorted {
		b.WriteByte(0)
		b.WriteString(p[0])
		b.WriteByte('=')
		b.WriteString(p[1])
	}
	return b.String()
}

// Summarizer folds scrapes into a summary per series (Metrics.Series)
// in memory of the order of the series, not of the scrapes: per series
// the first and latest values and running sums. Not safe for concurrent
// use.
type Summarizer struct {
	max    int
	series map[string]*acc
	order  []*acc
	// began is each endpoint's first scrape's time: a series first seen
	// later was born during the run.
	began map[string]float64
}

// NewSummarizer keeps at most maxSeries series (≤ 0: no bound).
func NewSummarizer(maxSeries int) *Summarizer {
	return &Summarizer{max: maxSeries, series: map[string]*acc{}, began: map[string]float64{}}
}

// Len is the number of series kept.
func (s *Summarizer) Len() int { return len(s.order) }

// Add folds l in. It reports false, keeping nothing, when l is a new
// series past the bound; a series already kept is always added.
func (s *Summarizer) Add(l *Line) bool {
	k := l.Key()
	a := s.series[k]
	if a == nil {
		if s.max > 0 && len(s.order) >= s.max {
			return false
		}
		a = &acc{name: l.Name, labels: l.Labels, endpoint: l.Endpoint, typ: l.Type}
		s.series[k] = a
		s.order = append(s.order, a)
		began, seen := s.began[l.Endpoint]
		if !seen {
			s.began[l.Endpoint] = l.T
		} else if l.T > began {
			// Not in the endpoint's first scrape: born during the run (a
			// labelled counter made on its first use, a histogram's first
			// observations), so it counts from 0, not from its first value.
			a.born, a.firstT = true, began
		}
	}
	a.add(l)
	return true
}

// KnownKey reports whether the series of key (SeriesKey) is kept.
func (s *Summarizer) KnownKey(key string) bool { return s.series[key] != nil }

// Full reports whether a new series would be refused.
func (s *Summarizer) Full() bool { return s.max > 0 && len(s.order) >= s.max }

// Series are the summaries, by endpoint, name and labels.
func (s *Summarizer) Series() []Series {
	type keyed struct {
		s      Series
		labels string
	}
	all := make([]keyed, 0, len(s.order))
	for _, a := range s.order {
		all = append(all, keyed{a.summary(), labelText(a.labels)}) // once a series, not once a comparison
	}
	slices.SortFunc(all, func(x, y keyed) int {
		return cmp.Or(cmp.Compare(x.s.Endpoint, y.s.Endpoint), cmp.Compare(x.s.Name, y.s.Name), cmp.Compare(x.labels, y.labels))
	})
	out := make([]Series, len(all))
	for i, k := range all {
		out[i] = k.s
	}
	return out
}

func labelText(m map[string]string) string {
	l := Line{Labels: m}
	return l.Key()
}

// acc is one series' running state.
type acc struct {
	name, endpoint, typ string
	labels              map[string]string

	scrapes        int64
	firstT, lastT  float64
	first, last    float64
	sum, max       float64
	delta          float64 // a counter's increase, resets accounted for
	resets         int64
	count, hsum    float64 // a histogram's latest count and sum
	dCount, dSum   float64 // and their increases
	buckets        []Bucket
	dBuckets       []float64
	layoutMismatch bool
	born           bool // first seen after its endpoint's first scrape: counts from 0
}

func (a *acc) add(l *Line) {
	a.scrapes++
	if a.scrapes == 1 && !a.born {
		a.firstT = l.T
	}
	a.lastT = l.T
	if a.typ == Histogram {
		a.addHistogram(l)
		return
	}
	if l.Value == nil {
		return
	}
	v := *l.Value
	if a.scrapes == 1 {
		a.first, a.max = v, v
		if a.born && a.typ == Counter {
			a.delta = v
		}
	} else if a.typ == Counter {
		a.delta += increase(a.last, v, &a.resets)
	}
	a.last, a.sum, a.max = v, a.sum+v, max(a.max, v)
}

// increase is a counter's increase from prev to cur: after a reset (cur
// below prev) the counter started again from 0, so the increase is cur,
// as PromQL's increase() takes it.
func increase(prev, cur float64, resets *int64) float64 {
	if cur < prev {
		*resets++
		return cur
	}
	return cur - prev
}

func (a *acc) addHistogram(l *Line) {
	c, s := deref(l.Count), deref(l.Sum)
	if a.scrapes == 1 {
		a.count, a.hsum, a.buckets = c, s, slices.Clone(l.Buckets)
		a.dBuckets = make([]float64, len(l.Buckets))
		if a.born {
			a.dCount, a.dSum = c, s
			for i, b := range l.Buckets {
				a.dBuckets[i] = b.Count
			}
		}
		return
	}
	if !sameLayout(a.buckets, l.Buckets) {
		// The server changed its buckets (a restart with a new
		// configuration): the deltas so far keep their layout, and the
		// new buckets are a reset of the count and sum only.
		a.layoutMismatch = true
		a.resets++
		a.dCount, a.dSum = a.dCount+c, a.dSum+s
		a.count, a.hsum = c, s
		return
	}
	reset := c < a.count
	if reset {
		a.resets++
	}
	for i, b := range l.Buckets {
		if reset {
			a.dBuckets[i] += b.Count
		} else {
			a.dBuckets[i] += max(b.Count-a.buckets[i].Count, 0)
		}
		a.buckets[i].Count = b.Count
	}
	if reset {
		a.dCount, a.dSum = a.dCount+c, a.dSum+s
	} else {
		a.dCount, a.dSum = a.dCount+c-a.count, a.dSum+s-a.hsum
	}
	a.count, a.hsum = c, s
}

// deref is *p, or 0 for none.
func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

func sameLayout(a, b []Bucket) bool {
	return slices.EqualFunc(a, b, func(x, y Bucket) bool { return x.LE == y.LE })
}

func (a *acc) summary() Series {
	s := Series{Name: a.name, Labels: a.labels, Endpoint: a.endpoint, Type: a.typ, Scrapes: a.scrapes, Resets: a.resets}
	span := a.lastT - a.firstT
	switch a.typ {
	case Counter:
		s.Delta = ptr(a.delta)
		if span > 0 {
			s.Rate = ptr(a.delta / span)
		}
	case Histogram:
		s.Count, s.Sum = ptr(a.dCount), ptr(a.dSum)
		if a.dCount > 0 {
			s.Mean = ptr(a.dSum / a.dCount)
		}
		if !a.layoutMismatch {
			s.P50Estimate = quantile(0.5, a.buckets, a.dBuckets)
			s.P99Estimate = quantile(0.99, a.buckets, a.dBuckets)
		}
	default:
		if a.scrapes > 0 {
			s.First, s.Last, s.Max = ptr(a.first), ptr(a.last), ptr(a.max)
			s.Mean = ptr(a.sum / float64(a.scrapes))
		}
	}
	return s
}

// ptr is v to show, nil when it is not finite: values a hostile server
// sent finite can still overflow in a sum (1e308 twice), and result.json
// cannot carry NaN or an infinity.
func ptr(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// quantile estimates the q-quantile from cumulative bucket counts (the
// layout's LE, the counts in counts) as PromQL's histogram_quantile does:
// linear within the bucket the rank falls in, the lower bound of the
// first bucket 0 (when its upper bound is positive), and the highest
// finite bound when the rank falls in +Inf's. nil without observations
// or without a +Inf bucket.
func quantile(q float64, layout []Bucket, counts []float64) *float64 {
	type bkt struct{ le, n float64 }
	bs := make([]bkt, 0, len(layout))
	for i, b := range layout {
		le, err := strconv.ParseFloat(b.LE, 64)
		if err != nil {
			return nil
		}
		bs = append(bs, bkt{le, counts[i]})
	}
	slices.SortFunc(bs, func(x, y bkt) int { return cmp.Compare(x.le, y.le) })
	if len(bs) < 2 || !math.IsInf(bs[len(bs)-1].le, 1) {
		return nil
	}
	total := bs[len(bs)-1].n
	if total <= 0 {
		return nil
	}
	rank := q * total
	i, _ := slices.BinarySearchFunc(bs, rank, func(b bkt, r float64) int { return cmp.Compare(b.n, r) })
	if i >= len(bs)-1 {
		return ptr(bs[len(bs)-2].le)
	}
	lower, below := 0.0, 0.0
	if i > 0 {
		lower, below = bs[i-1].le, bs[i-1].n
	} else if bs[0].le <= 0 {
		return ptr(bs[0].le)
	}
	in := bs[i].n - below
	if in <= 0 {
		return ptr(bs[i].le)
	}
	return ptr(lower + (bs[i].le-lower)*(rank-below)/in)
}

// LiveValue is a known metric's (KnownMetrics) value in the latest
// scrape of its series, while the run goes: what the daemon's progress
// events carry (api.Progress's server_metrics).
type LiveValue struct {
	Name     string            `json:"name"`
	Labels   map[string]string `json:"labels,omitempty"`
	Endpoint string            `json:"endpoint"`
	Value    float64           `json:"value"`
	// T is the scrape's time, in seconds since the run's start.
	T float64 `json:"t"`
}
