package sut

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
)

// fakeGenClient keeps every request and its handler; the test answers them
// with times of its choosing (a fake clock: nothing here reads the real one).
type fakeGenClient struct {
	mu    sync.Mutex
	reqs  []genai.Request
	hs    []genai.Handler
	ctxOK []bool
}

func (f *fakeGenClient) Generate(ctx context.Context, req *genai.Request, h genai.Handler) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reqs = append(f.reqs, *req)
	f.hs = append(f.hs, h)
	f.ctxOK = append(f.ctxOK, ctx != nil)
}

func (f *fakeGenClient) Close() error { return nil }

type promptList []genai.Prompt

func (p promptList) Prompt(i int) *genai.Prompt {
	if i < 0 || i >= len(p) {
		return nil
	}
	return &p[i]
}

// completions collects the engine's view, copying the gaps as the engine
// must (the SUT reuses the slice once done returns).
type completions struct{ got []loadgen.Completion }

func (c *completions) done(x loadgen.Completion) {
	x.Gaps = slices.Clone(x.Gaps)
	c.got = append(c.got, x)
}

func testPrompts() promptList {
	ps := make(promptList, 6)
	for i := range ps {
		ps[i] = genai.Prompt{Text: "prompt", InputTokens: 10 + i, MaxTokens: 4}
	}
	return ps
}

// Each sample becomes one request of the run's model, id the sample's
// sequence number, prompt its QSL index's; its completion carries exactly
// the times and counts its answer had.
func TestGenerativeTimesTokens(t *testing.T) {
	f := &fakeGenClient{}
	ps := testPrompts()
	g := NewGenerative(f, ps, GenerativeOptions{Model: "llm", Version: "2", Stream: true})
	var c completions
	q := loadgen.Query{ID: 4, FirstSample: 10, Samples: []int{3, 5}}
	g.IssueQuery(t.Context(), q, c.done)
	if len(f.reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(f.reqs))
	}
	for j, r := range f.reqs {
		if r.Model != "llm" || r.Version != "2" || !r.Stream || r.ID != uint64(10+j) || r.Prompt != &ps[q.Samples[j]] {
			t.Errorf("request %d: %+v, want model llm version 2, streamed, id %d, prompt %d", j, r, 10+j, q.Samples[j])
		}
	}
	t0 := time.Unix(1000, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	// Sample 1 answers first, with the server's count (within max_tokens
	// 4: believed).
	f.hs[1].Tokens(ms(50), 3)
	f.hs[1].End(ms(50), genai.Usage{OutputTokens: 4}, nil)
	f.hs[0].Tokens(ms(100), 1)
	f.hs[0].Tokens(ms(130), 1)
	f.hs[0].Tokens(ms(150), 2)
	f.hs[0].End(ms(160), genai.Usage{}, nil)
	want := []loadgen.Completion{
		{Query: 4, First: 1, Count: 1, At: ms(50), FirstToken: ms(50), Tokens: 4, TokensFromServer: true, InputTokens: 15},
		{Query: 4, First: 0, Count: 1, At: ms(160), FirstToken: ms(100), Tokens: 4, InputTokens: 13,
			Gaps: []time.Duration{30 * time.Millisecond, 20 * time.Millisecond}},
	}
	checkCompletions(t, c.got, want)
}

