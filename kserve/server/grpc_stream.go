package server

// This file implements Triton's ModelStreamInfer: each request on the stream
// is run like ModelInfer and answered with one response; a failed request is
// answered with error_message and the stream goes on.

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

// ModelStreamInfer answers in completion order, not request order; clients
// match responses to requests by id, as with Triton.
func (s *grpcService) ModelStreamInfer(st inferencepb.GRPCInferenceService_ModelStreamInferServer) error {
	ctx := st.Context()
	var (
		wg      sync.WaitGroup
		sendMu  sync.Mutex // grpc-go allows one SendMsg at a time
		sendErr error
		slots   = make(chan struct{}, grpcStreamInflight)
	)
	recvErr := func() error {
		for {
			m, err := st.Recv()
			if err != nil {
				return err
			}
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return status.FromContextError(ctx.Err()).Err()
			}
			wg.Go(func() {
				defer func() { <-slots }()
				out := s.streamOne(ctx, m)
				sendMu.Lock()
				defer sendMu.Unlock()
				if sendErr == nil {
					sendErr = st.Send(out)
				}
			})
		}
	}()
	// The stream must outlive every request still running on it.
	wg.Wait()
	if !errors.Is(recvErr, io.EOF) {
		return recvErr
	}
	return sendErr
}

// streamOne runs one request of a stream and builds its response.
func (s *grpcService) streamOne(ctx context.Context, m *inferencepb.ModelInferRequest) *inferencepb.ModelStreamInferResponse {
	start := s.begin()
	r, err := s.infer(ctx, m)
	s.done("ModelStreamInfer", m.GetModelName(), start, err)
	if err != nil {
		// Keep the model and id so the client can tell which request failed.
		return &inferencepb.ModelStreamInferResponse{
			ErrorMessage: status.Convert(err).Message(),
			InferResponse: &inferencepb.ModelInferResponse{
				ModelName: m.GetModelName(), ModelVersion: m.GetModelVersion(), Id: m.GetId(),
			},
		}
	}
	return &inferencepb.ModelStreamInferResponse{InferResponse: r}
}
