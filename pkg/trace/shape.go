package trace

import (
	"fmt"
	"time"

	"github.com/netloadgen/netloadgen/pkg/rng"
)

// A Shape replaces a Server trace's Poisson schedule at server_target_qps
// with arrivals of its own (issue 31): stages and ramps of the rate, a
// replayed trace file, a model mix. It is not a LoadGen setting: a shaped
// run is no LoadGen scenario, and its verdict is its SLOs' (pkg/loadgen).
// A Shape is deterministic: every pass of Arrivals yields the same
// arrivals, in time order, so that each issuer's cursor, the warm-up and
// the writers at the end of a run see the same schedule. It is walked,
// never held: a pass holds what one arrival needs, whatever the length.
type Shape interface {
	// Arrivals starts a pass over the arrivals from the first.
	Arrivals() (Arrivals, error)
	// End is the shape's own end (the stages' total, a trace window's
	// end), at or past its last arrival; 0 for the last arrival's offset.
	End() time.Duration
}

// Arrivals is one pass over a shape's arrivals.
type Arrivals interface {
	// Next returns the next arrival, and false at the end or on an error
	// (Err says which).
	Next() (Arrival, bool)
	// Err is the error that ended the pass early (a trace file's bad
	// line, naming it), nil at the end.
	Err() error
	// Close releases the pass (a file): a pass that ran to its end may
	// already have; Close is then a no-op.
	Close() error
}

// Arrival is one query of a shaped schedule.
type Arrival struct {
	// At is the query's offset from the run's start: non-decreasing from
	// one arrival to the next, never negative.
	At time.Duration
	// Stage is the index of the stage the query falls in (0 without
	// stages): result.json's stages[] and the samples' "stage".
	Stage int
	// Model is the index of the query's model in the run's mix (0
	// without a mix): result.json's models[] and the samples' "model".
	Model int
	// Request is a generative query's shape when a trace file gives it
	// (its lengths, its prompt blocks); nil: the data set's sample.
	Request *Request
}

// Request is a generative request as a trace file describes it: the
// prompt is synthesised at InputTokens (deterministic from the run's
// seeds), max_tokens is OutputTokens.
type Request struct {
	InputTokens  int
	OutputTokens int
	// HashIDs name the prompt's blocks (Mooncake's layout): requests that
	// share an id share that block's text, so that a prefix cache sees the
	// trace's reuse. Empty: a prompt of its own.
	HashIDs []int
}

// generateShaped is Generate for a shaped Server trace: one counting pass
// over the shape fixes the count and the duration. Sample positions are
// drawn uniformly from the loaded set by the sample index RNG, one a
// query; LoadGen's issue orders (equal issue, issue-unique, issue-same)
// belong to its scenarios and are off.
func generateShaped(e Effective, qslTotal uint64, s Shape) (*Trace, error) {
	if e.Scenario != Server {
		return nil, fmt.Errorf("%w: a load shape (stages, a trace file, a mix, sessions) needs the Server scenario, not %s", ErrInvalidSettings, e.Scenario)
	}
	e.SampleConcatenatePermutation, e.PerformanceIssueUnique, e.PerformanceIssueSame = false, false, false
	e.SamplesPerQuery = 1
	n, last, err := countArrivals(s)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: the load shape has no arrivals", ErrInvalidSettings)
	}
	d := max(last, s.End())
	// The effective figures a shaped run reports: its mean rate and its
	// own length and count, which no LoadGen minimum adds to.
	if d > 0 {
		e.TargetQPS = float64(n) / d.Seconds()
	}
	e.MinQueryCount, e.MinDurationMs, e.TargetDurationMs = uint64(n), 0, uint64(d/time.Millisecond)
	e.MinSampleCount = uint64(n)
	loaded, end := LoadedSet(e, qslTotal)
	return &Trace{
		Settings:        e,
		LoadedSet:       loaded,
		DistributionEnd: end,
		SamplesPerQuery: 1,
		Duration:        d,
		n:               n,
		last:            last,
		sampleRNG:       *rng.NewMT19937(e.SampleIndexRNGSeed),
		shape:           s,
	}, nil
}

// countArrivals walks one pass: the count, the last offset, and the
// checks every pass then relies on (time order, no negative offset, the
// bound on samples).
func countArrivals(s Shape) (n int, last time.Duration, err error) {
	a, err := s.Arrivals()
	if err != nil {
		return 0, 0, fmt.Errorf("%w: %w", ErrInvalidSettings, err)
	}
	defer a.Close()
	for x, ok := a.Next(); ok; x, ok = a.Next() {
		switch {
		case x.At < 0:
			return 0, 0, fmt.Errorf("%w: the load shape's arrival %d is at %v, before the start", ErrInvalidSettings, n, x.At)
		case x.At < last:
			return 0, 0, fmt.Errorf("%w: the load shape's arrival %d is at %v, before the one before it (%v)", ErrInvalidSettings, n, x.At, last)
		}
		if n++; n > MaxSamples {
			return 0, 0, fmt.Errorf("%w: the load shape has more than %d arrivals", ErrTooLarge, MaxSamples)
		}
		last = x.At
	}
	if err := a.Err(); err != nil {
		return 0, 0, fmt.Errorf("%w: %w", ErrInvalidSettings, err)
	}
	return n, last, nil
}

// Shape is the trace's load shape, nil for a LoadGen scenario's.
func (t *Trace) Shape() Shape { return t.shape }

// shapedNext is Next for a shaped trace.
func (c *Cursor) shapedNext(i int) (Query, bool) {
	if c.arr == nil {
		return Query{}, false
	}
	a, ok := c.arr.Next()
	if !ok {
		c.err = c.arr.Err()
		if c.err == nil {
			c.err = fmt.Errorf("the load shape ended after %d arrivals of %d", i, c.t.n)
		}
		return Query{}, false
	}
	c.next++
	c.at = a.At
	k := int(rng.UniformInt(&c.sample, 0, uint64(c.t.DistributionEnd-1)))
	return Query{Index: i, Scheduled: a.At, Samples: c.t.LoadedSet[k : k+1 : k+1],
		Stage: a.Stage, Model: a.Model, Request: a.Request}, true
}

// Err is why a shaped cursor stopped before the trace's length: the pass
// could not be opened again, or the file changed under it. Nil otherwise.
func (c *Cursor) Err() error { return c.err }

// Close releases a shaped cursor's pass (a trace file) before its end.
func (c *Cursor) Close() error {
	if c.arr == nil {
		return nil
	}
	err := c.arr.Close()
	c.arr = nil
	return err
}