func checkCompletions(t *testing.T, got, want []loadgen.Completion) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d completions, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Query != w.Query || g.First != w.First || g.Count != w.Count || !g.At.Equal(w.At) || !g.FirstToken.Equal(w.FirstToken) ||
			g.Tokens != w.Tokens || g.TokensFromServer != w.TokensFromServer || g.InputTokens != w.InputTokens ||
			!slices.Equal(g.Gaps, w.Gaps) || !errors.Is(g.Err, w.Err) || (g.Err == nil) != (w.Err == nil) {
			t.Errorf("completion %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

// A pooled sample starts clean: the next query's sample has none of the
// last one's gaps, tokens or first token; a failure is reported as such,
// with whatever tokens arrived before it.
func TestGenerativeReuseAndFailure(t *testing.T) {
	f := &fakeGenClient{}
	g := NewGenerative(f, testPrompts(), GenerativeOptions{Model: "llm", Stream: true})
	var c completions
	t0 := time.Unix(2000, 0)
	for i := range 3 {
		g.IssueQuery(t.Context(), loadgen.Query{ID: i, FirstSample: i, Samples: []int{0}}, c.done)
		h := f.hs[i]
		switch i {
		case 0:
			h.Tokens(t0, 1)
			h.Tokens(t0.Add(time.Second), 1)
			h.Tokens(t0.Add(3*time.Second), 1)
			h.End(t0.Add(3*time.Second), genai.Usage{}, nil)
		case 1:
			h.Tokens(t0.Add(10*time.Second), 1)
			h.End(t0.Add(10*time.Second), genai.Usage{}, nil)
		case 2:
			h.Tokens(t0.Add(20*time.Second), 1)
			h.End(t0.Add(21*time.Second), genai.Usage{}, genai.ErrStream)
		}
	}
	want := []loadgen.Completion{
		{Query: 0, Count: 1, At: t0.Add(3 * time.Second), FirstToken: t0, Tokens: 3, InputTokens: 10, Gaps: []time.Duration{time.Second, 2 * time.Second}},
		{Query: 1, Count: 1, At: t0.Add(10 * time.Second), FirstToken: t0.Add(10 * time.Second), Tokens: 1, InputTokens: 10},
		{Query: 2, Count: 1, At: t0.Add(21 * time.Second), FirstToken: t0.Add(20 * time.Second), Tokens: 1, InputTokens: 10, Err: genai.ErrStream},
	}
	checkCompletions(t, c.got, want)
}

// A QSL index with no prompt fails its sample with a named error instead of
// a panic on the issuer's goroutine; the query's other samples still go.
func TestGenerativeMissingPrompt(t *testing.T) {
	f := &fakeGenClient{}
	g := NewGenerative(f, testPrompts(), GenerativeOptions{Model: "llm"})
	var c completions
	g.IssueQuery(t.Context(), loadgen.Query{ID: 0, Samples: []int{99, 1}}, c.done)
	if len(c.got) != 1 || c.got[0].Err == nil || c.got[0].First != 0 {
		t.Fatalf("completions %+v, want sample 0 failed", c.got)
	}
	if len(f.reqs) != 1 || f.reqs[0].ID != 1 {
		t.Fatalf("requests %+v, want only sample 1's", f.reqs)
	}
}

// connectingGenClient is a fake client that opens connections ahead.
type connectingGenClient struct {
	fakeGenClient
	connected, closed bool
}

func (c *connectingGenClient) Connect(context.Context) error { c.connected = true; return nil }
func (c *connectingGenClient) Close() error                  { c.closed = true; return nil }

// Open with a generative config drives the prompts' SUT, preconnects
// through the client's Connect, and closes the client it owns.
func TestOpenGenerative(t *testing.T) {
	fc := &connectingGenClient{}
	a, err := Open(Config{Generative: &GenerativeConfig{Client: fc, Prompts: testPrompts(), Options: GenerativeOptions{Model: "llm", Name: "gen"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := a.SUT().(*Generative); !ok || a.SUT().Name() != "gen" {
		t.Fatalf("SUT %T %q, want the Generative named gen", a.SUT(), a.SUT().Name())
	}
	if err := a.Preconnect(t.Context(), 4); err != nil || !fc.connected {
		t.Fatalf("Preconnect: %v, connected %v", err, fc.connected)
	}
	if a.Layout() != nil {
		t.Error("a generative run has tensor outputs")
	}
	if err := a.Close(); err != nil || !fc.closed {
		t.Fatalf("Close: %v, client closed %v", err, fc.closed)
	}
	if _, err := Open(Config{Generative: &GenerativeConfig{Client: fc}}); err == nil {
		t.Error("a generative SUT without prompts opened")
	}
}

// A request timeout reaches the client as the request's deadline, and is
// released when the sample ends.
func TestGenerativeTimeout(t *testing.T) {
	f := &deadlineGenClient{}
	g := NewGenerative(f, testPrompts(), GenerativeOptions{Model: "llm", Timeout: time.Hour})
	var c completions
	g.IssueQuery(t.Context(), loadgen.Query{ID: 0, Samples: []int{0}}, c.done)
	if !f.hasDeadline {
		t.Fatal("the request's context has no deadline")
	}
	f.h.End(time.Unix(1, 0), genai.Usage{}, nil)
	if f.ctx.Err() == nil {
		t.Error("the request's context is still live after its sample ended")
	}
}

type deadlineGenClient struct {
	ctx         context.Context
	h           genai.Handler
	hasDeadline bool
}

func (d *deadlineGenClient) Generate(ctx context.Context, _ *genai.Request, h genai.Handler) {
	_, d.hasDeadline = ctx.Deadline()
	d.ctx, d.h = ctx, h
}
func (d *deadlineGenClient) Close() error { return nil }
