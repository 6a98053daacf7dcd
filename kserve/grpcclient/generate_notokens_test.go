package grpcclient_test

import (
	"errors"
	"testing"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/grpcclient"
	"github.com/netloadgen/netloadgen/kserve/inferencepb"
	"github.com/netloadgen/netloadgen/pkg/genai"
)

// TestGeneratorNoOutputTokensFails (issue 26): a stream whose only
// response is the final flag with no output token fails its request as
// malformed, "no output tokens", rather than completing with 0 tokens.
func TestGeneratorNoOutputTokensFails(t *testing.T) {
	_, addr := startLLM(t, func(req *inferencepb.ModelInferRequest, send func(*inferencepb.ModelStreamInferResponse), _ func([]byte)) error {
		send(emptyFinal(req.GetId()))
		return nil
	})
	g := newGenerator(t, addr, 1, grpcclient.GenerateOptions{})
	r := newRecorder()
	g.Generate(t.Context(), &genai.Request{Model: "llm", Prompt: prompt("p", 4), Stream: true, ID: 1}, r)
	r.wait(t)
	if !errors.Is(r.err, genai.ErrNoOutputTokens) || !errors.Is(r.err, kserve.ErrMalformed) {
		t.Errorf("End error %v, tokens %v: want genai.ErrNoOutputTokens and kserve.ErrMalformed", r.err, r.tokens)
	}
}
