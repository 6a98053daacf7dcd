package genclient

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/outcome"
)

func prompt(text string, max int) *genai.Prompt {
	return &genai.Prompt{Text: text, InputTokens: len(strings.Fields(text)), MaxTokens: max}
}

// TestEveryAPIAnswersAndCounts: each API, streamed and not, goes to its
// path with its body, and its answer's token responses, counts and usage
// reach the handler.
func TestEveryAPIAnswersAndCounts(t *testing.T) {
	const n = 7
	cases := []struct {
		api       genai.API
		stream    bool
		path      string
		calls     int // Tokens calls
		tokens    int // their n summed
		usageOut  int
		usageIn   int
		bodyCheck map[string]any
	}{
		{genai.APIGenerateStream, true, "/v2/models/m/versions/2/generate_stream", n, n, n, 0,
			map[string]any{"text_input": "a b c", "max_tokens": 7.0, "stream": true}},
		{genai.APIGenerate, false, "/v2/models/m/versions/2/generate", 1, n, n, 0,
			map[string]any{"text_input": "a b c", "max_tokens": 7.0, "stream": false}},
		{genai.APIOpenAIChat, true, "/v1/chat/completions", n, n, n, 3,
			map[string]any{"model": "m", "max_tokens": 7.0, "stream": true, "stream_options": map[string]any{"include_usage": true}}},
		{genai.APIOpenAIChat, false, "/v1/chat/completions", 1, 1, n, 3,
			map[string]any{"model": "m", "stream": false, "stream_options": nil}},
		{genai.APIOpenAICompletions, true, "/v1/completions", n, n, n, 3,
			map[string]any{"model": "m", "prompt": "a b c", "stream": true}},
		{genai.APIOpenAICompletions, false, "/v1/completions", 1, 1, n, 3,
			map[string]any{"model": "m", "prompt": "a b c", "stream": false}},
	}
	for _, tc := range cases {
		t.Run(string(tc.api)+map[bool]string{true: "/stream", false: "/once"}[tc.stream], func(t *testing.T) {
			f := &fakeLLM{tokens: n}
			c := newClient(t, serve(t, f), tc.api, Options{})
			r := generate(t, c, context.Background(), &genai.Request{Model: "m", Version: "2", Prompt: prompt("a b c", n), Stream: tc.stream, ID: 1})
			if r.err != nil {
				t.Fatalf("End error %v", r.err)
			}
			if len(r.ns) != tc.calls || r.tokens() != tc.tokens {
				t.Errorf("%d Tokens calls of %d tokens in all, want %d of %d", len(r.ns), r.tokens(), tc.calls, tc.tokens)
			}
			if r.usage.OutputTokens != tc.usageOut || r.usage.InputTokens != tc.usageIn {
				t.Errorf("usage %+v, want output %d input %d", r.usage, tc.usageOut, tc.usageIn)
			}
			if f.seen().paths[0] != tc.path {
				t.Errorf("path %q, want %q", f.seen().paths[0], tc.path)
			}
			for k, want := range tc.bodyCheck {
				got, ok := f.seen().bodies[0][k]
				if want == nil && ok || want != nil && !equalJSON(got, want) {
					t.Errorf("body %q = %v, want %v (body %v)", k, got, want, f.seen().bodies[0])
				}
			}
			if tc.api == genai.APIOpenAIChat {
				msgs, _ := f.seen().bodies[0]["messages"].([]any)
				if len(msgs) != 1 || !equalJSON(msgs[0], map[string]any{"role": "user", "content": "a b c"}) {
					t.Errorf("messages %v, want the prompt as one user message", msgs)
				}
			}
			for i := 1; i < len(r.ats); i++ {
				if r.ats[i].Before(r.ats[i-1]) {
					t.Errorf("response %d arrived at %v, before response %d", i, r.ats[i], i-1)
				}
			}
			if len(r.ats) > 0 && r.endAt.Before(r.ats[len(r.ats)-1]) {
				t.Errorf("the end at %v is before the last response", r.endAt)
			}
		})
	}
}

