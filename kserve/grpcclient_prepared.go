package kserve

// This file is the pre-encoded inference path: a request is converted to its
// gRPC message and encoded once, before a run, and sent many times.

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	"github.com/netloadgen/netloadgen/kserve/inferencepb"
)

// PreparedGRPCInfer is a request converted once to its gRPC message and
// encoded once to its wire form, which every send reuses (see grpcCodec). It
// shares the tensor data of the request it was built from, which must not
// change while it is in use. It is safe for concurrent use: gRPC only reads it.
type PreparedGRPCInfer struct {
	msg  *inferencepb.ModelInferRequest
	wire mem.BufferSlice // msg encoded: one SliceBuffer
}

// PrepareInfer converts req for InferPrepared, checking every input's data
// against its datatype and shape (an InvalidArgument *Error otherwise).
func (c *GRPCClient) PrepareInfer(req *InferRequest) (*PreparedGRPCInfer, error) {
	m, err := InferRequestToPB(req)
	if err != nil {
		return nil, err
	}
	b, err := proto.Marshal(m)
	if err != nil {
		return nil, pbErrorf("ModelInferRequest: %v", err)
	}
	return &PreparedGRPCInfer{msg: m, wire: mem.BufferSlice{mem.SliceBuffer(b)}}, nil
}

// Message is the prepared gRPC message; callers must not modify it.
func (p *PreparedGRPCInfer) Message() *inferencepb.ModelInferRequest { return p.msg }

func (p *PreparedGRPCInfer) check() error {
	if p == nil || p.msg == nil || p.wire == nil {
		return pbErrorf("no prepared request")
	}
	return nil
}

// InferPrepared runs a prepared request and decodes the response.
func (c *GRPCClient) InferPrepared(ctx context.Context, p *PreparedGRPCInfer) (*InferResponse, error) {
	r := new(inferencepb.ModelInferResponse)
	if _, err := c.modelInfer(ctx, p, r); err != nil {
		return nil, err
	}
	resp, err := InferResponseFromPB(r)
	if err != nil {
		return nil, fmt.Errorf("%w: ModelInferResponse: %s", ErrMalformed, pbMessage(err))
	}
	return resp, nil
}

// InferPreparedDiscard runs a prepared request and only reports whether it
// succeeded, by its status: the response message is received but neither
// decoded nor converted, which a performance run that never reads outputs
// need not pay for.
func (c *GRPCClient) InferPreparedDiscard(ctx context.Context, p *PreparedGRPCInfer) error {
	_, err := c.modelInfer(ctx, p, new(grpcDiscard))
	return err
}

// InferPreparedDiscardAt is InferPreparedDiscard that also returns when the
// response reached this host's kernel (zero when unknown), before grpc-go's
// reader and this goroutine woke up: a load generator's latency should end
// there. Under concurrency it may be a later response's arrival on the same
// connection, never an earlier one.
func (c *GRPCClient) InferPreparedDiscardAt(ctx context.Context, p *PreparedGRPCInfer) (time.Time, error) {
	i, err := c.modelInfer(ctx, p, new(grpcDiscard))
	if err != nil {
		return time.Time{}, err
	}
	return c.arrival(i), nil
}

// modelInfer calls ModelInfer with the prepared bytes; reply is a
// *inferencepb.ModelInferResponse or a *grpcDiscard (see grpcCodec).
// It returns the pool slot the call went on.
func (c *GRPCClient) modelInfer(ctx context.Context, p *PreparedGRPCInfer, reply any) (uint64, error) {
	if err := p.check(); err != nil {
		return 0, err
	}
	call := c.calls.get(ctx)
	defer c.calls.put(call)
	i := c.pickIndex()
	if err := c.conns[i].Invoke(ctx, inferencepb.GRPCInferenceService_ModelInfer_FullMethodName, p, reply, call.opts[:]...); err != nil {
		return i, call.fail(err)
	}
	return i, nil
}
