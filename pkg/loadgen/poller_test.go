package loadgen

import (
	"context"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// pollSUT answers each query latency after its issue, but only from inside
// PollUntil, as a SUT that does its I/O on the issuer's goroutine would. It
// is used from one goroutine only (the engine's issuer), so it has no locks:
// the race detector flags any call from another goroutine.
type pollSUT struct {
	latency time.Duration
	batch   int  // >0: Offline answers in ranges of this many samples
	silent  bool // never answer
	stamped bool // completions carry the time the answer was due (Completion.At)
	onIssue func(q Query)

	pending        []pendingAnswer
	polls          int
	inPoll         bool
	doneOutside    int // completions delivered outside PollUntil: must stay 0
	maxOutstanding int
	issued         int
}

type pendingAnswer struct {
	q    Query
	at   time.Time
	done func(Completion)
}

func (s *pollSUT) Name() string { return "poll (Network SUT)" }

func (s *pollSUT) IssueQuery(_ context.Context, q Query, done func(Completion)) {
	s.issued++
	if s.onIssue != nil {
		s.onIssue(q)
	}
	if s.silent {
		return
	}
	s.pending = append(s.pending, pendingAnswer{q: q, at: time.Now().Add(s.latency), done: done})
	s.maxOutstanding = max(s.maxOutstanding, len(s.pending))
}

func (s *pollSUT) PollUntil(ctx context.Context, t time.Time) {
	s.polls++
	s.inPoll = true
	defer func() { s.inPoll = false }()
	for {
		now := time.Now()
		delivered := false
		for len(s.pending) > 0 && !s.pending[0].at.After(now) {
			p := s.pending[0]
			s.pending = s.pending[1:]
			s.answer(p)
			delivered = true
		}
		if delivered || !now.Before(t) || ctx.Err() != nil {
			return
		}
		wake := t
		if len(s.pending) > 0 && s.pending[0].at.Before(wake) {
			wake = s.pending[0].at
		}
		// The SUT's own wait for its next event, as epoll would block.
		timer := time.NewTimer(time.Until(wake))
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
		}
	}
}

func (s *pollSUT) answer(p pendingAnswer) {
	if !s.inPoll {
		s.doneOutside++
	}
	if s.batch <= 0 {
		c := p.q.Done(nil)
		if s.stamped {
			c.At = p.at
		}
		p.done(c)
		return
	}
	for first := 0; first < len(p.q.Samples); first += s.batch {
		c := p.q.DoneRange(first, min(s.batch, len(p.q.Samples)-first), nil)
		if s.stamped {
			c.At = p.at
		}
		p.done(c)
	}
}

// executeSystem runs on the system clock, where the engine uses a Poller.
func executeSystem(t *testing.T, ctx context.Context, s Settings, sut SUT) *Result {
	t.Helper()
	r, err := NewRun(s, sut, &fakeQSL{total: 1000, perf: 256}, quiet)
	if err != nil {
		t.Fatalf("NewRun: %v", err)
	}
	res, err := r.Execute(ctx)
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	return res
}

// Every scenario delivers its completions through PollUntil, and records
// every sample with a latency no shorter than the SUT's.
func TestPollerDeliversEveryScenario(t *testing.T) {
	cases := []struct {
		name    string
		ruleset Ruleset
		sc      trace.Scenario
		batch   int
	}{
		{"Server", RulesetLoadGen6, trace.Server, 0},
		{"Offline", RulesetLoadGen6, trace.Offline, 7},
		{"SingleStream", RulesetLoadGen6, trace.SingleStream, 0},
		{"MultiStream v0.5", RulesetV05, trace.MultiStream, 0},
	}
	const lat = 2 * time.Millisecond
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := testSettings(t, c.ruleset, c.sc)
			s.MinDurationMs = 100
			sut := &pollSUT{latency: lat, batch: c.batch}
			res := executeSystem(t, context.Background(), s, sut)
			if sut.polls == 0 {
				t.Fatal("the engine never polled the SUT")
			}
			if sut.doneOutside != 0 {
				t.Fatalf("%d completions outside PollUntil", sut.doneOutside)
			}
			if res.QueriesIssued == 0 || res.QueriesCompleted != res.QueriesIssued || res.SamplesFailed != 0 || res.DrainTimedOut {
				t.Fatalf("issued %d, completed %d, failed %d, drain timed out %v", res.QueriesIssued, res.QueriesCompleted, res.SamplesFailed, res.DrainTimedOut)
			}
			if res.SampleLatency.MinNs < int64(lat) {
				t.Errorf("minimum latency %v is shorter than the SUT's %v", time.Duration(res.SampleLatency.MinNs), lat)
			}
		})
	}
}

