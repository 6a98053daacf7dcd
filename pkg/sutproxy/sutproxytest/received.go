package sutproxytest

import (
	"hash/fnv"
	"strings"
	"sync"
	"testing"

	"github.com/netloadgen/netloadgen/kserve/server"
	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/sutproxy"
)

// Request is one generative request as sutproxy received it: the server's
// side of a test of what a client sends (a trace's prompt lengths and
// blocks, a session's history).
type Request struct {
	Model string
	// ID is the protocol's request id (gRPC's id, generate's "id",
	// OpenAI's X-Request-Id), "" when it carried none.
	ID string
	// Prompt is the text as the model reads it (a chat's messages joined
	// as the front end joins them).
	Prompt    string
	MaxTokens int
	IgnoreEOS bool
}

// InputTokens is the prompt's length in pseudo-tokens, as the simulated
// model counts it (genai.CountTokens).
func (r Request) InputTokens() int { return genai.CountTokens(r.Prompt) }

// BlockHashes are the FNV-1a hashes of the prompt's blocks of size
// pseudo-tokens (its words single-spaced), the last one shorter when the
// length is not a multiple: two prompts share a block when they share its
// hash (a trace's hash_ids: 512-token blocks).
func (r Request) BlockHashes(size int) []uint64 {
	words := strings.Fields(r.Prompt)
	var out []uint64
	for i := 0; i < len(words); i += size {
		h := fnv.New64a()
		for k, w := range words[i:min(i+size, len(words))] {
			if k > 0 {
				h.Write([]byte{' '})
			}
			h.Write([]byte(w))
		}
		out = append(out, h.Sum64())
	}
	return out
}

// Received is sutproxy's record of the generative requests it was sent,
// in the order received.
type Received struct {
	mu   sync.Mutex
	reqs []Request
}

func (r *Received) add(req server.GenRequest) {
	x := Request{Model: req.Model, ID: req.ID, Prompt: strings.Clone(req.Prompt), MaxTokens: req.MaxTokens, IgnoreEOS: req.IgnoreEOS}
	r.mu.Lock()
	r.reqs = append(r.reqs, x)
	r.mu.Unlock()
}

// All is a copy of the record so far.
func (r *Received) All() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.reqs...)
}

// ByID is the record by request id; an id received twice keeps its last.
func (r *Received) ByID() map[string]Request {
	out := map[string]Request{}
	for _, x := range r.All() {
		out[x.ID] = x
	}
	return out
}

// StartReceiving serves the models as Start does, recording every
// generative request received (Request).
func StartReceiving(t testing.TB, flags ...string) (*sutproxy.Proxy, *Received) {
	t.Helper()
	rec := &Received{}
	return start(t, sutproxy.Config{Models: models(t, flags), Received: rec.add}), rec
}

// StartRecorded serves the models as Start does, recording both every
// generative request received and every token sent.
func StartRecorded(t testing.TB, flags ...string) (*sutproxy.Proxy, *Received, *Emissions) {
	t.Helper()
	rec, em := &Received{}, &Emissions{}
	return start(t, sutproxy.Config{Models: models(t, flags), Received: rec.add, Emit: em.add}), rec, em
}
