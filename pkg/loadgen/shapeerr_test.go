package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

var errFileChanged = errors.New("the trace file changed under its pass")

// brokenShape is a fixed shape whose passes can be made to fail: after
// the pass counting (trace.New's), a pass that fails to open (openErr) or
// one that ends after cut arrivals with errFileChanged, as a trace file
// truncated or rewritten mid-run does. It counts the passes open.
type brokenShape struct {
	a       fixedShape
	mu      sync.Mutex
	passes  int // opened so far
	good    int // the first good passes are whole
	cut     int // later passes end after cut arrivals (-1: whole)
	openErr bool
	open    int // passes opened and not closed
}

func (s *brokenShape) End() time.Duration { return 0 }

func (s *brokenShape) Arrivals() (trace.Arrivals, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.passes++
	if s.passes <= s.good {
		s.open++
		return &brokenPass{s: s, cut: -1}, nil
	}
	if s.openErr {
		return nil, errFileChanged
	}
	s.open++
	return &brokenPass{s: s, cut: s.cut}, nil
}

func (s *brokenShape) set(good, cut int, openErr bool) {
	s.mu.Lock()
	s.passes, s.good, s.cut, s.openErr = 0, good, cut, openErr
	s.mu.Unlock()
}

func (s *brokenShape) openPasses() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open
}

type brokenPass struct {
	s      *brokenShape
	i, cut int
	err    error
	closed bool
}

func (p *brokenPass) Next() (trace.Arrival, bool) {
	if p.err != nil || p.i >= len(p.s.a) {
		return trace.Arrival{}, false
	}
	if p.cut >= 0 && p.i >= p.cut {
		p.err = errFileChanged
		return trace.Arrival{}, false
	}
	p.i++
	return p.s.a[p.i-1], true
}

func (p *brokenPass) Err() error { return p.err }

func (p *brokenPass) Close() error {
	if !p.closed {
		p.closed = true
		p.s.mu.Lock()
		p.s.open--
		p.s.mu.Unlock()
	}
	return nil
}

func evenArrivals(n int, gap time.Duration) fixedShape {
	a := make(fixedShape, n)
	for i := range a {
		a[i] = trace.Arrival{At: time.Duration(i) * gap}
	}
	return a
}

// WriteSamples stops at a pass that fails, with its error: a pass that
// cannot open (once an index-out-of-range panic) or one that ends early
// (once an endless loop) gives an error, not a made-up line.
func TestWriteSamplesShapePassFails(t *testing.T) {
	for name, c := range map[string]struct {
		cut     int
		openErr bool
	}{"open fails": {0, true}, "ends early": {5, false}} {
		t.Run(name, func(t *testing.T) {
			sh := &brokenShape{a: evenArrivals(20, time.Millisecond), cut: -1}
			sh.set(1<<30, -1, false)
			r, res := shapedRun(t, sh, genai.SLO{}, &fakeSUT{clock: newFakeClock(), latency: latencyByID, inline: true})
			if res.SamplesIssued != 20 {
				t.Fatalf("issued %d, want 20", res.SamplesIssued)
			}
			sh.set(0, c.cut, c.openErr)
			var buf bytes.Buffer
			err := r.WriteSamples(&buf)
			if !errors.Is(err, errFileChanged) {
				t.Fatalf("WriteSamples: %v, want the pass's error", err)
			}
			if n := bytes.Count(buf.Bytes(), []byte("\n")); n > c.cut {
				t.Errorf("%d lines written, want at most the %d the pass gave", n, c.cut)
			}
			if o := sh.openPasses(); o != 0 {
				t.Errorf("%d passes left open", o)
			}
		})
	}
}

