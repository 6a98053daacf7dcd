package sut

import (
	"context"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// promptsSeen keeps a copy of each request's prompt as it was sent.
type promptsSeen struct {
	fakeGenClient
	prompts []genai.Prompt
}

func (p *promptsSeen) Generate(ctx context.Context, req *genai.Request, h genai.Handler) {
	p.mu.Lock()
	p.prompts = append(p.prompts, *req.Prompt)
	p.mu.Unlock()
	p.fakeGenClient.Generate(ctx, req, h)
}

// A query a trace file describes gets a prompt synthesised at its length,
// its blocks from its hash ids and max_tokens its output length (from the
// run's seed and the sample's sequence number), not its QSL sample's;
// its completion counts that length as its input. Without a request, the
// QSL sample's prompt, as before.
func TestGenerativeTraceRequest(t *testing.T) {
	f := &promptsSeen{}
	ps := testPrompts()
	g := NewGenerative(f, ps, GenerativeOptions{Model: "llm", Seed: 9})
	var c completions
	r := &trace.Request{InputTokens: 700, OutputTokens: 21, HashIDs: []int{3, 4}}
	g.IssueQuery(t.Context(), loadgen.Query{ID: 6, FirstSample: 6, Samples: []int{1}, Request: r}, c.done)
	g.IssueQuery(t.Context(), loadgen.Query{ID: 7, FirstSample: 7, Samples: []int{2}}, c.done)
	if len(f.prompts) != 2 {
		t.Fatalf("%d requests, want 2", len(f.prompts))
	}
	want := genai.TracePrompt(9, 6, 700, 21, []int{3, 4})
	if got := f.prompts[0]; got.Text != want.Text || got.InputTokens != 700 || got.MaxTokens != 21 {
		t.Errorf("the trace request's prompt: %d tokens (counted %d), max_tokens %d; want genai.TracePrompt's 700, 21",
			got.InputTokens, genai.CountTokens(got.Text), got.MaxTokens)
	}
	if f.reqs[1].Prompt != &ps[2] {
		t.Error("a query without a request did not send its QSL sample's prompt")
	}
	at := time.Unix(1, 0)
	f.hs[0].Tokens(at, 1)
	f.hs[0].End(at, genai.Usage{OutputTokens: 21}, nil)
	if len(c.got) != 1 || c.got[0].InputTokens != 700 || c.got[0].Tokens != 21 || !c.got[0].TokensFromServer {
		t.Errorf("completion %+v: want 700 input tokens, 21 believed (max_tokens 21)", c.got)
	}
}
