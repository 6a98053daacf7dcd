package grpcloop

import (
	"errors"
	"testing"

	"github.com/netloadgen/netloadgen/kserve/genwire"
	"github.com/netloadgen/netloadgen/kserve/inferencepb"
	"github.com/netloadgen/netloadgen/pkg/genai"
	outcomes "github.com/netloadgen/netloadgen/pkg/outcome"
)

// TestGeneratorNoOutputTokensFails (issue 26): a stream whose only
// response is the final flag with no output token fails its request as
// malformed, "no output tokens", rather than completing with 0 tokens;
// so does a one-response model's answer without output.
func TestGeneratorNoOutputTokensFails(t *testing.T) {
	for _, one := range []bool{false, true} {
		_, addr := startLLM(t, func(req *inferencepb.ModelInferRequest, send func(*inferencepb.ModelStreamInferResponse), _ func([]byte)) error {
			send(emptyFinal(req.GetId()))
			return nil
		})
		g := newGen(t, addr, 1, genwire.Options{OneResponse: one})
		r := newRecorder()
		g.Generate(t.Context(), &genai.Request{Model: "llm", Prompt: prompt("p", 4), ID: 1}, r)
		r.wait(t)
		if o, _ := outcomes.Classify(r.err); o != outcomes.Malformed || !errors.Is(r.err, genai.ErrNoOutputTokens) {
			t.Errorf("one response %v: End error %v (outcome %s), tokens %v: want malformed, genai.ErrNoOutputTokens", one, r.err, o, r.tokens)
		}
	}
}
