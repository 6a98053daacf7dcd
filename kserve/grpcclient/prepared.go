package grpcclient

// This file is the pre-encoded inference path: a request is converted to its
// gRPC message and encoded once, before a run, and sent many times.

import (
	"context"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/inferencepb"
)

// Prepared is a request converted once to its gRPC message and
// encoded once to its wire form, which every send reuses (see grpcCodec). It
// shares the tensor data of the request it was built from, which must not
// change while it is in use. It is safe for concurrent use: gRPC only reads it.
type Prepared struct {
	msg   *inferencepb.ModelInferRequest
	wire  mem.BufferSlice // msg encoded: one SliceBuffer
	want  *kserve.Expect  // the answer check of InferPreparedDiscard; nil: none
	batch int             // the request's batch size, for want
}

// PrepareInfer converts req for InferPrepared, checking every input's data
// against its datatype and shape (an InvalidArgument *kserve.Error otherwise).
func (c *Client) PrepareInfer(req *kserve.InferRequest) (*Prepared, error) {
	m, b, err := kserve.MarshalGRPCInferMessage(req)
	if err != nil {
		return nil, err
	}
	return &Prepared{msg: m, wire: mem.BufferSlice{mem.SliceBuffer(b)}}, nil
}

// PrepareInferExpect is PrepareInfer with the check of every answer that
// InferPreparedDiscard makes: want's model name, output names, datatypes
// and shapes, at the request's batch size (want.BatchOf), read from the
// encoded response. A nil want checks nothing.
func (c *Client) PrepareInferExpect(req *kserve.InferRequest, want *kserve.Expect) (*Prepared, error) {
	p, err := c.PrepareInfer(req)
	if err != nil {
		return nil, err
	}
	p.want, p.batch = want, want.BatchOf(req)
	return p, nil
}

// Message is the prepared gRPC message; callers must not modify it.
func (p *Prepared) Message() *inferencepb.ModelInferRequest { return p.msg }

// Wire is the prepared request's encoded ModelInferRequest, shared: callers
// must not modify it.
func (p *Prepared) Wire() []byte {
	if p == nil || len(p.wire) == 0 {
		return nil
	}
	return p.wire[0].ReadOnlyData()
}

func (p *Prepared) check() error {
	if p == nil || p.msg == nil || p.wire == nil {
		return &kserve.Error{Code: codes.InvalidArgument, Message: "no prepared request"}
	}
	return nil
}

// InferPrepared runs a prepared request and decodes the response.
func (c *Client) InferPrepared(ctx context.Context, p *Prepared) (*kserve.InferResponse, error) {
	r := new(inferencepb.ModelInferResponse)
	if _, err := c.modelInfer(ctx, p, r); err != nil {
		return nil, err
	}
	resp, err := kserve.InferResponseFromPB(r)
	if err != nil {
		return nil, malformed("ModelInferResponse", err)
	}
	return resp, nil
}

// InferPreparedDiscard runs a prepared request and only reports whether it
// succeeded, by its status and, when p was prepared with an Expect, by the
// answer's model name and outputs (an error matching
// kserve.ErrBadResponse): the response message is received but neither
// decoded nor converted, which a performance run that never reads outputs
// need not pay for.
func (c *Client) InferPreparedDiscard(ctx context.Context, p *Prepared) error {
	_, err := c.modelInfer(ctx, p, nil)
	return err
}

// InferPreparedDiscardAt is InferPreparedDiscard that also returns when the
// response reached this host's kernel (zero when unknown), before grpc-go's
// reader and this goroutine woke up: a load generator's latency should end
// there. Under concurrency it may be a later response's arrival on the same
// connection, never an earlier one.
func (c *Client) InferPreparedDiscardAt(ctx context.Context, p *Prepared) (time.Time, error) {
	i, err := c.modelInfer(ctx, p, nil)
	if err != nil {
		return time.Time{}, err
	}
	return c.arrival(i), nil
}

// modelInfer calls ModelInfer with the prepared bytes; reply is a
// *inferencepb.ModelInferResponse, or nil for a response that is only
// checked: walked (grpcDiscard), or checked against p's Expect (the call's
// grpcCheck; see grpcCodec). It returns the pool slot the call went on.
func (c *Client) modelInfer(ctx context.Context, p *Prepared, reply any) (uint64, error) {
	if err := p.check(); err != nil {
		return 0, err
	}
	call := c.calls.get(ctx)
	defer c.calls.put(call)
	if reply == nil {
		reply = new(grpcDiscard)
		if p.want != nil {
			call.answer = grpcCheck{want: p.want, batch: p.batch}
			reply = &call.answer
		}
	}
	i := c.pickIndex()
	if err := c.conns[i].Invoke(ctx, inferencepb.GRPCInferenceService_ModelInfer_FullMethodName, p, reply, call.opts[:]...); err != nil {
		return i, call.fail(err)
	}
	return i, call.answer.err
}
