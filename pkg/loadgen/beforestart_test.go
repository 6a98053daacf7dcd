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
