package sut

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/pkg/grpcloop"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/qsl"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// GRPCLoop is Loop's counterpart for gRPC: an engine SUT that sends
// pre-encoded ModelInfer calls through a grpcloop.Loop on the engine's
// issuer goroutine (loadgen.Poller). Queries become calls as in Loop (the
// tag layout, chunking of Offline's query within MaxInflight, and the
// completion of each chunk are the same; the code is Loop's, over another
// transport). It serves one run at a time, and only an engine that polls it
// (a run on the system clock) ever sees its answers.
type GRPCLoop struct {
	loop  *grpcloop.Loop
	shape *Network // request building and chunking; it sends nothing
	o     Options
	addr  string // the :authority of every call

	single  []*grpcloop.Request          // by QSL index: one-sample calls
	multi   map[string]*grpcloop.Request // by the samples' indices: batched calls
	key     []byte
	done    func(loadgen.Completion)
	chunked map[int]*chunkedQuery // queries cut into several calls, by ID
}

// GRPCLoopOptions configure the connections of a GRPCLoop.
type GRPCLoopOptions struct {
	Addr  string // host:port
	Conns int    // HTTP/2 connections (default 4)
}

// NewGRPCLoop builds a GRPCLoop SUT for a performance run. It fails where
// grpcloop does not run (not Linux: match grpcloop.ErrUnsupported and fall
// back to Network with the grpc-go client) and for response capture, which
// needs decoded answers.
func NewGRPCLoop(lib qsl.Library, o Options, lo GRPCLoopOptions) (*GRPCLoop, error) {
	if o.Capture {
		return nil, fmt.Errorf("sut: the gRPC loop client does not return responses (Options.Capture)")
	}
	shape, err := New(nil, lib, o)
	if err != nil {
		return nil, err
	}
	l := &GRPCLoop{shape: shape, o: shape.o, addr: lo.Addr, multi: map[string]*grpcloop.Request{}, chunked: map[int]*chunkedQuery{}}
	l.loop, err = grpcloop.New(grpcloop.Config{Addr: lo.Addr, Conns: lo.Conns, Timeout: o.Timeout, OnDone: l.onDone})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// Name is the SUT's name for the logs.
func (l *GRPCLoop) Name() string { return l.o.Name }

// Close closes the connections.
func (l *GRPCLoop) Close() error { return l.loop.Close() }

// Retries is how many calls were sent again after the server refused their
// stream or sent GOAWAY before processing them.
func (l *GRPCLoop) Retries() uint64 { return l.loop.Retries() }

// Preconnect opens n connections (within the configured count) before the
// clock starts.
func (l *GRPCLoop) Preconnect(ctx context.Context, n int) error { return l.loop.Preconnect(ctx, n) }

// PollUntil implements loadgen.Poller.
func (l *GRPCLoop) PollUntil(ctx context.Context, t time.Time) { l.loop.PollUntil(ctx, t) }

// Prepare encodes, before the clock starts, every call the trace will
// make: one per loaded sample, and one per distinct batch of samples.
func (l *GRPCLoop) Prepare(ctx context.Context, tr *trace.Trace) error {
	l.single = make([]*grpcloop.Request, l.shape.lib.TotalSampleCount())
	for i := range tr.Len() {
		if err := ctx.Err(); err != nil {
			return err
		}
		q := tr.Query(i)
		for _, ch := range l.shape.chunks(len(q.Samples)) {
			if len(l.multi) >= maxCached && ch[1]-ch[0] > 1 {
				continue
			}
			if _, err := l.request(q.Samples[ch[0]:ch[1]]); err != nil {
				return err
			}
		}
	}
	return nil
}

// request returns the call for samples, encoding it if Prepare did not.
func (l *GRPCLoop) request(samples []int) (*grpcloop.Request, error) {
	if len(samples) == 1 {
		i := samples[0]
		if i >= 0 && i < len(l.single) && l.single[i] != nil {
			return l.single[i], nil
		}
		r, err := l.encode(samples)
		if err == nil && i >= 0 && i < len(l.single) {
			l.single[i] = r
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

func (l *GRPCLoop) encode(samples []int) (*grpcloop.Request, error) {
	req, err := l.shape.request(samples)
	if err != nil {
		return nil, err
	}
	msg, err := kserve.MarshalGRPCInfer(req)
	if err != nil {
		return nil, fmt.Errorf("sut: encode samples %v: %w", samples, err)
	}
	r, err := grpcloop.NewRequest(grpcloop.ModelInferPath, l.addr, l.o.Timeout, msg)
	if err != nil {
		return nil, fmt.Errorf("sut: encode samples %v: %w", samples, err)
	}
	return r, nil
}

// whole reports whether a query of size samples goes as one call.
func (l *GRPCLoop) whole(size int) bool {
	return size <= l.o.BatchSize || (l.o.WholeQueries && l.o.MaxBatch > 0 && size <= l.o.MaxBatch)
}

// IssueQuery writes q's call now if a stream is free, else queues it; it
// never blocks. Answers come from PollUntil.
func (l *GRPCLoop) IssueQuery(ctx context.Context, q loadgen.Query, done func(loadgen.Completion)) {
	l.done = done
	if size := len(q.Samples); l.whole(size) {
		r, err := l.request(q.Samples)
		if err != nil {
			done(q.Done(err))
			return
		}
		l.loop.Send(r, uint64(q.ID)<<32|wholeBit|uint64(size))
		return
	}
	chunks := l.shape.chunks(len(q.Samples))
	cq := &chunkedQuery{ctx: ctx, q: q, chunks: chunks, left: len(chunks)}
	l.chunked[q.ID] = cq
	l.sendChunks(cq)
}

// sendChunks sends a chunked query's next calls within MaxInflight. An
// answer that arrives while it runs (a call that failed at once) only
// counts down: the running call carries on.
func (l *GRPCLoop) sendChunks(cq *chunkedQuery) {
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
		l.loop.Send(r, uint64(cq.q.ID)<<32|uint64(i))
	}
}

func (l *GRPCLoop) finishChunk(cq *chunkedQuery, i int, at time.Time, err error) {
	ch := cq.chunks[i]
	cq.left--
	if cq.left == 0 {
		delete(l.chunked, cq.q.ID)
	}
	c := cq.q.DoneRange(ch[0], ch[1]-ch[0], err)
	c.At = at
	l.done(c)
}

// onDone is the loop's callback: a call's outcome becomes the completion
// of its samples.
func (l *GRPCLoop) onDone(tag uint64, at time.Time, err error) {
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
