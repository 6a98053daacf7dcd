package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// testSessions is a fixed set of sessions with a fixed think time: the
// Shape (every planned turn at its session's start) and the Sessions.
type testSessions struct {
	starts []trace.SessionStart
	think  time.Duration
}

func (s testSessions) Arrivals() (trace.Arrivals, error) {
	var a fixedShape
	for _, st := range s.starts {
		for range st.Turns {
			a = append(a, trace.Arrival{At: st.At})
		}
	}
	return a.Arrivals()
}
func (s testSessions) End() time.Duration { return 0 }
func (s testSessions) SessionStarts() trace.SessionIter {
	return &startIter{s: s.starts}
}
func (s testSessions) Think(session, turn int) time.Duration { return s.think }

type startIter struct {
	s []trace.SessionStart
	i int
}

func (it *startIter) Next() (trace.SessionStart, bool) {
	if it.i >= len(it.s) {
		return trace.SessionStart{}, false
	}
	it.i++
	return it.s[it.i-1], true
}

// turnSUT answers each turn inline on the virtual clock, latency after
// its issue, its first token half way, 3 tokens; fail says which
// (session, turn) fail. It keeps what it was given.
type turnSUT struct {
	clock   *fakeClock
	latency time.Duration
	fail    map[[2]int]bool
	mu      sync.Mutex
	got     []Query
}

func (s *turnSUT) Name() string { return "turns (Network SUT)" }

func (s *turnSUT) IssueQuery(_ context.Context, q Query, done func(Completion)) {
	s.mu.Lock()
	s.got = append(s.got, q)
	s.mu.Unlock()
	c := q.Done(nil)
	if s.fail[[2]int{q.Session, q.Turn}] {
		c.Err = errors.New("turn refused")
	}
	c.At, c.FirstToken, c.Tokens, c.InputTokens = q.Issued.Add(s.latency), q.Issued.Add(s.latency/2), 3, 10
	done(c)
}

