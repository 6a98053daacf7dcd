package sut

import (
	"context"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// This file is what the SUT adapters of a run of several issuers
// (loadgen's Engine.Issuers, WithIssuerSUTs) share. Each issuer has its own
// Adapter, opened by Open with its share of the connections: its own event
// loop, polled on its own OS thread, so nothing on the way to the socket is
// shared but the encoded requests, which are read-only.

// SendsFromIssuer tells whether the SUT sends from the engine's issuer
// thread (an event loop, HTTP or gRPC), the only clients that several
// issuers split: the pool and grpc-go send from a goroutine per request
// over one shared pool, so more issuers would split nothing but the
// calls into it; a generative run's clients have their own readers.
func (a *Adapter) SendsFromIssuer() bool { return a.loop != nil || a.gloop != nil }

// PrepareSharing is Prepare for another issuer's Adapter of the same run
// (the same Config but for the connections), whose owner src has already
// prepared the same trace: a's one-sample requests are src's, not encoded
// again, so N issuers hold one copy of the loaded samples' requests (a
// ResNet-50 sample is 600 KB). Batched requests are encoded by each, as
// Prepare does. Where the two do not send the same way, or src holds no
// requests, a encodes its own.
func (a *Adapter) PrepareSharing(ctx context.Context, tr *trace.Trace, src *Adapter) error {
	switch {
	case a.loop != nil && src.loop != nil && len(src.loop.single) > 0:
		a.loop.shareSingles(&src.loop.polled)
	case a.gloop != nil && src.gloop != nil && len(src.gloop.single) > 0:
		a.gloop.shareSingles(&src.gloop.polled)
	}
	return a.Prepare(ctx, tr)
}
