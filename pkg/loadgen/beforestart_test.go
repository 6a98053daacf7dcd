package loadgen

import (
	"context"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// WithBeforeStart's function runs once, after every warm-up query and
// before any timed one, before the run's clock starts.
func TestBeforeStartRunsBetweenWarmupAndTimedRun(t *testing.T) {
	s := testSettings(t, RulesetLoadGen6, trace.Server)
	s.Engine.WarmupMs = 200
	clk := newFakeClock()
	sut := &fakeSUT{clock: clk, inline: true, latency: func(int) time.Duration { return time.Millisecond }}
	calls, warmSeen, timedSeen := 0, 0, 0
	var r *Run
	hook := func(context.Context) {
		calls++
		for _, q := range sut.issued() {
			if q.ID >= r.Trace().Len() {
				warmSeen++
			} else {
				timedSeen++
			}
		}
		if p := r.Progress(); p.Started {
			t.Error("the clock started before the hook")
		}
	}
	r, err := NewRun(s, sut, &fakeQSL{total: 1000, perf: 256}, WithClock(clk), quiet, WithBeforeStart(hook))
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 || warmSeen == 0 || timedSeen != 0 {
		t.Errorf("hook called %d times, seeing %d warm-up and %d timed queries; want once, after the warm-up, before the run", calls, warmSeen, timedSeen)
	}
	if res.QueriesIssued == 0 {
		t.Error("no timed queries")
	}
}

// Every hook runs once, in order, after the QSL load and before any query
// is issued.
func TestBeforeStartAfterQSLLoad(t *testing.T) {
	s := testSettings(t, RulesetLoadGen6, trace.Server)
	q := &fakeQSL{total: 1000, perf: 256}
	sut := &shardSUT{latency: seqLatency}
	calls := 0
	var order []int
	second := func(context.Context) { order = append(order, 2) }
	hook := func(context.Context) {
		order = append(order, 1)
		calls++
		if q.loaded == nil {
			t.Error("the hook was called before the QSL was loaded")
		}
		if n := len(sut.queries()); n != 0 {
			t.Errorf("the hook was called after %d queries", n)
		}
	}
	r, err := NewRun(s, sut, q, WithClock(newFakeClock()), quiet, WithBeforeStart(hook), WithBeforeStart(second))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	if calls != 1 || len(sut.queries()) == 0 {
		t.Fatalf("hook called %d times, %d queries: want once, then the run", calls, len(sut.queries()))
	}
	if len(order) != 2 || order[0] != 1 || order[1] != 2 {
		t.Errorf("hooks called in order %v, want [1 2]", order)
	}
}
