package server

// This file implements Triton's ModelStreamInfer: each request on the stream
// is run like ModelInfer and answered with one response, or, for a
// generative model, answered token by token as a decoupled model is
// (grpc_generate.go); a failed request is answered with error_message and
// the stream goes on.

import (
	"context"
	"errors"
	"io"
	"sync"

	"google.golang.org/grpc/status"

	"github.com/netloadgen/netloadgen/kserve/inferencepb"
)

// grpcStreamInflight bounds the requests of one stream run at once. Requests
// run concurrently, as on Triton, so a stream is not limited to one request
// per model latency; past the bound the stream stops reading and HTTP/2 flow
// control pushes back on the client.
const grpcStreamInflight = 256

// streamState is one ModelStreamInfer call's shared state.
type streamState struct {
	st    inferencepb.GRPCInferenceService_ModelStreamInferServer
	wg    sync.WaitGroup
	slots chan struct{}

	mu      sync.Mutex // grpc-go allows one SendMsg at a time
	sendErr error
	over    bool          // finish was called: nothing more is sent
	end     chan struct{} // closed by finish

	// wire records the stream's tokens at the socket write (nil: when
	// Send returns).
	wire *EmitConn
}

// send sends m unless the stream is over or failed; false then.
func (x *streamState) send(m *inferencepb.ModelStreamInferResponse) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.over || x.sendErr != nil {
		return false
	}
	x.sendErr = x.st.Send(m)
	return x.sendErr == nil
}

// finish ends the stream at once, answers owed or not (the test fault
// no_final): the call returns OK and nothing more is sent.
func (x *streamState) finish() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.over {
		x.over = true
		close(x.end)
	}
}

// ModelStreamInfer answers in completion order, not request order; clients
// match responses to requests by id, as with Triton.
func (s *grpcService) ModelStreamInfer(st inferencepb.GRPCInferenceService_ModelStreamInferServer) error {
	ctx := st.Context()
	x := &streamState{st: st, slots: make(chan struct{}, grpcStreamInflight), end: make(chan struct{}), wire: s.wireConn(ctx)}
	recvDone := make(chan error, 1)
	// Reading runs beside the handler so that a finish can end the call
	// while a Recv is blocked; once the call returns, grpc-go ends that
	// Recv with the stream's cancellation.
	go func() { recvDone <- s.recvLoop(ctx, x) }()
	var recvErr error
	select {
	case recvErr = <-recvDone:
	case <-x.end:
		return nil
	}
	// The stream must outlive every request still running on it.
	waited := make(chan struct{})
	go func() { x.wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-x.end:
		return nil
	}
	if !errors.Is(recvErr, io.EOF) {
		return recvErr
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.sendErr
}

// recvLoop reads the stream's requests and starts each.
func (s *grpcService) recvLoop(ctx context.Context, x *streamState) error {
	g, _ := s.b.(Generator)
	for {
		m, err := x.st.Recv()
		if err != nil {
			return err
		}
		select {
		case x.slots <- struct{}{}:
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		}
		x.wg.Go(func() {
			defer func() { <-x.slots }()
			if g != nil && g.Generative(ctx, m.GetModelName()) {
				s.streamGenerate(ctx, g, m, x)
				return
			}
			x.send(s.streamOne(ctx, m))
		})
	}
}

// streamOne runs one request of a stream and builds its response.
func (s *grpcService) streamOne(ctx context.Context, m *inferencepb.ModelInferRequest) *inferencepb.ModelStreamInferResponse {
	start := s.begin()
	r, err := s.infer(ctx, m)
	s.done("ModelStreamInfer", m.GetModelName(), start, err)
	if err != nil {
		// Keep the model and id so the client can tell which request failed.
		return streamError(m.GetModelName(), m.GetModelVersion(), m.GetId(), status.Convert(err).Message())
	}
	return &inferencepb.ModelStreamInferResponse{InferResponse: r}
}
