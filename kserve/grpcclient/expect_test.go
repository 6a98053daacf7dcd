package grpcclient

import (
	"errors"
	"testing"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/server/servertest"
)

// TestInferPreparedDiscardChecksTheAnswer: a request prepared with an Expect
// fails with ErrBadResponse (not as the server's error: grpc-go would make
// a codec's error an INTERNAL status) when the server's OK is not the
// model's answer, at the request's batch size.
func TestInferPreparedDiscardChecksTheAnswer(t *testing.T) {
	m, _, addr := servertest.Start(t)
	c, err := New(addr, WithConns(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := servertest.Expect()
	for _, a := range servertest.Answers {
		for _, batch := range []int64{1, 3} {
			m.Set(a.Answer)
			req := servertest.Request(batch)
			p, err := c.PrepareInferExpect(req, want)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.InferPreparedDiscardAt(t.Context(), p)
			if a.Bad != errors.Is(err, kserve.ErrBadResponse) || !a.Bad && err != nil {
				t.Errorf("%s, batch %d: %v", a.Name, batch, err)
			}
			var ke *kserve.Error
			if errors.As(err, &ke) {
				t.Errorf("%s, batch %d: %v reads as the server's error", a.Name, batch, err)
			}
			if p, err = c.PrepareInfer(req); err != nil {
				t.Fatal(err)
			}
			if err := c.InferPreparedDiscard(t.Context(), p); err != nil {
				t.Errorf("%s, batch %d, unchecked: %v", a.Name, batch, err)
			}
		}
	}
}
