package sut

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/pkg/httploop"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/qsl"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// Loop is an engine SUT that sends pre-encoded HTTP requests through an
// httploop.Loop on the engine's issuer goroutine (loadgen.Poller): the
// issuer writes each request at its due time and reads answers while it
// waits for the next one. It serves one run at a time, and only an engine
// that polls it (a run on the system clock) ever sees its answers.
type Loop struct {
	loop  *httploop.Loop
	enc   *kserve.HTTPClient
	shape *Network // request building and chunking; it sends nothing
	o     Options

	single  [][]byte          // by QSL index: one-sample requests
	multi   map[string][]byte // by the samples' indices: batched requests
	key     []byte
	done    func(loadgen.Completion)
	chunked map[int]*chunkedQuery // queries cut into several requests, by ID
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

// LoopOptions configure the connections of a Loop.
type LoopOptions struct {
	Addr     string // host:port
	MaxConns int    // cap on connections (default 64)
}

// NewLoop builds a Loop SUT for a performance run: enc encodes the
// requests (its base URL, binary setting and Host header), the loop sends
// them to lo.Addr. It fails where httploop does not run (not Linux: match
// httploop.ErrUnsupported and fall back to Network) and for response
// capture, which needs decoded answers.
func NewLoop(enc *kserve.HTTPClient, lib qsl.Library, o Options, lo LoopOptions) (*Loop, error) {
	if o.Capture {
		return nil, fmt.Errorf("sut: the loop client does not return responses (Options.Capture)")
	}
	shape, err := New(nil, lib, o)
	if err != nil {
		return nil, err
	}
	l := &Loop{enc: enc, shape: shape, o: shape.o, multi: map[string][]byte{}, chunked: map[int]*chunkedQuery{}}
	l.loop, err = httploop.New(httploop.Config{Addr: lo.Addr, MaxConns: lo.MaxConns, Timeout: o.Timeout, OnDone: l.onDone})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// Name is the SUT's name for the logs.
func (l *Loop) Name() string { return l.o.Name }

// Close closes the connections.
func (l *Loop) Close() error { return l.loop.Close() }

// Retries is how many requests were resent after a server closed an idle
// connection.
func (l *Loop) Retries() uint64 { return l.loop.Retries() }

// Preconnect opens n connections (within the cap) before the clock starts.
func (l *Loop) Preconnect(ctx context.Context, n int) error { return l.loop.Preconnect(ctx, n) }

// PollUntil implements loadgen.Poller.
func (l *Loop) PollUntil(ctx context.Context, t time.Time) { l.loop.PollUntil(ctx, t) }

// Prepare encodes, before the clock starts, every request the trace will
// send: one per loaded sample, and one per distinct batch of samples.
func (l *Loop) Prepare(ctx context.Context, tr *trace.Trace) error {
	l.single = make([][]byte, l.shape.lib.TotalSampleCount())
	for i := range tr.Len() {
		if err := ctx.Err(); err != nil {
			return err
		}
		q := tr.Query(i)
		for _, ch := range l.shape.chunks(len(q.Samples)) {
			if len(l.multi) >= maxCached && ch[1]-ch[0] > 1 {
				continue
			}
			if _, err := l.raw(q.Samples[ch[0]:ch[1]]); err != nil {
				return err
			}
		}
	}
	return nil
}

// raw returns the request for samples, encoding it if Prepare did not.
func (l *Loop) raw(samples []int) ([]byte, error) {
	if len(samples) == 1 {
		i := samples[0]
		if i >= 0 && i < len(l.single) && l.single[i] != nil {
			return l.single[i], nil
		}
		b, err := l.encode(samples)
		if err == nil && i >= 0 && i < len(l.single) {
			l.single[i] = b
		}
		return b, err
	}
	l.key = l.key[:0]
	for _, s := range samples {
		l.key = binary.AppendUvarint(l.key, uint64(s))
	}
	if b, ok := l.multi[string(l.key)]; ok {
		return b, nil
	}
	b, err := l.encode(samples)
	if err == nil && len(l.multi) < maxCached {
		l.multi[string(l.key)] = b
	}
	return b, err
}

func (l *Loop) encode(samples []int) ([]byte, error) {
	req, err := l.shape.request(samples)
	if err != nil {
		return nil, err
	}
	p, err := l.enc.PrepareInfer(req)
	if err != nil {
		return nil, fmt.Errorf("sut: encode samples %v: %w", samples, err)
	}
	return p.Raw(), nil
}

// whole reports whether a query of size samples goes as one request.
func (l *Loop) whole(size int) bool {
	return size <= l.o.BatchSize || (l.o.WholeQueries && l.o.MaxBatch > 0 && size <= l.o.MaxBatch)
}

// IssueQuery writes q's request now if a connection is free, else queues
// it; it never blocks. Answers come from PollUntil.
func (l *Loop) IssueQuery(ctx context.Context, q loadgen.Query, done func(loadgen.Completion)) {
	l.done = done
	if size := len(q.Samples); l.whole(size) {
		b, err := l.raw(q.Samples)
		if err != nil {
			done(q.Done(err))
			return
		}
		l.loop.Send(b, uint64(q.ID)<<32|wholeBit|uint64(size))
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
func (l *Loop) sendChunks(cq *chunkedQuery) {
	if cq.sending {
		return
	}
	cq.sending = true
	defer func() { cq.sending = false }()
	for cq.next < len(cq.chunks) && (l.o.MaxInflight <= 0 || cq.out < l.o.MaxInflight) {
		i := cq.next
		cq.next++
		ch := cq.chunks[i]
		b, err := l.raw(cq.q.Samples[ch[0]:ch[1]])
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
		l.loop.Send(b, uint64(cq.q.ID)<<32|uint64(i))
	}
}

func (l *Loop) finishChunk(cq *chunkedQuery, i int, at time.Time, err error) {
	ch := cq.chunks[i]
	cq.left--
	if cq.left == 0 {
		delete(l.chunked, cq.q.ID)
	}
	c := cq.q.DoneRange(ch[0], ch[1]-ch[0], err)
	c.At = at
	l.done(c)
}

// onDone is the loop's callback: a request's outcome becomes the
// completion of its samples.
func (l *Loop) onDone(tag uint64, at time.Time, err error) {
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