func equalJSON(a, b any) bool {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		if len(am) != len(bm) {
			return false
		}
		for k := range am {
			if !equalJSON(am[k], bm[k]) {
				return false
			}
		}
		return true
	}
	return a == b
}

// TestPathPrefixAndChatMessages: an OpenAI target under a prefix (KServe's
// front end) gets /prefix/v1/..., and a chat prompt goes as its messages.
func TestPathPrefixAndChatMessages(t *testing.T) {
	f := &fakeLLM{tokens: 2}
	c := newClient(t, serve(t, f)+"/openai/", genai.APIOpenAIChat, Options{IgnoreEOS: true})
	p := &genai.Prompt{Messages: []genai.Message{{Role: "system", Content: "s"}, {Role: "user", Content: "u"}}, MaxTokens: 2}
	r := generate(t, c, context.Background(), &genai.Request{Model: "m", Prompt: p, Stream: true})
	if r.err != nil || r.tokens() != 2 {
		t.Fatalf("End %v after %d tokens", r.err, r.tokens())
	}
	if f.seen().paths[0] != "/openai/v1/chat/completions" {
		t.Errorf("path %q, want /openai/v1/chat/completions", f.seen().paths[0])
	}
	if msgs, _ := f.seen().bodies[0]["messages"].([]any); len(msgs) != 2 {
		t.Errorf("messages %v, want the prompt's two", msgs)
	}
	if f.seen().bodies[0]["ignore_eos"] != true || f.seen().bodies[0]["min_tokens"] != 2.0 {
		t.Errorf("IgnoreEOS: body %v, want ignore_eos true and min_tokens 2", f.seen().bodies[0])
	}
}

// TestStreamOptionsRefusedThenLeftOut: a server that refuses
// stream_options (400 naming it) gets the request again without, once, and
// every later request without; the sample does not fail.
func TestStreamOptionsRefusedThenLeftOut(t *testing.T) {
	f := &fakeLLM{tokens: 3, refuseStreamOptions: true}
	c := newClient(t, serve(t, f), genai.APIOpenAICompletions, Options{})
	for i := range 2 {
		r := generate(t, c, context.Background(), &genai.Request{Model: "m", Prompt: prompt("x", 3), Stream: true, ID: uint64(i)})
		if r.err != nil || r.tokens() != 3 {
			t.Fatalf("request %d: End %v after %d tokens", i, r.err, r.tokens())
		}
		if r.usage.OutputTokens != 0 {
			t.Errorf("request %d: usage %+v from a server that gives none", i, r.usage)
		}
	}
	if len(f.seen().bodies) != 3 {
		t.Fatalf("the server saw %d requests, want 3 (one refused, its resend, the next)", len(f.seen().bodies))
	}
	for i, b := range f.seen().bodies {
		if _, has := b["stream_options"]; has != (i == 0) {
			t.Errorf("request %d has stream_options: %v", i, has)
		}
	}
}

