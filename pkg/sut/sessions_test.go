package sut

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
)

// answer ends request i of f with text as its one token-bearing response
// (the handler takes content: the request asked for it), or with err.
func answer(f *fakeGenClient, i int, text string, err error) {
	h := f.hs[i]
	if ch, ok := h.(genai.ContentHandler); ok && f.reqs[i].Capture {
		ch.Content([]byte(text), nil)
	}
	h.Tokens(time.Unix(1, 0), 1)
	h.End(time.Unix(2, 0), genai.Usage{}, err)
}

// Turn k's prompt is the session's messages so far, the answers as the
// server gave them, then the new user message; the engine gets no
// captured data it did not ask for; the last turn frees the history.
func TestGenerativeSessionHistory(t *testing.T) {
	f := &fakeGenClient{}
	ps := promptList{{Text: "hello", InputTokens: 1, MaxTokens: 3}, {Messages: []genai.Message{{Role: "user", Content: "a b"}}, InputTokens: 2, MaxTokens: 7}}
	g := NewGenerative(f, ps, GenerativeOptions{Model: "llm", Stream: true})
	var c completions
	g.IssueQuery(t.Context(), loadgen.Query{ID: 0, Samples: []int{0}, Session: 4, Turn: 1, Turns: 2}, c.done)
	answer(f, 0, "hi there", nil)
	g.IssueQuery(t.Context(), loadgen.Query{ID: 1, FirstSample: 1, Samples: []int{1}, Session: 4, Turn: 2, Turns: 2}, c.done)
	want := []genai.Message{{Role: "user", Content: "hello"}, {Role: "assistant", Content: "hi there"}, {Role: "user", Content: "a b"}}
	p := f.reqs[1].Prompt
	if len(p.Messages) != 3 || p.Messages[0] != want[0] || p.Messages[1] != want[1] || p.Messages[2] != want[2] || p.MaxTokens != 7 || p.InputTokens != 5 {
		t.Fatalf("turn 2 sent %+v, want %+v, max_tokens 7, 5 tokens", p, want)
	}
	answer(f, 1, "bye", nil)
	if len(c.got) != 2 || c.got[0].Data != nil || c.got[1].Err != nil {
		t.Fatalf("completions %+v", c.got)
	}
	if n := g.sessions.active(); n != 0 {
		t.Errorf("%d sessions held after the last turn", n)
	}
}

// A failed turn frees its session's history; a turn whose history is gone
// (over the bound) fails, named, rather than going without it.
func TestGenerativeSessionFailureAndBound(t *testing.T) {
	f := &fakeGenClient{}
	g := NewGenerative(f, promptList{{Text: "x", InputTokens: 1, MaxTokens: 3}}, GenerativeOptions{Model: "llm"})
	var c completions
	g.IssueQuery(t.Context(), loadgen.Query{ID: 0, Samples: []int{0}, Session: 1, Turn: 1, Turns: 3}, c.done)
	answer(f, 0, "", errors.New("reset"))
	if n := g.sessions.active(); n != 0 {
		t.Errorf("%d sessions held after a failed turn", n)
	}
	g.IssueQuery(t.Context(), loadgen.Query{ID: 1, Samples: []int{0}, Session: 2, Turn: 1, Turns: 3}, c.done)
	answer(f, 1, strings.Repeat("w", MaxSessionHistoryBytes), nil)
	g.IssueQuery(t.Context(), loadgen.Query{ID: 2, Samples: []int{0}, Session: 2, Turn: 2, Turns: 3}, c.done)
	if len(f.reqs) != 2 {
		t.Fatalf("%d requests sent, want the turn over the bound not sent", len(f.reqs))
	}
	if last := c.got[len(c.got)-1]; !errors.Is(last.Err, ErrSessionHistory) || last.Query != 2 {
		t.Fatalf("got %+v, want query 2 failed with ErrSessionHistory", last)
	}
}

// With a data set, the user messages are the conversation's.
func TestGenerativeSessionConversations(t *testing.T) {
	conv, err := genai.ReadConversations(strings.NewReader(`{"messages":[{"role":"user","content":"first"},{"role":"user","content":"second"}]}`), "c")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeGenClient{}
	g := NewGenerative(f, promptList{{Text: "sample", InputTokens: 1, MaxTokens: 3}}, GenerativeOptions{Model: "llm", Conversations: conv})
	var c completions
	g.IssueQuery(t.Context(), loadgen.Query{ID: 0, Samples: []int{0}, Session: 5, Turn: 1, Turns: 2}, c.done)
	answer(f, 0, "ok", nil)
	g.IssueQuery(t.Context(), loadgen.Query{ID: 1, Samples: []int{0}, Session: 5, Turn: 2, Turns: 2}, c.done)
	if m := f.reqs[1].Prompt.Messages; len(m) != 3 || m[0].Content != "first" || m[2].Content != "second" {
		t.Fatalf("turn 2 sent %+v", m)
	}
	g.IssueQuery(t.Context(), loadgen.Query{ID: 2, Samples: []int{0}, Session: 5, Turn: 3, Turns: 3}, c.done)
	if last := c.got[len(c.got)-1]; !errors.Is(last.Err, ErrSessionHistory) {
		t.Fatalf("a turn past the conversation: %+v", last)
	}
}
