package sutproxy_test

import (
	"io"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/sutproxy/sutproxytest"
)

// sutproxy's record of what it was sent (sutproxytest.StartReceiving):
// each generative request's model, id, prompt and max_tokens, over the
// OpenAI API and the generate extension, refused ones too; its prompt's
// pseudo-tokens and block hashes. Nothing is recorded by default.
func TestReceivedRecord(t *testing.T) {
	p, rec := sutproxytest.StartReceiving(t, fastLLM)
	base := "http://" + p.HTTPAddr()
	prompt := strings.TrimSpace(strings.Repeat("a b c ", 3)) // 9 words
	for _, c := range []struct{ url, body, id string }{
		{base + "/openai/v1/completions", `{"model":"chat","prompt":"` + prompt + `","max_tokens":3,"ignore_eos":true}`, "r-1"},
		{base + "/v2/models/chat/generate", `{"id":"g-2","text_input":"` + prompt + ` d","max_tokens":2}`, ""},
		{base + "/openai/v1/completions", `{"model":"chat","prompt":"x","max_tokens":100000000}`, "r-3"},
	} {
		resp := post(t, c.url, c.body, "X-Request-Id", c.id)
		io.Copy(io.Discard, resp.Body)
	}
	all := rec.All()
	if len(all) != 3 {
		t.Fatalf("%d requests recorded, want 3: %+v", len(all), all)
	}
	by := rec.ByID()
	r1, r2, r3 := by["r-1"], by["g-2"], by["r-3"]
	if r1.Model != "chat" || r1.Prompt != prompt || r1.MaxTokens != 3 || !r1.IgnoreEOS || r1.InputTokens() != 9 {
		t.Errorf("the completions request: %+v", r1)
	}
	if r2.Prompt != prompt+" d" || r2.MaxTokens != 2 || r2.InputTokens() != 10 {
		t.Errorf("the generate request: %+v", r2)
	}
	if r3.MaxTokens != 100000000 {
		t.Errorf("the refused request: %+v", r3)
	}
	h1, h2 := r1.BlockHashes(3), r2.BlockHashes(3)
	if len(h1) != 3 || len(h2) != 4 || h1[0] != h1[1] || h1[2] != h2[2] || h2[3] == h2[0] {
		t.Errorf("block hashes %x and %x: want 3 equal blocks of \"a b c\", then a block \"d\"", h1, h2)
	}
}