// TestServerErrorsAreKServeErrors: an error status is a *kserve.Error with
// the server's message, classified "error" (or "timeout" for a 504).
func TestServerErrorsAreKServeErrors(t *testing.T) {
	cases := []struct {
		status  int
		body    string
		is      error
		outcome string
		msg     string
	}{
		{404, `{"error":"Request for unknown model: 'm' is not found"}`, kserve.ErrNotFound, "error", "unknown model"},
		{400, `{"object":"error","message":"max_tokens is too large","type":"BadRequestError","code":400}`, kserve.ErrInvalidArgument, "error", "max_tokens is too large"},
		{503, `overloaded`, kserve.ErrUnavailable, "error", "overloaded"},
		{504, ``, nil, "timeout", "Gateway Timeout"},
	}
	for _, tc := range cases {
		t.Run(tc.msg, func(t *testing.T) {
			base := serve(t, statusHandler(tc.status, tc.body))
			c := newClient(t, base, genai.APIOpenAIChat, Options{})
			r := generate(t, c, context.Background(), &genai.Request{Model: "m", Prompt: prompt("x", 3), Stream: true})
			ke, ok := errors.AsType[*kserve.Error](r.err)
			if !ok || ke.HTTPStatus != tc.status || !strings.Contains(ke.Message, tc.msg) {
				t.Fatalf("End error %v, want HTTP %d saying %q", r.err, tc.status, tc.msg)
			}
			if tc.is != nil && !errors.Is(r.err, tc.is) {
				t.Errorf("error %v does not match %v", r.err, tc.is)
			}
			if o, _ := outcome.Classify(r.err); o.String() != tc.outcome {
				t.Errorf("outcome %s, want %s", o, tc.outcome)
			}
		})
	}
}

// TestBadRequestsFailWithoutSending: no prompt, or no model for Triton,
// ends the request with an error naming it.
func TestBadRequestsFailWithoutSending(t *testing.T) {
	f := &fakeLLM{tokens: 1}
	base := serve(t, f)
	c := newClient(t, base, genai.APIGenerateStream, Options{})
	if r := generate(t, c, context.Background(), &genai.Request{Model: "m", ID: 4}); r.err == nil || !strings.Contains(r.err.Error(), "no prompt") {
		t.Errorf("no prompt: %v", r.err)
	}
	if r := generate(t, c, context.Background(), &genai.Request{Prompt: prompt("x", 1)}); r.err == nil || !strings.Contains(r.err.Error(), "no model") {
		t.Errorf("no model: %v", r.err)
	}
	if len(f.seen().paths) != 0 {
		t.Errorf("the server saw %d requests", len(f.seen().paths))
	}
	if _, err := New(base, genai.APIKServeStream, Options{}); err == nil || !strings.Contains(err.Error(), "not an HTTP API") {
		t.Errorf("New with kserve-stream: %v", err)
	}
}

// TestOpenAIRequestsCarryTheirID: every OpenAI request carries
// X-Request-Id, the client's prefix then the request's ID (so the server's
// record names the sample), and two clients' prefixes differ (two runs
// against one server never send the same id); Triton's generate requests
// carry none (Triton takes no such header).
func TestOpenAIRequestsCarryTheirID(t *testing.T) {
	f := &fakeLLM{tokens: 1}
	base := serve(t, f)
	c1 := newClient(t, base, genai.APIOpenAIChat, Options{})
	c2 := newClient(t, base, genai.APIOpenAICompletions, Options{})
	c3 := newClient(t, base, genai.APIGenerateStream, Options{})
	generate(t, c1, context.Background(), &genai.Request{Model: "m", Prompt: prompt("a", 1), Stream: true, ID: 41})
	generate(t, c2, context.Background(), &genai.Request{Model: "m", Prompt: prompt("a", 1), Stream: true, ID: 41})
	generate(t, c3, context.Background(), &genai.Request{Model: "m", Prompt: prompt("a", 1), Stream: true, ID: 41})
	hs := f.seen().hdrs
	id1, id2 := hs[0].Get(HeaderRequestID), hs[1].Get(HeaderRequestID)
	if id1 != c1.RequestID(41) || id2 != c2.RequestID(41) || !strings.HasPrefix(id1, "nlg-") || !strings.HasSuffix(id1, "-41") {
		t.Errorf("X-Request-Id %q and %q, want %q and %q (nlg-<hex>-41)", id1, id2, c1.RequestID(41), c2.RequestID(41))
	}
	if id1 == id2 {
		t.Errorf("two clients sent the same id %q", id1)
	}
	if got := hs[2].Get(HeaderRequestID); got != "" {
		t.Errorf("generate_stream request carries X-Request-Id %q, want none", got)
	}
}
