package sut

import (
	"context"
	"fmt"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// This file is what the SUT adapters of a run of several issuers
// (loadgen's Engine.Issuers, WithIssuerSUTs) share. Each issuer has its own
// Adapter, opened by Open with its share of the connections: its own event
// loop, polled on its own OS thread, so nothing on the way to the socket is
// shared but the encoded requests, which are read-only, and the HTTP loops'
// budget for the answers they read at once (Config.ResponseBudget).

// Shard is the part of a trace issuer K of N sends (loadgen's
// Engine.Issuers): the queries i with i mod N = K, or of a split Offline
// query, the samples K, K+N, … (loadgen.Query.Stride). N ≤ 1 is the whole
// trace.
type Shard struct{ K, N int }

// split says the shard holds a share of Offline's one query, as the engine
// splits it (Offline with more than one issuer).
func (sh Shard) split(tr *trace.Trace) bool {
	return sh.N > 1 && tr.Settings.Scenario == trace.Offline
}

// size is the number of samples of the shard's queries.
func (sh Shard) size(tr *trace.Trace) int {
	if sh.split(tr) {
		return trace.ShardLen(tr.SamplesPerQuery, sh.K, sh.N)
	}
	return tr.SamplesPerQuery
}

// samples are what the shard sends of query q: all of it, none (another
// shard's query) or, split, its share.
func (sh Shard) samples(tr *trace.Trace, q trace.Query) []int {
	switch {
	case sh.N <= 1:
		return q.Samples
	case sh.split(tr):
		return trace.ShardSamples(make([]int, 0, sh.size(tr)), q.Samples, sh.K, sh.N)
	case !trace.InShard(q.Index, sh.K, sh.N):
		return nil
	}
	return q.Samples
}

// SendsFromIssuer tells whether the SUT sends from the engine's issuer
// thread (an event loop, HTTP or gRPC), the only clients that several
// issuers split: the pool and grpc-go send from a goroutine per request
// over one shared pool, so more issuers would split nothing but the
// calls into it; a generative run's clients have their own readers.
func (a *Adapter) SendsFromIssuer() bool { return a.loop != nil || a.gloop != nil }

// PrepareShard is Prepare for the Adapter of issuer sh.K of sh.N (the same
// Config as the others but for the connections): it encodes the batches
// its shard sends (of a split Offline query, its share's). With src, the
// Adapter of another issuer of the same run that has already prepared the
// same trace, a's one-sample requests are src's, not encoded again, so N
// issuers hold one copy of the loaded samples' requests (a ResNet-50
// sample is 600 KB); where the two do not send the same way, or src holds
// none, a encodes its own. Only the event loops take a shard of more than
// one.
func (a *Adapter) PrepareShard(ctx context.Context, tr *trace.Trace, sh Shard, src *Adapter) error {
	switch {
	case a.loop != nil:
		if src != nil && src.loop != nil && len(src.loop.single) > 0 {
			a.loop.shareSingles(&src.loop.polled)
		}
		return a.loop.prepareShard(ctx, tr, sh)
	case a.gloop != nil:
		if src != nil && src.gloop != nil && len(src.gloop.single) > 0 {
			a.gloop.shareSingles(&src.gloop.polled)
		}
		return a.gloop.prepareShard(ctx, tr, sh)
	case sh.N > 1:
		return fmt.Errorf("sut: issuer %d of %d: only the event-loop clients send a shard of a trace", sh.K, sh.N)
	}
	return a.Prepare(ctx, tr)
}
