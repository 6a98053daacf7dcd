// Package server serves the KServe v2 protocol over HTTP (fasthttp) and gRPC
// from one Backend: the simulated models of sutproxy, or its forwarding front.
package server

import (
	"context"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/triton"
)

// Backend answers the protocol's calls. Errors should be *kserve.Error so the
// transports answer with the right status; any other error is answered as
// internal (HTTP 500, gRPC INTERNAL).
type Backend interface {
	ServerLive(ctx context.Context) bool
	ServerReady(ctx context.Context) bool
	ServerMetadata(ctx context.Context) kserve.ServerMetadata
	ModelReady(ctx context.Context, model, version string) (bool, error)
	ModelMetadata(ctx context.Context, model, version string) (kserve.ModelMetadata, error)
	// Infer runs one request. The request has been decoded and its tensors'
	// data lengths checked against their datatypes and shapes; the Backend
	// checks them against the model.
	Infer(ctx context.Context, req *kserve.InferRequest) (*kserve.InferResponse, error)
	ModelConfig(ctx context.Context, model, version string) (triton.ModelConfig, error)
	// ModelStatistics answers for one model, or for every model when model is "".
	ModelStatistics(ctx context.Context, model, version string) (triton.StatisticsResponse, error)
}
