package loadgen

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// trickleSUT is a SUT far over capacity: it answers its queries one at a
// time, one every gap of real time, so the server is never silent for long
// and an idle timeout never fires. It answers on the system clock.
type trickleSUT struct {
	gap    time.Duration
	issued chan struct{} // one send per query issued
	mu     sync.Mutex
	queue  []pending
	wake   chan struct{}
	stop   chan struct{}
}

type pending struct {
	q    Query
	done func(Completion)
}

func newTrickleSUT(gap time.Duration, n int) *trickleSUT {
	s := &trickleSUT{gap: gap, issued: make(chan struct{}, n), wake: make(chan struct{}, 1), stop: make(chan struct{})}
	go s.serve()
	return s
}

func (s *trickleSUT) Name() string { return "trickle (Network SUT)" }

func (s *trickleSUT) IssueQuery(_ context.Context, q Query, done func(Completion)) {
	s.mu.Lock()
	s.queue = append(s.queue, pending{q, done})
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	s.issued <- struct{}{}
}

func (s *trickleSUT) serve() {
	t := time.NewTicker(s.gap)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		s.mu.Lock()
		if len(s.queue) == 0 {
			s.mu.Unlock()
			continue
		}
		p := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		c := p.q.Done(nil)
		c.Data = make([][]byte, c.Count) // what accuracy mode asks for
		p.done(c)
	}
}

// The drain timeout bounds the whole drain from the moment issuing stops,
// not the silence between answers: a SUT far over capacity that answers
// now and then must not keep a run (cancelled or not) draining for as long
// as its backlog lasts. A cancel during the drain makes the run end
// cancelled (or interrupted), its unanswered samples failed.
func TestDrainTimeoutIsATotalBound(t *testing.T) {
	const drain = 300 * time.Millisecond
	cases := []struct {
		name   string
		silent bool
		cancel error // nil: no cancel; else the cancel's cause
		want   StopReason
	}{
		{name: "over capacity, not cancelled", want: StopCompleted},
		{name: "over capacity, cancelled", cancel: context.Canceled, want: StopCancelled},
		{name: "over capacity, interrupted", cancel: ErrInterrupted, want: StopInterrupted},
		{name: "silent, cancelled", silent: true, cancel: context.Canceled, want: StopCancelled},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testSettings(t, RulesetLoadGen6, trace.Server)
			s.Engine.DrainTimeoutMs = uint64(drain / time.Millisecond)
			// The fake clock issues the whole trace at once; the SUT then
			// has 20 ms of real time per answer: a backlog of seconds.
			gap := 20 * time.Millisecond
			if tc.silent {
				gap = time.Hour
			}
			n := 2000
			sut := newTrickleSUT(gap, n)
			defer close(sut.stop)
			r, err := NewRun(s, sut, &fakeQSL{total: 1000, perf: 256}, WithClock(newFakeClock()), quiet)
			if err != nil {
				t.Fatalf("NewRun: %v", err)
			}
			if r.Trace().Len() > n || r.Trace().Len() < 100 {
				t.Fatalf("trace of %d queries; the test wants 100 to %d", r.Trace().Len(), n)
			}
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			type out struct {
				res *Result
				err error
			}
			ended := make(chan out, 1)
			go func() {
				res, err := r.Execute(ctx)
				ended <- out{res, err}
			}()
			for range r.Trace().Len() {
				<-sut.issued
			}
			stopped := time.Now() // issuing has stopped: the last query is out
			if tc.cancel != nil {
				cancel(tc.cancel)
			}
			o := endedWithinDrain(t, ended, stopped, drain)
			if o.err != nil {
				t.Fatalf("Execute: %v", o.err)
			}
			res := o.res
			if res.EndReason != tc.want {
				t.Errorf("end reason %s, want %s", res.EndReason, tc.want)
			}
			if !res.DrainTimedOut || res.Unanswered == 0 || res.SamplesFailed < res.Unanswered || res.Valid {
				t.Errorf("drain timed out %v, unanswered %d, failed %d, %s", res.DrainTimedOut, res.Unanswered, res.SamplesFailed, res.Validity)
			}
			if tc.cancel != nil && !errors.Is(context.Cause(ctx), tc.cancel) {
				t.Fatalf("cause %v", context.Cause(ctx))
			}
		})
	}
}