// quietSUT is a pollSUT that is also a QuietPoller: a quiet poll delivers
// nothing before its t, and times each answer by when it came (as receive
// timestamps do).
type quietSUT struct {
	pollSUT
	quietPolls int
}

func (s *quietSUT) PollQuietUntil(ctx context.Context, t time.Time) {
	s.quietPolls++
	if d := time.Until(t); d > 0 {
		timer := time.NewTimer(d)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
		}
	}
	s.PollUntil(ctx, time.Now())
}

// The Server issuer's waits for due times are quiet; a wait for answers
// (SingleStream's next query, the drain) never is.
func TestQuietPollsAreOnlyForDueTimes(t *testing.T) {
	for _, c := range []struct {
		sc    trace.Scenario
		quiet bool
	}{{trace.Server, true}, {trace.SingleStream, false}} {
		t.Run(c.sc.String(), func(t *testing.T) {
			s := testSettings(t, RulesetLoadGen6, c.sc)
			s.MinDurationMs = 100
			sut := &quietSUT{pollSUT: pollSUT{latency: time.Millisecond, stamped: true}}
			res := executeSystem(t, context.Background(), s, sut)
			if res.QueriesIssued == 0 || res.QueriesCompleted != res.QueriesIssued || sut.doneOutside != 0 {
				t.Fatalf("issued %d, completed %d, %d outside a poll", res.QueriesIssued, res.QueriesCompleted, sut.doneOutside)
			}
			if got := sut.quietPolls > 0; got != c.quiet {
				t.Errorf("%d quiet polls, want quiet polls: %v", sut.quietPolls, c.quiet)
			}
			if res.SampleLatency.MinNs < int64(time.Millisecond) {
				t.Errorf("minimum latency %v is shorter than the SUT's 1ms", time.Duration(res.SampleLatency.MinNs))
			}
		})
	}
}

// Server stays open loop with a Poller: queries go out while earlier ones
// are still outstanding.
func TestPollerServerStaysOpenLoop(t *testing.T) {
	s := testSettings(t, RulesetLoadGen6, trace.Server)
	s.MinDurationMs = 100
	sut := &pollSUT{latency: 20 * time.Millisecond} // 20 queries outstanding on average at 1000 QPS
	res := executeSystem(t, context.Background(), s, sut)
	if sut.maxOutstanding < 2 {
		t.Fatalf("at most %d queries outstanding: the issuer waited for answers", sut.maxOutstanding)
	}
	if res.QueriesCompleted != res.QueriesIssued {
		t.Fatalf("completed %d of %d", res.QueriesCompleted, res.QueriesIssued)
	}
}

// Cancelling stops issuing; in-flight queries still complete through the
// drain's polls.
func TestPollerCancellation(t *testing.T) {
	for _, sc := range []trace.Scenario{trace.Server, trace.SingleStream} {
		t.Run(sc.String(), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			sut := &pollSUT{latency: time.Millisecond}
			sut.onIssue = func(q Query) {
				if q.ID == 9 {
					cancel()
				}
			}
			res := executeSystem(t, ctx, testSettings(t, RulesetV05, sc), sut)
			if res.EndReason != StopCancelled || res.QueriesIssued != 10 || res.QueriesCompleted != 10 || res.SamplesFailed != 0 {
				t.Errorf("reason %s, issued %d, completed %d, failed %d", res.EndReason, res.QueriesIssued, res.QueriesCompleted, res.SamplesFailed)
			}
		})
	}
}

