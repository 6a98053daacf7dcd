package loadgen

import (
	"context"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// A warm-up sends the scenario's load to the SUT before the timed run and
// discards it: the SUT sees warm-up and timed queries, the result, its
// latencies and the observer only the timed ones, and result.json's warmup
// block counts the others. The timed run's clock starts after the warm-up.
func TestWarmupIsSentAndDiscarded(t *testing.T) {
	for _, sc := range []trace.Scenario{trace.Server, trace.SingleStream, trace.Offline} {
		t.Run(sc.String(), func(t *testing.T) {
			s := testSettings(t, RulesetLoadGen6, sc)
			s.Engine.WarmupMs = 500
			clk := newFakeClock()
			// Warm-up answers take 1 ms, timed ones 2 ms: a warm-up answer
			// in the timed record would show in its minimum.
			var timedFrom int
			sut := &fakeSUT{clock: clk, inline: true, advance: sc != trace.Server, latency: func(id int) time.Duration {
				if id >= timedFrom {
					return time.Millisecond
				}
				return 2 * time.Millisecond
			}}
			o := newRecordingObserver()
			r, err := NewRun(s, sut, &fakeQSL{total: 1000, perf: 256}, WithClock(clk), quiet, WithObserver(o))
			if err != nil {
				t.Fatalf("NewRun: %v", err)
			}
			timedFrom = r.Trace().Len()
			start := clk.Now()
			res, err := r.Execute(context.Background())
			if err != nil {
				t.Fatalf("Execute: %v", err)
			}
			var warmQ, warmS, timedQ int
			for _, q := range sut.issued() {
				if q.ID >= timedFrom {
					warmQ++
					warmS += len(q.Samples)
					if q.Scheduled.Sub(start) >= 500*time.Millisecond && sc == trace.Server {
						t.Errorf("warm-up query %d due %v after the start: past the 500 ms warm-up", q.ID, q.Scheduled.Sub(start))
					}
				} else {
					timedQ++
				}
			}
			t.Logf("%d warm-up queries (%d samples), %d timed", warmQ, warmS, timedQ)
			if warmQ == 0 || int64(timedQ) != res.QueriesIssued {
				t.Fatalf("the SUT saw %d warm-up and %d timed queries; the result counts %d", warmQ, timedQ, res.QueriesIssued)
			}
			if res.Warmup == nil {
				t.Fatal("no warmup block in the result")
			}
			want := Warmup{DurationMs: 500, SamplesIssued: int64(warmS), SamplesCompleted: int64(warmS)}
			if *res.Warmup != want {
				t.Errorf("warmup %+v, want %+v", *res.Warmup, want)
			}
			if res.SamplesIssued != int64(timedQ*r.Trace().SamplesPerQuery) || res.SamplesCompleted != res.SamplesIssued || res.ProtocolErrors != 0 {
				t.Errorf("result: %d samples issued, %d completed, %d protocol errors; want the %d timed samples only",
					res.SamplesIssued, res.SamplesCompleted, res.ProtocolErrors, timedQ*r.Trace().SamplesPerQuery)
			}
			if res.SampleLatency.MinNs < int64(2*time.Millisecond) {
				t.Errorf("sample latency min %v: a warm-up answer is in the timed record", time.Duration(res.SampleLatency.MinNs))
			}
			if len(o.issued) != timedQ {
				t.Errorf("the observer saw %d queries issued, want the %d timed ones", len(o.issued), timedQ)
			}
			for id := range o.issued {
				if id >= timedFrom {
					t.Errorf("the observer saw warm-up query %d", id)
				}
			}
			if sc != trace.Offline && res.StartTime.IsZero() {
				t.Error("no start time")
			}
		})
	}
}

// A cancel during the warm-up ends the run at once, cancelled, with
// nothing timed issued and the warm-up's unanswered samples failed.
func TestWarmupCancelled(t *testing.T) {
	s := testSettings(t, RulesetLoadGen6, trace.Server)
	s.Engine.WarmupMs = 60_000
	s.Engine.DrainTimeoutMs = 60_000 // a cancel does not wait for it
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	sut := &fakeSUT{silent: true, onIssue: func(Query) {
		if n++; n == 10 {
			cancel()
		}
	}}
	r, err := NewRun(s, sut, &fakeQSL{total: 1000, perf: 256}, WithClock(newFakeClock()), quiet)
	if err != nil {
		t.Fatalf("NewRun: %v", err)
	}
	res, err := r.Execute(ctx)
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if res.EndReason != StopCancelled || res.Valid || res.QueriesIssued != 0 {
		t.Errorf("end %s, %s, %d timed queries: want a cancelled run with none", res.EndReason, res.Validity, res.QueriesIssued)
	}
	if w := res.Warmup; w == nil || w.SamplesIssued != 10 || w.SamplesFailed != 10 || w.SamplesCompleted != 0 {
		t.Errorf("warmup %+v: want 10 issued, 10 failed", w)
	}
	for _, q := range sut.issued() {
		if q.ID < r.Trace().Len() {
			t.Fatalf("timed query %d issued after the cancel", q.ID)
		}
	}
}

// heldSUT answers at once, but for one warm-up query it holds until the
// timed run's first query, then answers it through the done callback it was
// given last, as the event-loop SUTs do (one callback for every answer).
type heldSUT struct {
	n      int // the trace's length: IDs from here are the warm-up's
	held   *Query
	issued int
}

func (s *heldSUT) Name() string { return "held (Network SUT)" }

func (s *heldSUT) IssueQuery(_ context.Context, q Query, done func(Completion)) {
	s.issued++
	if q.ID == s.n {
		s.held = &q
		return
	}
	if q.ID < s.n && s.held != nil {
		late := *s.held
		s.held = nil
		done(late.Done(nil))
	}
	c := q.Done(nil)
	c.At = q.Issued.Add(time.Millisecond)
	done(c)
}

// A warm-up answer that comes during the timed run, through the timed run's
// callback, is the warm-up's: it counts in no timed figure (nor as a
// protocol error), and the warm-up, which gave up on it at its drain, has it
// failed.
func TestWarmupLateAnswerIsNotTimed(t *testing.T) {
	s := testSettings(t, RulesetLoadGen6, trace.Server)
	s.Engine.WarmupMs = 100
	s.Engine.DrainTimeoutMs = 50
	clk := newFakeClock()
	sut := &heldSUT{}
	r, err := NewRun(s, sut, &fakeQSL{total: 1000, perf: 256}, WithClock(clk), quiet)
	if err != nil {
		t.Fatalf("NewRun: %v", err)
	}
	sut.n = r.Trace().Len()
	res, err := r.Execute(context.Background())
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if sut.held != nil {
		t.Fatal("the held answer was never delivered")
	}
	if res.ProtocolErrors != 0 || res.SamplesCompleted != res.SamplesIssued || res.SamplesIssued != int64(sut.n) || res.LateCompletions != 0 {
		t.Errorf("timed: %d issued, %d completed, %d protocol errors, %d late: the warm-up's answer leaked in",
			res.SamplesIssued, res.SamplesCompleted, res.ProtocolErrors, res.LateCompletions)
	}
	if w := res.Warmup; w == nil || w.SamplesFailed != 1 || w.SamplesCompleted != w.SamplesIssued-1 {
		t.Errorf("warmup %+v: want the held sample failed, the rest completed", w)
	}
}
