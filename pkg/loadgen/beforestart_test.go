package loadgen

import (
	"context"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// The hook runs once, after the QSL load and before any query is issued.
func TestBeforeStart(t *testing.T) {
	s := testSettings(t, RulesetLoadGen6, trace.Server)
	q := &fakeQSL{total: 1000, perf: 256}
	sut := &shardSUT{latency: seqLatency}
	calls := 0
	hook := func(context.Context) {
		calls++
		if q.loaded == nil {
			t.Error("the hook was called before the QSL was loaded")
		}
		if n := len(sut.queries()); n != 0 {
			t.Errorf("the hook was called after %d queries", n)
		}
	}
	r, err := NewRun(s, sut, q, WithClock(newFakeClock()), quiet, WithBeforeStart(hook))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	if calls != 1 || len(sut.queries()) == 0 {
		t.Fatalf("hook called %d times, %d queries: want once, then the run", calls, len(sut.queries()))
	}
}