// A Poller that never answers ends in the drain timeout (Server) or the
// stall detection (closed loop), not in a hang; its samples fail.
func TestPollerSilentSUTStalls(t *testing.T) {
	for _, sc := range []trace.Scenario{trace.Server, trace.SingleStream} {
		t.Run(sc.String(), func(t *testing.T) {
			s := testSettings(t, RulesetLoadGen6, sc)
			s.MinDurationMs = 50
			s.Engine.DrainTimeoutMs = 100
			sut := &pollSUT{silent: true}
			res := executeSystem(t, context.Background(), s, sut)
			if !res.DrainTimedOut && res.EndReason != StopStalled {
				t.Fatalf("reason %s, drain timed out %v: the silence went unnoticed", res.EndReason, res.DrainTimedOut)
			}
			if res.Unanswered == 0 || res.Valid {
				t.Fatalf("unanswered %d, %s", res.Unanswered, res.Validity)
			}
		})
	}
}

// max_async_queries still stops a Server run whose SUT falls behind.
func TestPollerMaxAsyncQueries(t *testing.T) {
	s := testSettings(t, RulesetLoadGen6, trace.Server)
	s.ServerMaxAsyncQueries = 5
	s.Engine.DrainTimeoutMs = 100
	sut := &pollSUT{silent: true}
	res := executeSystem(t, context.Background(), s, sut)
	if res.EndReason != StopTooManyInFlight {
		t.Fatalf("reason %s, want %s", res.EndReason, StopTooManyInFlight)
	}
}

// On a virtual clock the engine does not poll: a Poller waits in real time.
func TestPollerNotUsedOnAVirtualClock(t *testing.T) {
	if pollerFor(&pollSUT{}, newFakeClock()) != nil {
		t.Fatal("a virtual clock run would poll")
	}
	if pollerFor(&pollSUT{}, NewSystemClock(0)) == nil {
		t.Fatal("a system clock run would not poll")
	}
	if pollerFor(&fakeSUT{}, NewSystemClock(0)) != nil {
		t.Fatal("a SUT without PollUntil would be polled")
	}
}

// With several issuers each polls its own SUT on its own goroutine (the
// pollSUTs have no locks: under -race a call from another goroutine
// fails), and every completion comes through its issuer's polls.
func TestPollerPerIssuer(t *testing.T) {
	for _, c := range []struct {
		name  string
		sc    trace.Scenario
		conc  int
		batch int
	}{{"Server", trace.Server, 0, 0}, {"Offline", trace.Offline, 0, 7}, {"concurrency", trace.SingleStream, 4, 0}} {
		t.Run(c.name, func(t *testing.T) {
			s := testSettings(t, RulesetLoadGen6, c.sc)
			s.MinDurationMs, s.Engine.Concurrency, s.Engine.Issuers = 100, c.conc, 3
			suts := []*pollSUT{{latency: time.Millisecond, batch: c.batch}, {latency: time.Millisecond, batch: c.batch}, {latency: time.Millisecond, batch: c.batch}}
			r, err := NewRun(s, suts[0], &fakeQSL{total: 1000, perf: 256}, quiet, WithIssuerSUTs(suts[1], suts[2]))
			if err != nil {
				t.Fatal(err)
			}
			res, err := r.Execute(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for k, sut := range suts {
				if sut.issued == 0 || sut.polls == 0 || sut.doneOutside != 0 {
					t.Errorf("issuer %d: %d queries, %d polls, %d completions outside its polls", k, sut.issued, sut.polls, sut.doneOutside)
				}
			}
			if res.QueriesIssued == 0 || res.QueriesCompleted != res.QueriesIssued || res.SamplesFailed != 0 || res.DrainTimedOut {
				t.Errorf("issued %d, completed %d, failed %d, drain timed out %v", res.QueriesIssued, res.QueriesCompleted, res.SamplesFailed, res.DrainTimedOut)
			}
		})
	}
}