func sessionRun(t *testing.T, sut *turnSUT, ss testSessions) (*Run, *Result) {
	t.Helper()
	s := testSettings(t, RulesetLoadGen6, trace.Server)
	s.Shape, s.Sessions = ss, ss
	r, err := NewRun(s, sut, &fakeQSL{total: 1000, perf: 256}, WithClock(sut.clock), quiet)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Execute(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return r, res
}

// A later turn is due at the previous answer's end plus the think time,
// and its latency counts from then; query indices follow the issue order.
func TestSessionFollowUpsAreDueAfterAnswerAndThink(t *testing.T) {
	ms := time.Millisecond
	clk := newFakeClock()
	sut := &turnSUT{clock: clk, latency: 10 * ms}
	ss := testSessions{starts: []trace.SessionStart{{Session: 0, At: 0, Turns: 3}, {Session: 1, At: 5 * ms, Turns: 2}}, think: 2 * ms}
	r, res := sessionRun(t, sut, ss)
	want := []struct {
		session, turn int
		due           time.Duration
	}{{0, 1, 0}, {1, 1, 5 * ms}, {0, 2, 12 * ms}, {1, 2, 17 * ms}, {0, 3, 24 * ms}}
	if len(sut.got) != len(want) {
		t.Fatalf("issued %d turns, want %d", len(sut.got), len(want))
	}
	for i, w := range want {
		q := sut.got[i]
		if q.ID != i || q.Session != w.session || q.Turn != w.turn || q.Scheduled.Sub(clk.base) != w.due {
			t.Errorf("query %d: id %d session %d turn %d due %v, want session %d turn %d due %v",
				i, q.ID, q.Session, q.Turn, q.Scheduled.Sub(clk.base), w.session, w.turn, w.due)
		}
	}
	sr := res.Sessions
	if sr == nil {
		t.Fatal("no sessions in the result")
	}
	if sr.Sessions != 2 || sr.Completed != 2 || sr.Failed != 0 || sr.TurnsPlanned != 5 || sr.TurnsIssued != 5 || sr.TurnsNotIssued != 0 {
		t.Errorf("sessions %+v", *sr)
	}
	if len(sr.Turns) != 3 || sr.Turns[0].Issued != 2 || sr.Turns[1].Issued != 2 || sr.Turns[2].Issued != 1 {
		t.Fatalf("turns %+v", sr.Turns)
	}
	for _, tr := range sr.Turns {
		// Latency from the due time: the virtual clock issues on time.
		if tr.TTFT.P50 != int64(5*ms) || tr.E2E.Max != int64(10*ms) || tr.TPOT.P50 != int64(5*ms/2) {
			t.Errorf("turn %d: ttft %+v e2e %+v tpot %+v", tr.Turn, tr.TTFT, tr.E2E, tr.TPOT)
		}
	}
	// Sessions of 34 ms (0 → 24 + 10) and 27 ms (5 → 17 + 10).
	if d := sr.DurationNs; d.Count != 2 || abs(d.Max-int64(34*ms)) > int64(34*ms)/500 {
		t.Errorf("durations %+v, want 2 of at most 34ms", d)
	}
	var out bytes.Buffer
	if err := r.WriteSamples(&out); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(&out)
	for i := 0; sc.Scan(); i++ {
		var line struct{ Sample, Session, Turn int }
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		if line.Session != want[i].session || line.Turn != want[i].turn {
			t.Errorf("samples line %d: %s", i, sc.Bytes())
		}
	}
}

func abs(v int64) int64 { return max(v, -v) }

// A failed turn ends its session: its later turns are never issued, and
// the result counts them and the session.
func TestSessionEndsAtAFailedTurn(t *testing.T) {
	ms := time.Millisecond
	clk := newFakeClock()
	sut := &turnSUT{clock: clk, latency: 10 * ms, fail: map[[2]int]bool{{0, 2}: true}}
	ss := testSessions{starts: []trace.SessionStart{{Session: 0, At: 0, Turns: 4}, {Session: 1, At: time.Millisecond, Turns: 2}}}
	_, res := sessionRun(t, sut, ss)
	for _, q := range sut.got {
		if q.Session == 0 && q.Turn > 2 {
			t.Errorf("session 0's turn %d issued after its turn 2 failed", q.Turn)
		}
	}
	sr := res.Sessions
	if sr.Sessions != 2 || sr.Completed != 1 || sr.Failed != 1 || sr.TurnsIssued != 4 || sr.TurnsNotIssued != 2 {
		t.Errorf("sessions %+v", *sr)
	}
	if sr.Turns[1].Failed != 1 || sr.Turns[1].Completed != 1 {
		t.Errorf("turn 2: %+v", sr.Turns[1])
	}
}

// A turn that never answers leaves its session unfinished at the drain;
// the run ends (bounded by the drain timeout), naming it.
func TestSessionWithEndlessAnswerEndsAtTheDrain(t *testing.T) {
	clk := newFakeClock()
	sut := &silentTurns{turnSUT: turnSUT{clock: clk, latency: time.Millisecond}}
	ss := testSessions{starts: []trace.SessionStart{{Session: 0, At: 0, Turns: 3}}}
	s := testSettings(t, RulesetLoadGen6, trace.Server)
	s.Shape, s.Sessions = ss, ss
	s.Engine.DrainTimeoutMs = 50
	r, err := NewRun(s, sut, &fakeQSL{total: 1000, perf: 256}, WithClock(clk), quiet)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Execute(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if sr := res.Sessions; sr.Unfinished != 1 || sr.TurnsIssued != 1 || res.SamplesFailed != 1 {
		t.Errorf("sessions %+v, failed %d", *sr, res.SamplesFailed)
	}
}

type silentTurns struct{ turnSUT }

func (s *silentTurns) IssueQuery(_ context.Context, q Query, _ func(Completion)) {
	s.mu.Lock()
	s.got = append(s.got, q)
	s.mu.Unlock()
}

// Sessions run on one issuer.
func TestSessionsRefuseSeveralIssuers(t *testing.T) {
	ss := testSessions{starts: []trace.SessionStart{{Session: 0, At: 0, Turns: 2}}}
	s := testSettings(t, RulesetLoadGen6, trace.Server)
	s.Shape, s.Sessions = ss, ss
	s.Engine.Issuers = 2
	clk := newFakeClock()
	_, err := NewRun(s, &turnSUT{clock: clk}, &fakeQSL{total: 1000, perf: 256}, WithClock(clk), quiet,
		WithIssuerSUTs(&turnSUT{clock: clk}))
	if !errors.Is(err, trace.ErrInvalidSettings) || !bytes.Contains([]byte(err.Error()), []byte("--sessions")) {
		t.Fatalf("got %v, want an error naming --sessions", err)
	}
}
