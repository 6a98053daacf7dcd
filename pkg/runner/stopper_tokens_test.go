package runner

import (
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
