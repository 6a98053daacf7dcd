package grpcclient

// This file wraps Triton's ModelStreamInfer, a bidirectional stream of
// requests and responses over one HTTP/2 stream (decoupled models answer a
// request with several responses, or none).

import (
	"context"
	"errors"
	"io"

	"google.golang.org/grpc/codes"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/inferencepb"
)

// Stream is one ModelStreamInfer stream. One goroutine may Send
// while another Receives; neither method may be called concurrently with
// itself.
type Stream struct {
	ctx    context.Context
	cancel context.CancelFunc
	stream inferencepb.GRPCInferenceService_ModelStreamInferClient
}

// StreamInfer opens a ModelStreamInfer stream on one connection of the pool.
// The stream lives until ctx ends, Close is called, or the server ends it;
// call Close when done with it, or its resources stay held until ctx ends.
func (c *Client) StreamInfer(ctx context.Context) (*Stream, error) {
	ctx, cancel := context.WithCancel(ctx)
	st, err := c.pick().ModelStreamInfer(ctx)
	if err != nil {
		cancel()
		// Opening a stream fails before any answer from the server.
		return nil, grpcFail(ctx, err, false)
	}
	return &Stream{ctx: ctx, cancel: cancel, stream: st}, nil
}

// Send encodes and sends a request. io.EOF means the stream has ended: Recv
// returns why.
func (s *Stream) Send(req *kserve.InferRequest) error {
	m, err := kserve.InferRequestToPB(req)
	if err != nil {
		return err
	}
	return s.send(m)
}

// SendPrepared sends a prepared request.
func (s *Stream) SendPrepared(p *Prepared) error {
	if err := p.check(); err != nil {
		return err
	}
	return s.send(p)
}

// send sends a *inferencepb.ModelInferRequest or a *Prepared, whose
// bytes go out as prepared (see grpcCodec).
func (s *Stream) send(m any) error {
	if err := s.stream.SendMsg(m); err != nil {
		if errors.Is(err, io.EOF) {
			return io.EOF
		}
		// grpc-go returns io.EOF when the stream has ended (Recv has the
		// status); any other error of Send is its own, before any answer.
		return grpcFail(s.ctx, err, false)
	}
	return nil
}

// Recv returns the next response. A response whose error_message is set is
// returned as a *kserve.Error with code Unknown (the stream has no status codes per
// response) together with whatever of the response the server sent, such as
// its model and id, so the caller can tell which request failed; the stream
// goes on. io.EOF means the server ended the stream cleanly; any other error
// ends it.
func (s *Stream) Recv() (*kserve.InferResponse, error) {
	r, err := s.stream.Recv()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, grpcFail(s.ctx, err, s.answered())
	}
	if msg := r.GetErrorMessage(); msg != "" {
		ir := r.GetInferResponse()
		resp := &kserve.InferResponse{Model: ir.GetModelName(), Version: ir.GetModelVersion(), ID: ir.GetId()}
		return resp, &kserve.Error{Code: codes.Unknown, Message: msg}
	}
	resp, err := kserve.InferResponseFromPB(r.GetInferResponse())
	if err != nil {
		return nil, malformed("ModelStreamInferResponse", err)
	}
	return resp, nil
}

// answered is grpcCall.answered for a stream that has ended: its header
// and trailer metadata are final, so reading them does not block.
func (s *Stream) answered() bool {
	h, _ := s.stream.Header()
	return len(h) > 0 || len(s.stream.Trailer()) > 0
}

// CloseSend tells the server no more requests will come; responses still
// arrive until Recv returns io.EOF.
func (s *Stream) CloseSend() error { return s.stream.CloseSend() }

// Close abandons the stream, failing any Recv in progress.
func (s *Stream) Close() { s.cancel() }
