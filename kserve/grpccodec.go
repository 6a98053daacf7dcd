package kserve

// This file is the gRPC client's codec: protobuf, except that a prepared
// request goes out as the bytes it was encoded to once, and a response the
// caller discards is not decoded. Both were measured per call on the
// pre-encoded path (issue 8): re-marshalling the same message and decoding
// an unread response cost allocations and CPU on every request.

import (
	"fmt"

	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
)

// grpcDiscard receives a response that is not read: a call that returns
// with an OK status succeeded, whatever its message holds. It has no size,
// so taking its address allocates nothing.
type grpcDiscard struct{}

// grpcCodec is forced on every call of a GRPCClient's connections.
type grpcCodec struct {
	proto encoding.CodecV2 // grpc-go's own, for every other message
}

func newGRPCCodec() (grpcCodec, error) {
	c := encoding.GetCodecV2(grpcproto.Name)
	if c == nil {
		return grpcCodec{}, fmt.Errorf("kserve: grpc-go has no %q codec registered", grpcproto.Name)
	}
	return grpcCodec{proto: c}, nil
}

func (c grpcCodec) Marshal(v any) (mem.BufferSlice, error) {
	if p, ok := v.(*PreparedGRPCInfer); ok {
		// The slice and its one SliceBuffer are shared by every call:
		// grpc-go only reads them, and a SliceBuffer's Ref and Free do
		// nothing, so no call can release the bytes under another.
		return p.wire, nil
	}
	return c.proto.Marshal(v)
}

func (c grpcCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if _, ok := v.(*grpcDiscard); ok {
		return nil
	}
	return c.proto.Unmarshal(data, v)
}

// Name is empty so that the content-type stays "application/grpc", what
// the client sent before it had a codec of its own: grpc-go appends a forced
// codec's name as a subtype ("application/grpc+proto"), which every server
// should accept but some proxies match exactly.
func (grpcCodec) Name() string { return "" }
