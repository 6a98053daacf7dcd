package kserve

// This file is the pre-encoded inference path: a request is converted to its
// gRPC message once, before a run, and sent many times.

import (
	"context"
	"fmt"

	"github.com/netloadgen/netloadgen/kserve/inferencepb"
)

// PreparedGRPCInfer is a request converted once to its gRPC message. It shares
// the tensor data of the request it was built from, which must not change
// while it is in use. It is safe for concurrent use: gRPC only reads it.
type PreparedGRPCInfer struct {
	msg *inferencepb.ModelInferRequest
}

// PrepareInfer converts req for InferPrepared, checking every input's data
// against its datatype and shape (an InvalidArgument *Error otherwise).
func (c *GRPCClient) PrepareInfer(req *InferRequest) (*PreparedGRPCInfer, error) {
	m, err := InferRequestToPB(req)
	if err != nil {
		return nil, err
	}
	return &PreparedGRPCInfer{msg: m}, nil
}

// Message is the prepared gRPC message; callers must not modify it.
func (p *PreparedGRPCInfer) Message() *inferencepb.ModelInferRequest { return p.msg }

// InferPrepared runs a prepared request and decodes the response.
func (c *GRPCClient) InferPrepared(ctx context.Context, p *PreparedGRPCInfer) (*InferResponse, error) {
	r, err := c.modelInfer(ctx, p)
	if err != nil {
		return nil, err
	}
	resp, err := InferResponseFromPB(r)
	if err != nil {
		return nil, fmt.Errorf("%w: ModelInferResponse: %s", ErrMalformed, pbMessage(err))
	}
	return resp, nil
}

// InferPreparedDiscard runs a prepared request and only reports whether it
// succeeded: the response is not converted, which a performance run that
// never reads outputs need not pay for.
func (c *GRPCClient) InferPreparedDiscard(ctx context.Context, p *PreparedGRPCInfer) error {
	_, err := c.modelInfer(ctx, p)
	return err
}

func (c *GRPCClient) modelInfer(ctx context.Context, p *PreparedGRPCInfer) (*inferencepb.ModelInferResponse, error) {
	if p == nil || p.msg == nil {
		return nil, pbErrorf("no prepared request")
	}
	call := newGRPCCall(ctx)
	r, err := c.pick().ModelInfer(call, p.msg)
	if err != nil {
		return nil, call.fail(err)
	}
	return r, nil
}
