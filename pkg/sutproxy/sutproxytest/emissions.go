package sutproxytest

import (
	"sync"
	"testing"

	"github.com/netloadgen/netloadgen/kserve/server"
	"github.com/netloadgen/netloadgen/pkg/sutproxy"
)

// Emissions is sutproxy's record of every token it sent, in the order
// sent: the server's side of a test of a client's token timing.
type Emissions struct {
	mu sync.Mutex
	// chunks of emissionsChunk records, so that adding one never copies
	// the record: sutproxy adds just before the socket write, and a copy
	// of a growing slice under the lock (a MB at 17,000 tokens) held every
	// connection's write for hundreds of µs.
	chunks [][]server.Emission
}

const emissionsChunk = 1024

func (e *Emissions) add(x server.Emission) {
	e.mu.Lock()
	if n := len(e.chunks); n == 0 || len(e.chunks[n-1]) == emissionsChunk {
		e.chunks = append(e.chunks, make([]server.Emission, 0, emissionsChunk))
	}
	last := &e.chunks[len(e.chunks)-1]
	*last = append(*last, x)
	e.mu.Unlock()
}

// All is a copy of the record so far.
func (e *Emissions) All() []server.Emission {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []server.Emission
	for _, c := range e.chunks {
		out = append(out, c...)
	}
	return out
}

// ByID is the record grouped by request id (the protocol's request id:
// gRPC's id, generate's "id", OpenAI's X-Request-Id, else the answer's
// own id), each request's tokens in the order sent.
func (e *Emissions) ByID() map[string][]server.Emission {
	out := map[string][]server.Emission{}
	for _, x := range e.All() {
		out[x.ID] = append(out[x.ID], x)
	}
	return out
}

// StartRecording serves the models as Start does, recording every token
// sent.
func StartRecording(t testing.TB, flags ...string) (*sutproxy.Proxy, *Emissions) {
	t.Helper()
	rec := &Emissions{}
	return start(t, sutproxy.Config{Models: models(t, flags), Emit: rec.add}), rec
}
