package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
)

type tokenCounter struct {
	loadgen.Observer
	output int
}

func (c *tokenCounter) Tokens(_, output, _ int, _, _ time.Duration, _ []time.Duration) {
	c.output += output
}

// A search trial's early-verdict wrapper passes token measurements on to
// the live metrics it wraps, and drops them when that observer has none.
func TestStopperForwardsTokens(t *testing.T) {
	c := &tokenCounter{}
	var o loadgen.Observer = &stopper{next: c}
	to, ok := o.(loadgen.TokenObserver)
	if !ok {
		t.Fatal("the trial's observer hides the token hook")
	}
	to.Tokens(0, 7, 3, time.Millisecond, time.Millisecond, nil)
	if c.output != 7 {
		t.Errorf("forwarded %d output tokens, want 7", c.output)
	}
	(&stopper{}).Tokens(0, 7, 3, 0, 0, nil) // no next observer: nothing to do, no panic
}

// With token latencies a trial's early verdict counts samples over the
// TTFT and TPOT bounds, each on its own, and ignores query latency; a
// one-token sample (no TPOT) is never over the TPOT bound.
func TestStopperJudgesTokens(t *testing.T) {
	cancelled := false
	s := &stopper{cancel: func() { cancelled = true }, tokens: true, ttftBound: 100 * time.Millisecond, tpotBound: 10 * time.Millisecond,
		planned: 100, allowed: 2}
	s.armed.Store(true)
	for i := range 5 {
		s.Completed(i, 1, time.Hour, nil) // query latency: no verdict
	}
	s.Tokens(0, 1, 1, time.Millisecond, time.Hour, nil) // one token: no TPOT
	for i := range 2 {
		s.Tokens(i, 5, 1, time.Second, time.Millisecond, nil) // over TTFT
		s.Tokens(i, 5, 1, time.Millisecond, time.Second, nil) // over TPOT
	}
	if cancelled || s.fired.Load() {
		t.Fatalf("stopped with 2 samples over each bound, 2 allowed: %s", s.reason())
	}
	s.Tokens(3, 5, 1, time.Millisecond, 11*time.Millisecond, nil)
	if !cancelled || !strings.Contains(s.reason(), "TPOT") {
		t.Errorf("3 samples over the TPOT bound, 2 allowed: cancelled %v, reason %q", cancelled, s.reason())
	}
}
