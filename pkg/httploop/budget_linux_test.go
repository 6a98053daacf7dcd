package httploop

import (
	"errors"
	"testing"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/httpclient"
)

// Loops given one Budget (the issuers of a run) reserve their answers from
// it: what another loop holds leaves this one less, and an answer past
// what is left fails too large, as it would on one loop.
func TestLoopsShareTheGivenBudget(t *testing.T) {
	s := startServer(t, always(okResponse("")))
	b := httpclient.NewBudget(1 << 20)
	var res results
	l := newLoop(t, Config{Addr: s.addr(), MaxConns: 1, Budget: b}, &res)
	if l.ResponseBudget() != b {
		t.Fatal("the loop does not use the budget it was given")
	}
	if !b.Reserve(b.Limit() - 4) { // another loop's answers, held
		t.Fatal("reserve")
	}
	l.Send(testRequest, 1)
	pollFor(t, l, &res, 1)
	if err := res.errs[1]; !errors.Is(err, kserve.ErrTooLarge) {
		t.Errorf("an answer past what the other loop left: %v, want %v", err, kserve.ErrTooLarge)
	}
	b.Release(b.Limit() - 4)
	l.Send(testRequest, 2)
	pollFor(t, l, &res, 2)
	if err := res.errs[2]; err != nil || b.Held() != 0 {
		t.Errorf("with the budget free: %v, %d bytes still held", err, b.Held())
	}
}