// Accuracy mode's wait for outstanding answers is bounded the same way: the
// drain timeout from the moment issuing stopped, whether the SUT never
// answers or answers now and then far over capacity, and a cancel ends the
// wait at once. Unanswered samples count as failed.
func TestAccuracyDrainTimeoutIsATotalBound(t *testing.T) {
	const drain = 300 * time.Millisecond
	cases := []struct {
		name          string
		silent        bool
		cancel        bool
		stalled, canc bool
	}{
		{name: "over capacity", stalled: true},
		{name: "over capacity, cancelled", cancel: true, canc: true},
		{name: "silent", silent: true, stalled: true},
		{name: "silent, cancelled", silent: true, cancel: true, canc: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testSettings(t, RulesetLoadGen6, trace.Server)
			s.Mode = trace.AccuracyOnly
			s.Engine.DrainTimeoutMs = uint64(drain / time.Millisecond)
			// The fake clock issues a set's 256 queries at once; the SUT
			// then has 20 ms of real time per answer: 5 s a set.
			gap := 20 * time.Millisecond
			if tc.silent {
				gap = time.Hour
			}
			sut := newTrickleSUT(gap, 1000)
			defer close(sut.stop)
			a, err := NewAccuracyRun(s, sut, &fakeQSL{total: 1000, perf: 256}, WithClock(newFakeClock()), quiet)
			if err != nil {
				t.Fatalf("NewAccuracyRun: %v", err)
			}
			first := len(a.Sets()[0].Queries)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			type out struct {
				res *AccuracyResult
				err error
			}
			ended := make(chan out, 1)
			go func() {
				res, err := a.Execute(ctx)
				ended <- out{res, err}
			}()
			for range first {
				<-sut.issued
			}
			stopped := time.Now() // the first set's last query is out
			if tc.cancel {
				cancel()
			}
			o := endedWithinDrain(t, ended, stopped, drain)
			if o.err != nil {
				t.Fatalf("Execute: %v", o.err)
			}
			res := o.res
			if res.Stalled != tc.stalled || res.Cancelled != tc.canc {
				t.Errorf("stalled %v, cancelled %v; want %v, %v", res.Stalled, res.Cancelled, tc.stalled, tc.canc)
			}
			if res.Sets != 1 || res.SamplesIssued != int64(first) {
				t.Errorf("%d sets, %d samples issued; want the first set's %d and no more", res.Sets, res.SamplesIssued, first)
			}
			if res.SamplesCompleted+res.SamplesFailed != res.SamplesIssued || res.SamplesFailed == 0 || res.Complete() {
				t.Errorf("%d completed, %d failed of %d issued: what never answered must fail", res.SamplesCompleted, res.SamplesFailed, res.SamplesIssued)
			}
		})
	}
}

// pieceSUT answers each query in parts, one part every gap of real time:
// an Offline endpoint working through its one query steadily.
type pieceSUT struct {
	gap   time.Duration
	parts int
}

func (s *pieceSUT) Name() string { return "pieces (Network SUT)" }

func (s *pieceSUT) IssueQuery(ctx context.Context, q Query, done func(Completion)) {
	go func() {
		n := len(q.Samples)
		step := (n + s.parts - 1) / s.parts
		for first := 0; first < n; first += step {
			select {
			case <-time.After(s.gap):
			case <-ctx.Done():
				return
			}
			done(q.DoneRange(first, min(step, n-first), nil))
		}
	}()
}

// Offline's one query is the run: an endpoint that answers it steadily for
// longer than the drain timeout is waited for (the drain timeout bounds the
// wait after a cancel, and the silence of a stalled endpoint), as LoadGen
// waits; a cancel still ends the run within the drain timeout.
func TestOfflineWaitsForItsQuery(t *testing.T) {
	const drain = 100 * time.Millisecond
	for _, cancelled := range []bool{false, true} {
		t.Run(map[bool]string{false: "answered steadily", true: "cancelled"}[cancelled], func(t *testing.T) {
			s := testSettings(t, RulesetLoadGen6, trace.Offline)
			s.Engine.DrainTimeoutMs = uint64(drain / time.Millisecond)
			gap := 40 * time.Millisecond // 10 parts: 400 ms, four drain timeouts
			if cancelled {
				gap = time.Hour
			}
			sut := &pieceSUT{gap: gap, parts: 10}
			r, err := NewRun(s, sut, &fakeQSL{total: 1000, perf: 256}, WithClock(newFakeClock()), quiet)
			if err != nil {
				t.Fatalf("NewRun: %v", err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ended := make(chan *Result, 1)
			go func() {
				res, err := r.Execute(ctx)
				if err != nil {
					t.Errorf("Execute: %v", err)
				}
				ended <- res
			}()
			if cancelled {
				for !r.Progress().Started {
					runtimeYield()
				}
				cancel()
			}
			var res *Result
			select {
			case res = <-ended:
			case <-time.After(drain + 3*time.Second):
				t.Fatal("the run did not end")
			}
			if res == nil {
				return
			}
			if cancelled {
				if res.EndReason != StopCancelled || res.Unanswered == 0 {
					t.Errorf("cancelled: end %s, %d unanswered; want cancelled with the query unanswered", res.EndReason, res.Unanswered)
				}
				return
			}
			if res.EndReason != StopCompleted || res.DrainTimedOut || res.SamplesCompleted != res.SamplesIssued {
				t.Errorf("end %s, drain timed out %v, %d of %d samples answered; want every sample answered, completed",
					res.EndReason, res.DrainTimedOut, res.SamplesCompleted, res.SamplesIssued)
			}
		})
	}
}

// endedWithinDrain waits for what a run's goroutine sends when Execute
// returns, failing the test unless it comes within the drain timeout + 1 s
// of stopped, when issuing stopped (and fatally 3 s past the drain).
func endedWithinDrain[T any](t *testing.T, ended <-chan T, stopped time.Time, drain time.Duration) T {
	t.Helper()
	var o T
	select {
	case o = <-ended:
	case <-time.After(drain + 3*time.Second):
		t.Fatalf("the run still waits %v after issuing stopped (drain timeout %v)", time.Since(stopped), drain)
	}
	if took := time.Since(stopped); took > drain+time.Second {
		t.Errorf("the run ended %v after issuing stopped; want at most the drain timeout %v + 1s", took, drain)
	}
	return o
}
