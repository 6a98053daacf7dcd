package kserve

// This file exposes a request's gRPC wire bytes, for clients that speak
// HTTP/2 themselves (pkg/grpcloop) rather than through grpc-go.

import "google.golang.org/protobuf/proto"

// MarshalGRPCInfer converts req to its ModelInferRequest, checking every
// input as PrepareInfer does, and encodes it: the gRPC message, without the
// 5-byte length prefix of the wire.
func MarshalGRPCInfer(req *InferRequest) ([]byte, error) {
	m, err := InferRequestToPB(req)
	if err != nil {
		return nil, err
	}
	b, err := proto.Marshal(m)
	if err != nil {
		return nil, pbErrorf("ModelInferRequest: %v", err)
	}
	return b, nil
}

// Wire is the prepared request's encoded ModelInferRequest, shared: callers
// must not modify it.
func (p *PreparedGRPCInfer) Wire() []byte {
	if p == nil || len(p.wire) == 0 {
		return nil
	}
	return p.wire[0].ReadOnlyData()
}
