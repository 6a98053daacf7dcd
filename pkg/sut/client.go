package sut

import (
	"context"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/grpcclient"
	"github.com/netloadgen/netloadgen/kserve/httpclient"
)

// Call sends one pre-encoded request and reports whether it succeeded; it
// must not allocate the request again. at is when the response arrived, if
// the transport knows it better than "now" (the kernel's receive timestamp:
// the latency then excludes this process's wake-up); zero means now.
type Call func(ctx context.Context) (at time.Time, err error)

// Client prepares requests for one transport. A Call of a request prepared
// with want fails with an error matching kserve.ErrBadResponse when the
// answer is not the model's (nil: no check).
type Client interface {
	Prepare(req *kserve.InferRequest, want *kserve.Expect) (Call, error)
}

type httpClient struct{ c *httpclient.Client }

// Resends is the pool's count of requests sent on a fresh connection because
// their pooled one was found closed before they were written.
func (h httpClient) Resends() uint64 { return h.c.Retries() }

// HTTP adapts the KServe REST client: the body is encoded once, and sends
// only check the status and framing of the answer, and its JSON header
// against want.
func HTTP(c *httpclient.Client) Client { return httpClient{c} }

func (h httpClient) Prepare(req *kserve.InferRequest, want *kserve.Expect) (Call, error) {
	p, err := h.c.PrepareInferExpect(req, want)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (time.Time, error) { return h.c.InferPreparedCheckAt(ctx, p) }, nil
}

type grpcClient struct{ c *grpcclient.Client }

// GRPC adapts the KServe gRPC client: the message is built once with raw
// tensor contents, and answers are not converted, only checked against
// want where they arrived.
func GRPC(c *grpcclient.Client) Client { return grpcClient{c} }

func (g grpcClient) Prepare(req *kserve.InferRequest, want *kserve.Expect) (Call, error) {
	p, err := g.c.PrepareInferExpect(req, want)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (time.Time, error) { return g.c.InferPreparedDiscardAt(ctx, p) }, nil
}

// CaptureCall sends one pre-encoded request and returns the decoded
// response, which owns its memory.
type CaptureCall func(ctx context.Context) (*kserve.InferResponse, error)

// Capturer is a Client that can also return responses: accuracy mode and
// sampled accuracy logging read the outputs a performance run discards.
type Capturer interface {
	PrepareCapture(req *kserve.InferRequest) (CaptureCall, error)
}

func (h httpClient) PrepareCapture(req *kserve.InferRequest) (CaptureCall, error) {
	p, err := h.c.PrepareInfer(req)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (*kserve.InferResponse, error) { return h.c.InferPrepared(ctx, p) }, nil
}

func (g grpcClient) PrepareCapture(req *kserve.InferRequest) (CaptureCall, error) {
	p, err := g.c.PrepareInfer(req)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (*kserve.InferResponse, error) { return g.c.InferPrepared(ctx, p) }, nil
}
