package loadgen

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// inflightSUT answers each query after a fixed service time on the real
// clock, and records the most queries it ever held at once.
type inflightSUT struct {
	service       time.Duration
	inflight, max atomic.Int64
	issued        atomic.Int64
}

func (s *inflightSUT) Name() string { return "inflight (Network SUT)" }

func (s *inflightSUT) IssueQuery(_ context.Context, q Query, done func(Completion)) {
	s.issued.Add(1)
	atomicMax(&s.max, s.inflight.Add(1))
	time.AfterFunc(s.service, func() {
		s.inflight.Add(-1) // before done: the engine may send the next at once
		done(q.Done(nil))
	})
}

// A closed loop of 4 keeps exactly 4 queries outstanding, never more, for
// its duration; latency counts from the send; the result is a throughput
// with no MLPerf verdict.
func TestClosedLoopKeepsNOutstanding(t *testing.T) {
	sut := &inflightSUT{service: 2 * time.Millisecond}
	s := testSettings(t, RulesetLoadGen6, trace.SingleStream)
	s.MinDurationMs, s.MinQueryCount = 100, 1
	s.Engine.Concurrency = 4
	res := executeSystem(t, t.Context(), s, sut)
	if got := sut.max.Load(); got != 4 {
		t.Errorf("the SUT held at most %d queries at once, want exactly 4", got)
	}
	cl := res.ClosedLoop
	if cl == nil || cl.Concurrency != 4 || cl.MaxOutstanding > 4 || cl.CompletedSamplesPerSec <= 0 {
		t.Fatalf("closed_loop %+v", cl)
	}
	if res.SamplesCompleted == 0 || res.SamplesCompleted != sut.issued.Load() || res.EndReason != StopCompleted {
		t.Errorf("%d samples completed of %d sent, end %s", res.SamplesCompleted, sut.issued.Load(), res.EndReason)
	}
	if res.Validity != ValidityNA || res.Valid || len(res.InvalidReasons) != 0 || len(res.Recommendations) != 0 {
		t.Errorf("validity %q valid %v reasons %v advice %v: a closed loop has no MLPerf verdict", res.Validity, res.Valid, res.InvalidReasons, res.Recommendations)
	}
	// From the send: never less than the service time, and no lateness.
	if res.SampleLatency.MinNs < int64(2*time.Millisecond) || res.IssueLateness.MaxNs != 0 {
		t.Errorf("min latency %d ns, max lateness %d ns; want ≥ 2 ms from the send, no lateness", res.SampleLatency.MinNs, res.IssueLateness.MaxNs)
	}
	// N outstanding need N times SingleStream's queries.
	if res.GeneratedQueryCount < 4*2*100 {
		t.Errorf("%d queries generated, want at least 4 × 2 × 100 ms / 1 ms", res.GeneratedQueryCount)
	}
}

func TestClosedLoopSettingsRefused(t *testing.T) {
	for _, tc := range []struct {
		sc trace.Scenario
		n  int
	}{{trace.Server, 4}, {trace.MultiStream, 4}, {trace.Offline, 4}, {trace.SingleStream, -1}, {trace.SingleStream, MaxConcurrency + 1}} {
		s := testSettings(t, RulesetLoadGen6, tc.sc)
		s.Engine.Concurrency = tc.n
		if err := s.Validate(); !errors.Is(err, trace.ErrInvalidSettings) {
			t.Errorf("%s concurrency %d: %v, want ErrInvalidSettings naming engine.concurrency", tc.sc, tc.n, err)
		}
	}
}
