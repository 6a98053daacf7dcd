package loadgen

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// fakeClock is a virtual clock: SleepUntil jumps to the due time (plus a
// fixed lateness), and SUTs advance it to their completion times.
type fakeClock struct {
	base time.Time
	now  atomic.Int64
	late time.Duration // added to every SleepUntil: a scheduler that wakes late
}

func newFakeClock() *fakeClock { return &fakeClock{base: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) Now() time.Time { return c.base.Add(time.Duration(c.now.Load())) }

func (c *fakeClock) advanceTo(t time.Time) { atomicMax(&c.now, int64(t.Sub(c.base))) }

func (c *fakeClock) SleepUntil(ctx context.Context, t time.Time) {
	if ctx.Err() != nil || !c.Now().Before(t) {
		return
	}
	c.advanceTo(t.Add(c.late))
}

// issuedQuery is a copy of what the SUT was given.
type issuedQuery struct {
	ID, FirstSample   int
	Samples           []int
	Scheduled, Issued time.Time
}

// fakeSUT answers from goroutines after a scripted latency, stamping the
// completion on the virtual clock; closed-loop tests let it advance the clock.
type fakeSUT struct {
	clock   *fakeClock
	latency func(id int) time.Duration
	fail    func(id int) error
	advance bool // move the clock to the completion time (closed loops)
	silent  bool // never answer
	batch   int  // >0: complete in ranges of this many samples (Offline)
	// inline completes within IssueQuery, stamped at issue + latency: on a
	// virtual clock the issuer would otherwise race through the whole trace
	// before the completion goroutines run, so a test of when the engine
	// stops would depend on the scheduler.
	inline  bool
	onIssue func(q Query)

	mu  sync.Mutex
	got []issuedQuery
}

func (s *fakeSUT) Name() string { return "fake (Network SUT)" }

func (s *fakeSUT) IssueQuery(ctx context.Context, q Query, done func(Completion)) {
	s.mu.Lock()
	s.got = append(s.got, issuedQuery{q.ID, q.FirstSample, slices.Clone(q.Samples), q.Scheduled, q.Issued})
	s.mu.Unlock()
	if s.onIssue != nil {
		s.onIssue(q)
	}
	if s.silent {
		return
	}
	answer := func() {
		var lat time.Duration
		if s.latency != nil {
			lat = s.latency(q.ID)
		}
		var err error
		if s.fail != nil {
			err = s.fail(q.ID)
		}
		at := q.Issued.Add(lat)
		if s.advance {
			s.clock.advanceTo(at)
		}
		if s.batch <= 0 {
			c := q.Done(err)
			c.At = at
			done(c)
			return
		}
		for first := 0; first < len(q.Samples); first += s.batch {
			c := q.DoneRange(first, min(s.batch, len(q.Samples)-first), err)
			c.At = at
			done(c)
		}
	}
	if s.inline {
		answer()
		return
	}
	go answer()
}

func (s *fakeSUT) issued() []issuedQuery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

type fakeQSL struct {
	total, perf int
	loaded      []int
	err         error
}

func (q *fakeQSL) TotalSampleCount() int       { return q.total }
func (q *fakeQSL) PerformanceSampleCount() int { return q.perf }
func (q *fakeQSL) Load(_ context.Context, idx []int) error {
	q.loaded = slices.Clone(idx)
	return q.err
}
