package loadgen

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// fixedShape is a trace.Shape of fixed arrivals.
type fixedShape []trace.Arrival

func (s fixedShape) Arrivals() (trace.Arrivals, error) { return &fixedPass{s: s}, nil }
func (s fixedShape) End() time.Duration                { return 0 }

type fixedPass struct {
	s fixedShape
	i int
}

func (p *fixedPass) Next() (trace.Arrival, bool) {
	if p.i >= len(p.s) {
		return trace.Arrival{}, false
	}
	p.i++
	return p.s[p.i-1], true
}
func (p *fixedPass) Err() error   { return nil }
func (p *fixedPass) Close() error { return nil }

// shapeSUT keeps the stage, model and request of every query it gets.
type shapeSUT struct {
	fakeSUT
	mu    sync.Mutex
	shape map[int]trace.Arrival
}

func (s *shapeSUT) IssueQuery(ctx context.Context, q Query, done func(Completion)) {
	s.mu.Lock()
	s.shape[q.ID] = trace.Arrival{At: q.Scheduled.Sub(s.clock.base), Stage: q.Stage, Model: q.Model, Request: q.Request}
	s.mu.Unlock()
	s.fakeSUT.IssueQuery(ctx, q, done)
}

// A shaped Server run issues each arrival at its offset (the start is
// the clock's base on a virtual clock) and hands the SUT its stage, model
// and request.
func TestShapedRunIssuesTheShape(t *testing.T) {
	req := &trace.Request{InputTokens: 7, OutputTokens: 2}
	shape := fixedShape{{At: 0}, {At: time.Millisecond, Stage: 1, Model: 2}, {At: 50 * time.Millisecond, Stage: 1, Request: req}}
	clk := newFakeClock()
	sut := &shapeSUT{fakeSUT: fakeSUT{clock: clk, latency: constLatency(time.Millisecond)}, shape: map[int]trace.Arrival{}}
	s := testSettings(t, RulesetLoadGen6, trace.Server)
	s.Shape = shape
	r, err := NewRun(s, sut, &fakeQSL{total: 1000, perf: 256}, WithClock(clk), quiet)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Execute(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if res.SamplesIssued != 3 {
		t.Fatalf("issued %d samples, want the shape's 3", res.SamplesIssued)
	}
	for i, a := range shape {
		if got := sut.shape[i]; got != a {
			t.Errorf("query %d: the SUT got %+v, want %+v", i, got, a)
		}
	}
}