// shapeErrRun runs sh with the settings edit sets, on the virtual clock.
func shapeErrRun(t *testing.T, sh trace.Shape, edit func(*Settings)) *Result {
	t.Helper()
	s := testSettings(t, RulesetLoadGen6, trace.Server)
	s.Shape = sh
	edit(&s)
	r, err := NewRun(s, &fakeSUT{clock: newFakeClock(), latency: latencyByID, inline: true}, &fakeQSL{total: 1000, perf: 256}, WithClock(newFakeClock()), quiet)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Execute(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A shaped run whose pass ends early (its trace file truncated or
// rewritten mid-run, or not readable again) ends load_shape_ended_early,
// INVALID with the pass's error among its reasons and errors, with or
// without an SLO (a clean N/A would pass as an exit status reads it),
// and leaves no pass open.
func TestShapedRunWhosePassEndsEarlyIsInvalid(t *testing.T) {
	slo, err := genai.ParseSLO("latency=10s@p99")
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		good, cut, warmupMs int
		openErr             bool
		slo                 genai.SLO
		issued              int64
	}{
		// Pass 1 is trace.New's count, pass 2 the issuer's, pass 3 the warm-up's.
		"issuer's pass cut":          {good: 1, cut: 5, issued: 5},
		"issuer's pass cut, SLO met": {good: 1, cut: 5, slo: slo, issued: 5},
		"issuer's pass not opened":   {good: 1, openErr: true, issued: 0},
		"warm-up's pass cut":         {good: 2, cut: 3, warmupMs: 50, issued: 0},
		"warm-up's pass not opened":  {good: 2, openErr: true, warmupMs: 50, issued: 0},
	} {
		t.Run(name, func(t *testing.T) {
			sh := &brokenShape{a: evenArrivals(20, time.Millisecond)}
			sh.set(c.good, c.cut, c.openErr)
			res := shapeErrRun(t, sh, func(s *Settings) { s.Engine.SLO, s.Engine.WarmupMs = c.slo, uint64(c.warmupMs) })
			if res.SamplesIssued != c.issued {
				t.Errorf("issued %d samples, want %d", res.SamplesIssued, c.issued)
			}
			if res.EndReason != StopShapeEnded || !strings.Contains(res.EndMessage, errFileChanged.Error()) {
				t.Errorf("end %q (%q), want %q naming the pass's error", res.EndReason, res.EndMessage, StopShapeEnded)
			}
			if res.Valid || res.Validity != "INVALID" || res.Passed() {
				t.Errorf("validity %s (valid %v, passed %v), want INVALID and not passed", res.Validity, res.Valid, res.Passed())
			}
			if !slices.ContainsFunc(res.InvalidReasons, func(s string) bool { return strings.Contains(s, "load shape ended early") }) {
				t.Errorf("invalid reasons %q do not name the shape's early end", res.InvalidReasons)
			}
			if !slices.ContainsFunc(res.Errors, func(s string) bool { return strings.Contains(s, errFileChanged.Error()) }) {
				t.Errorf("errors %q do not hold the pass's error", res.Errors)
			}
			if o := sh.openPasses(); o != 0 {
				t.Errorf("%d passes left open", o)
			}
		})
	}
}

// A run stopped before its shape's end (max_query_count; a warm-up
// shorter than a pass) closes its issuers' and its warm-up's passes: a
// pass may hold a trace file.
func TestShapedRunClosesItsPasses(t *testing.T) {
	sh := &brokenShape{a: evenArrivals(20, time.Millisecond)}
	sh.set(1<<30, -1, false)
	res := shapeErrRun(t, sh, func(s *Settings) { s.MaxQueryCount, s.Engine.WarmupMs = 5, 5 })
	if res.SamplesIssued != 5 || res.EndReason != StopMaxQueryCount {
		t.Fatalf("issued %d, ended %s: want 5, %s", res.SamplesIssued, res.EndReason, StopMaxQueryCount)
	}
	if res.Warmup == nil || res.Warmup.SamplesIssued == 0 || res.Warmup.SamplesIssued >= 20 {
		t.Fatalf("warm-up %+v: want part of a pass", res.Warmup)
	}
	if o := sh.openPasses(); o != 0 {
		t.Errorf("%d passes left open", o)
	}
}

// A successful sample without a first token (no output tokens) does not
// meet a ttft bound in stages[] and models[] (samples_meeting_slo,
// goodput), as it does not in the verdict's ttft bound, which leaves it
// out of the samples with a TTFT.
func TestShapedPartsSampleWithoutTokensMissesTTFT(t *testing.T) {
	law := func(id int) genLaw {
		if id%4 == 0 {
			return genLaw{ttft: time.Millisecond, tokens: 0, input: 5} // answered, no token
		}
		return genLaw{ttft: time.Millisecond, gap: time.Millisecond, tokens: 3, input: 5}
	}
	slo, err := genai.ParseSLO("ttft=100ms@p50")
	if err != nil {
		t.Fatal(err)
	}
	_, res := shapedRun(t, twoStages(), slo, &genSUT{law: law, generative: true})
	if res.SamplesCompleted != 500 || len(res.Stages) != 2 || len(res.Models) != 3 {
		t.Fatalf("completed %d, %d stages, %d models", res.SamplesCompleted, len(res.Stages), len(res.Models))
	}
	for i, want := range []int64{75, 300} { // stage 0: ids 0–99, stage 1: 100–499; a quarter without tokens
		if got := res.Stages[i].SamplesMeetingSLO; got == nil || *got != want {
			t.Errorf("stage %d: samples meeting the SLO %v, want %d (those with a first token)", i, deref(got), want)
		}
	}
	var met int64
	for _, m := range res.Models {
		met += *m.SamplesMeetingSLO
	}
	if met != 375 {
		t.Errorf("models meet the SLO with %d samples, want 375", met)
	}
	if b := res.LoadShape.Bounds[0]; b.Samples != 375 {
		t.Errorf("the verdict's ttft bound counts %d samples, want the 375 with a first token", b.Samples)
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// timedTurns answers each turn inline, latency(session) after its issue.
type timedTurns struct {
	turnSUT
	latencyOf func(session int) time.Duration
}

func (s *timedTurns) IssueQuery(_ context.Context, q Query, done func(Completion)) {
	s.mu.Lock()
	s.got = append(s.got, q)
	s.mu.Unlock()
	l := s.latencyOf(q.Session)
	c := q.Done(nil)
	c.At, c.FirstToken, c.Tokens, c.InputTokens = q.Issued.Add(l), q.Issued.Add(l/2), 3, 10
	done(c)
}

// Which sample a session's turn sends depends on the run's seeds alone,
// not on when the server's answers make the turns due: two answer-time
// patterns issue the turns in different orders and send each (session,
// turn) the same sample; the samples export names what was sent.
func TestSessionTurnSamplesDoNotDependOnAnswerTimes(t *testing.T) {
	ms := time.Millisecond
	ss := testSessions{starts: []trace.SessionStart{{Session: 0, At: 0, Turns: 4}, {Session: 1, At: ms, Turns: 4}, {Session: 2, At: 2 * ms, Turns: 3}}, think: ms}
	run := func(latencyOf func(int) time.Duration) (order []string, sample map[[2]int]int, r *Run) {
		clk := newFakeClock()
		sut := &timedTurns{turnSUT: turnSUT{clock: clk}, latencyOf: latencyOf}
		s := testSettings(t, RulesetLoadGen6, trace.Server)
		s.Shape, s.Sessions = ss, ss
		r, err := NewRun(s, sut, &fakeQSL{total: 1000, perf: 256}, WithClock(clk), quiet)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Execute(t.Context()); err != nil {
			t.Fatal(err)
		}
		sample = map[[2]int]int{}
		for _, q := range sut.got {
			order = append(order, fmt.Sprintf("%d.%d", q.Session, q.Turn))
			sample[[2]int{q.Session, q.Turn}] = q.Samples[0]
		}
		return order, sample, r
	}
	orderA, a, _ := run(func(int) time.Duration { return 10 * ms })
	orderB, b, rb := run(func(s int) time.Duration { return time.Duration(1+20*(2-s)) * ms }) // session 2 fast, 0 slow
	if slices.Equal(orderA, orderB) {
		t.Fatalf("both patterns issued %v: the test shows nothing", orderA)
	}
	if len(a) != 11 || !maps.Equal(a, b) {
		t.Errorf("samples by (session, turn) differ with the answer times:\n%v (order %v)\n%v (order %v)", a, orderA, b, orderB)
	}
	distinct := map[int]bool{}
	for _, v := range a {
		distinct[v] = true
	}
	if len(distinct) < 6 {
		t.Errorf("11 turns drew %d distinct samples: %v", len(distinct), a)
	}
	var out bytes.Buffer
	if err := rb.WriteSamples(&out); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(&out)
	n := 0
	for ; sc.Scan(); n++ {
		var line struct{ Index, Session, Turn int }
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		if want := b[[2]int{line.Session, line.Turn}]; line.Index != want {
			t.Errorf("samples line %s: index %d, the SUT was sent %d", sc.Bytes(), line.Index, want)
		}
	}
	if n != 11 {
		t.Errorf("%d sample lines, want 11", n)
	}
}
