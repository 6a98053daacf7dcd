package httpclient

import (
	"errors"
	"testing"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/server/servertest"
)

// TestInferPreparedCheckChecksTheAnswer: a request prepared with an Expect
// fails with ErrBadResponse when the server's 200 is not the model's answer
// (no outputs, another output, datatype or shape, another model), in the
// binary extension and in JSON, and at the request's batch size.
func TestInferPreparedCheckChecksTheAnswer(t *testing.T) {
	m, addr, _ := servertest.Start(t)
	want := servertest.Expect()
	for _, binary := range []bool{true, false} {
		c, err := New("http://"+addr, Binary(binary))
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range servertest.Answers {
			for _, batch := range []int64{1, 3} {
				m.Set(a.Answer)
				req := servertest.Request(batch)
				p, err := c.PrepareInferExpect(req, want)
				if err != nil {
					t.Fatal(err)
				}
				err = c.InferPreparedCheck(t.Context(), p)
				if a.Bad != errors.Is(err, kserve.ErrBadResponse) || !a.Bad && err != nil {
					t.Errorf("binary %v, %s, batch %d: %v", binary, a.Name, batch, err)
				}
				// Without an Expect, only the framing is checked.
				if p, err = c.PrepareInfer(req); err != nil {
					t.Fatal(err)
				}
				if err := c.InferPreparedCheck(t.Context(), p); err != nil {
					t.Errorf("binary %v, %s, batch %d, unchecked: %v", binary, a.Name, batch, err)
				}
			}
		}
		c.Close()
	}
}
