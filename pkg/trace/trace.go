package trace

import (
	"time"

	"github.com/netloadgen/netloadgen/pkg/rng"
)

// Trace is what LoadGen pre-generates for one performance run, held without
// its queries: the counts and figures LoadGen logs before the run, the
// loaded set, and the generator's state after the lists LoadGen always
// builds, from which a Cursor replays the queries in issue order, bit for
// bit, as often as asked. Every query carries the same number of samples.
//
// What it holds is bounded by the loaded set (the loaded set, the
// issue-unique list, the equal-issue passes over the loaded set LoadGen
// shuffles whatever the settings) and, for Offline only, the samples of its
// one query: never an entry per query (issue 28).
type Trace struct {
	// Settings are the effective settings the trace was generated from.
	Settings Effective
	// LoadedSet lists the QSL indices of the performance set in the order
	// LoadGen loads and logs them (loaded_qsl_set), including MultiStream's
	// padding (the first samples_per_query-1 entries repeated at the end).
	LoadedSet []int
	// DistributionEnd is the loaded set's length without padding: sample
	// positions are drawn from [0, DistributionEnd).
	DistributionEnd int
	// SamplesPerQuery is the number of samples in every query (for Offline
	// with equal issue, padded to a whole number of loaded sets).
	SamplesPerQuery int
	// Duration is LoadGen's generated_query_duration: the scheduled offset
	// one inter-arrival past the last query.
	Duration time.Duration

	n    int           // generated_query_count
	last time.Duration // the last query's scheduled offset

	// The generator's state before the first query: a cursor starts from
	// a copy of the engines and reads the lists.
	sampleRNG   rng.MT19937 // after the always-run shuffles
	scheduleRNG rng.MT19937 // as seeded
	period      time.Duration
	unique      []int // shuffled positions for performance_issue_unique
	equalIssue  []int // concatenated shuffles for sample_concatenate_permutation
	// offline is Offline's samples (its one query; SamplesPerQuery of
	// them a query): their draws are shuffles of whole repetitions, made
	// once by Generate. Nil for the other scenarios.
	offline []int
	// shape, when set, is a Server trace's schedule instead of Poisson
	// draws (Requested.Shape).
	shape Shape
}

// Query is one generated query: when it is due and which samples it holds.
type Query struct {
	// Index is the query's position in issue order.
	Index int
	// Scheduled is the offset from the start of the run: the ideal Poisson
	// time for Server, and for the other scenarios the constant period
	// LoadGen uses only to decide how many queries to generate.
	Scheduled time.Duration
	// Samples are QSL indices. The slice aliases the trace (the loaded set,
	// or Offline's one query) and stays valid as long as the trace: hand it
	// to an asynchronous SUT as it is; do not modify it.
	Samples []int
	// Stage, Model and Request are a shaped trace's (Arrival); zero
	// otherwise.
	Stage   int
	Model   int
	Request *Request
}

// Len returns the number of generated queries (generated_query_count).
func (t *Trace) Len() int { return t.n }

// LastScheduled returns the last query's scheduled offset.
func (t *Trace) LastScheduled() time.Duration { return t.last }

// SampleCount returns the number of samples over all queries.
func (t *Trace) SampleCount() int { return t.n * t.SamplesPerQuery }

// Cursor returns a cursor at the trace's first query. Cursors are
// independent: the issuer, the warm-up, a SUT's Prepare and the writers at
// the end of a run each take their own. A cursor is not safe for
// concurrent use; the queries it returns are (their samples alias the
// trace).
func (t *Trace) Cursor() *Cursor {
	c := &Cursor{t: t}
	c.Reset()
	return c
}

// Cursor replays a trace's queries in issue order, drawing from copies of
// the generator's engines exactly as LoadGen's GenerateQueries does: each
// Next costs the query's draws (for Server one sample position and one
// inter-arrival time) and allocates nothing. It holds about 5 KB (two
// mt19937 states), whatever the trace's length.
type Cursor struct {
	t          *Trace
	next       int // index of the query Next returns
	at         time.Duration
	sample     rng.MT19937
	schedule   rng.MT19937
	uniqueNext int
	equalNext  int
	arr        Arrivals // a shaped trace's pass
	err        error    // why a shaped pass ended early
}

// Reset rewinds the cursor to the first query (the warm-up cycles the trace).
func (c *Cursor) Reset() {
	t := c.t
	c.next, c.at, c.uniqueNext, c.equalNext = 0, 0, 0, 0
	c.sample, c.schedule = t.sampleRNG, t.scheduleRNG
	if t.shape != nil {
		_ = c.Close()
		c.arr, c.err = t.shape.Arrivals()
	}
}

// Next returns the next query, and false once all Len have been returned.
func (c *Cursor) Next() (Query, bool) {
	t := c.t
	i := c.next
	if i >= t.n {
		_ = c.Close() // a shaped pass's file, at its end
		return Query{}, false
	}
	if t.shape != nil {
		return c.shapedNext(i)
	}
	if i > 0 {
		// The inter-arrival after query i-1: drawn lazily, so a pass draws
		// none past the last query (Generate drew that one for Duration).
		c.at += c.delta()
	}
	c.next++
	spq := t.SamplesPerQuery
	var s []int
	switch t.Settings.Scenario {
	case Offline:
		s = t.offline[i*spq : (i+1)*spq : (i+1)*spq]
	case MultiStream:
		k := c.position(false)
		s = t.LoadedSet[k : k+spq : k+spq]
	default:
		// One sample a query (SingleStream and Server).
		k := c.position(true)
		s = t.LoadedSet[k : k+1 : k+1]
	}
	return Query{Index: i, Scheduled: c.at, Samples: s}, true
}

// position draws a query's (first) sample position in the loaded set, in
// LoadGen's order of precedence; equal issue applies to one-sample queries
// only. Generate has checked that the unique list lasts the trace.
func (c *Cursor) position(equalIssue bool) int {
	e := &c.t.Settings
	switch {
	case e.PerformanceIssueUnique:
		k := c.t.unique[c.uniqueNext]
		c.uniqueNext++
		return k
	case e.PerformanceIssueSame:
		return int(e.PerformanceIssueSameIndex)
	case equalIssue && e.SampleConcatenatePermutation:
		l := c.t.equalIssue
		k := l[c.equalNext%len(l)]
		c.equalNext++
		return k
	}
	// std::uniform_int_distribution<int>(0, end-1)(sample_rng).
	return int(rng.UniformInt(&c.sample, 0, uint64(c.t.DistributionEnd-1)))
}

func (c *Cursor) delta() time.Duration {
	if c.t.Settings.Scenario == Server {
		return rng.DurationCastNs(rng.Exponential(&c.schedule, c.t.Settings.TargetQPS))
	}
	return c.t.period
}
