package sut

import (
	"context"
	"encoding/binary"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// transport is an event-loop client driven from the engine's issuer
// goroutine (httploop, grpcloop): it sends prepared requests of type R, each
// with a tag, and reports their outcomes, from PollUntil, to the callback it
// was built with.
type transport[R any] interface {
	Send(r R, tag uint64)
	PollUntil(ctx context.Context, t time.Time) bool
	PollQuietUntil(ctx context.Context, t time.Time) bool
	Preconnect(ctx context.Context, n int) error
	Retries() uint64
	Close() error
}

// polled is what Loop and GRPCLoop share: queries become tagged requests on
// a transport polled by the engine (loadgen.Poller), Offline's query cut into
// chunks within MaxInflight, each answer the completion of its samples. It
// serves one run at a time, and only an engine that polls it (a run on the
// system clock) ever sees its answers.
type polled[R any] struct {
	tr     transport[R]
	encode func(samples []int) (R, error)
	shape  *Network // request building and chunking; it sends nothing
	o      Options

	single []prepared[R] // by QSL index: one-sample requests
	// shared: single is another issuer's (shareSingles), read by several
	// issuer threads at once, so nothing writes it once the run starts.
	shared  bool
	multi   map[string]R // by the samples' indices: batched requests
	key     []byte
	done    func(loadgen.Completion)
	chunked map[int]*chunkedQuery // queries cut into several requests, by ID
}

// prepared is a one-sample request, if encoded: one cache line to read per
// query rather than two.
type prepared[R any] struct {
	r  R
	ok bool
}

// chunkedQuery is a query sent as several requests, at most MaxInflight
// outstanding.
type chunkedQuery struct {
	ctx     context.Context
	q       loadgen.Query
	chunks  [][2]int
	next    int // first chunk not sent
	out     int // chunks sent and not answered
	left    int // chunks not answered
	sending bool
}

// A tag names a request to the loop: the query in the high 32 bits; in the
// low, a chunk index, or for a query sent whole wholeBit and its size.
const wholeBit = 1 << 31

func newPolled[R any](shape *Network, encode func([]int) (R, error)) polled[R] {
	return polled[R]{encode: encode, shape: shape, o: shape.o, multi: map[string]R{}, chunked: map[int]*chunkedQuery{}}
}

// Name is the SUT's name for the logs.
func (l *polled[R]) Name() string { return l.o.Name }

// Close closes the connections.
func (l *polled[R]) Close() error { return l.tr.Close() }

// Resends is how many requests were sent again because they provably never
// reached the server (loadgen.Resender): their connection was found closed
// before they were written, or the server refused their stream or went
// away before processing them.
func (l *polled[R]) Resends() uint64 { return l.tr.Retries() }

// Preconnect opens n connections (within the configured count) before the
// clock starts.
func (l *polled[R]) Preconnect(ctx context.Context, n int) error { return l.tr.Preconnect(ctx, n) }

// PollUntil implements loadgen.Poller.
func (l *polled[R]) PollUntil(ctx context.Context, t time.Time) { l.tr.PollUntil(ctx, t) }

// PollQuietUntil implements loadgen.QuietPoller.
func (l *polled[R]) PollQuietUntil(ctx context.Context, t time.Time) { l.tr.PollQuietUntil(ctx, t) }

// Prepare encodes, before the clock starts, every request the trace will
// send: one per loaded sample, and one per distinct batch of samples (up
// to maxCached), as prepareTrace plans them.
func (l *polled[R]) Prepare(ctx context.Context, tr *trace.Trace) error {
	return l.prepareShard(ctx, tr, Shard{})
}

// prepareShard is Prepare for what shard sh of the trace sends.
func (l *polled[R]) prepareShard(ctx context.Context, tr *trace.Trace, sh Shard) error {
	request := func(samples []int) error { _, err := l.request(samples); return err }
	single := request
	if l.shared {
		single = func([]int) error { return nil } // the owner encoded them
	} else {
		l.sizeSingles(l.shape.lib.TotalSampleCount())
	}
	return prepareShard(ctx, tr, sh, l.shape.chunks, single, request,
		func() bool { return len(l.multi) >= maxCached })
}

// shareSingles makes l send src's one-sample requests, which src's Prepare
// encoded: requests are read-only once encoded (the loops write them to
// their sockets as they are), so the issuers of a run hold one copy of the
// loaded samples' requests, not one each. Batched requests are encoded at
// issue time past maxCached, so each issuer keeps its own.
func (l *polled[R]) shareSingles(src *polled[R]) {
	l.single, l.shared = src.single, true
}

func (l *polled[R]) sizeSingles(n int) {
	l.single = make([]prepared[R], n)
}

// request returns the request for samples, encoding it if Prepare did not.
func (l *polled[R]) request(samples []int) (R, error) {
	if len(samples) == 1 {
		i := samples[0]
		if i >= 0 && i < len(l.single) && l.single[i].ok {
			return l.single[i].r, nil
		}
		r, err := l.encode(samples)
		if err == nil && !l.shared && i >= 0 && i < len(l.single) {
			l.single[i] = prepared[R]{r, true}
		}
		return r, err
	}
	l.key = l.key[:0]
	for _, s := range samples {
		l.key = binary.AppendUvarint(l.key, uint64(s))
	}
	if r, ok := l.multi[string(l.key)]; ok {
		return r, nil
	}
	r, err := l.encode(samples)
	if err == nil && len(l.multi) < maxCached {
		l.multi[string(l.key)] = r
	}
	return r, err
}

// whole reports whether a query of size samples goes as one request.
func (l *polled[R]) whole(size int) bool {
	return size <= l.o.BatchSize || (l.o.WholeQueries && l.o.MaxBatch > 0 && size <= l.o.MaxBatch)
}

// IssueQuery sends q's request now if a connection is free, else queues it;
// it never blocks. Answers come from PollUntil.
func (l *polled[R]) IssueQuery(ctx context.Context, q loadgen.Query, done func(loadgen.Completion)) {
	l.done = done
	if size := len(q.Samples); l.whole(size) {
		r, err := l.request(q.Samples)
		if err != nil {
			done(q.Done(err))
			return
		}
		l.tr.Send(r, uint64(q.ID)<<32|wholeBit|uint64(size))
		return
	}
	chunks := l.shape.chunks(len(q.Samples))
	cq := &chunkedQuery{ctx: ctx, q: q, chunks: chunks, left: len(chunks)}
	l.chunked[q.ID] = cq
	l.sendChunks(cq)
}

// sendChunks sends a chunked query's next requests within MaxInflight. An
// answer that arrives while it runs (a request that failed at once) only
// counts down: the running call carries on.
func (l *polled[R]) sendChunks(cq *chunkedQuery) {
	if cq.sending {
		return
	}
	cq.sending = true
	defer func() { cq.sending = false }()
	for cq.next < len(cq.chunks) && (l.o.MaxInflight <= 0 || cq.out < l.o.MaxInflight) {
		i := cq.next
		cq.next++
		ch := cq.chunks[i]
		r, err := l.request(cq.q.Samples[ch[0]:ch[1]])
		if err == nil {
			err = cq.ctx.Err()
		}
		if err != nil {
			// Cancelled or unencodable: these samples fail now rather
			// than never.
			l.finishChunk(cq, i, time.Time{}, err)
			continue
		}
		cq.out++
		l.tr.Send(r, uint64(cq.q.ID)<<32|uint64(i))
	}
}

func (l *polled[R]) finishChunk(cq *chunkedQuery, i int, at time.Time, err error) {
	ch := cq.chunks[i]
	cq.left--
	if cq.left == 0 {
		delete(l.chunked, cq.q.ID)
	}
	c := cq.q.DoneRange(ch[0], ch[1]-ch[0], err)
	c.At = at
	l.done(c)
}

// batchOf is the number of samples of the request tag names: its query's
// for a query sent whole, else its chunk's.
func (l *polled[R]) batchOf(tag uint64) int {
	id, low := int(tag>>32), tag&(1<<32-1)
	if low&wholeBit != 0 {
		return int(low &^ wholeBit)
	}
	if cq := l.chunked[id]; cq != nil && int(low) < len(cq.chunks) {
		ch := cq.chunks[low]
		return ch[1] - ch[0]
	}
	return 0
}

// onDone is the transport's callback: a request's outcome becomes the
// completion of its samples.
func (l *polled[R]) onDone(tag uint64, at time.Time, err error) {
	id, low := int(tag>>32), tag&(1<<32-1)
	if err != nil {
		at = time.Time{}
	}
	if low&wholeBit != 0 {
		l.done(loadgen.Completion{Query: id, Count: int(low &^ wholeBit), Err: err, At: at})
		return
	}
	cq := l.chunked[id]
	if cq == nil {
		return
	}
	cq.out--
	l.finishChunk(cq, int(low), at, err)
	if cq.next < len(cq.chunks) {
		l.sendChunks(cq)
	}
}
