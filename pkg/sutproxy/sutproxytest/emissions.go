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
	mu  sync.Mutex
	all []server.Emission
}

func (e *Emissions) add(x server.Emission) {
	e.mu.Lock()
	e.all = append(e.all, x)
	e.mu.Unlock()
}

// All is a copy of the record so far.
func (e *Emissions) All() []server.Emission {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]server.Emission(nil), e.all...)
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
