package grpcclient

// This file is the gRPC client's codec: protobuf, except that a prepared
// request goes out as the bytes it was encoded to once, and a response the
// caller discards is not decoded. Both were measured per call on the
// pre-encoded path (issue 8): re-marshalling the same message and decoding
// an unread response cost allocations and CPU on every request. It is the
// client's, not package kserve's: grpc-go installs it on the client's
// connections, and it tells the client's Prepared and grpcDiscard apart.

import (
	"fmt"

	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/netloadgen/netloadgen/kserve"
)

// grpcDiscard receives a response that is not read. Its message is not
// decoded, only walked field by field at the top level (no allocation), so
// bytes that are not a protobuf message still fail the call: a malformed
// response is a failed sample, never a success. It has no size, so taking
// its address allocates nothing.
type grpcDiscard struct{}

// grpcCheck receives a response that is checked against the model
// (kserve.Expect.CheckProto) and not decoded. The verdict is kept in err
// rather than returned: grpc-go would turn a codec's error into an INTERNAL
// status, and a malformed or bad answer would read as the server's error.
type grpcCheck struct {
	want  *kserve.Expect
	batch int
	err   error
}

// grpcCodec is forced on every call of a Client's connections.
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
	if p, ok := v.(*Prepared); ok {
		// The slice and its one SliceBuffer are shared by every call:
		// grpc-go only reads them, and a SliceBuffer's Ref and Free do
		// nothing, so no call can release the bytes under another.
		return p.wire, nil
	}
	if r, ok := v.(*genRequest); ok {
		// Encoded by genwire.AppendRequest, fresh for each request.
		return mem.BufferSlice{mem.SliceBuffer(*r)}, nil
	}
	return c.proto.Marshal(v)
}

func (c grpcCodec) Unmarshal(data mem.BufferSlice, v any) error {
	switch v := v.(type) {
	case *grpcDiscard:
		return checkWire(data)
	case *grpcCheck:
		v.err = v.want.CheckProto(joined(data), v.batch)
		return nil
	case *genWire:
		// Read in place, not decoded; the verdict in v.err, as grpcCheck's.
		b := joined(data)
		keep, raw := v.keepRaw, v.raw
		v.Walk(b)
		if v.keepRaw = keep; keep {
			v.raw = append(raw[:0], b...) // data is recycled once Unmarshal returns
		}
		return nil
	}
	return c.proto.Unmarshal(data, v)
}

// joined is a message's bytes in one slice.
func joined(data mem.BufferSlice) []byte {
	switch len(data) {
	case 0:
		return nil
	case 1:
		return data[0].ReadOnlyData()
	}
	// Large responses arrive in several buffers; joining them is the rare
	// case's cost.
	return data.Materialize()
}

// checkWire walks a message's top-level fields without decoding them.
func checkWire(data mem.BufferSlice) error {
	b := joined(data)
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("%w: response: %v", kserve.ErrMalformed, protowire.ParseError(n))
		}
		b = b[n:]
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return fmt.Errorf("%w: response field %d: %v", kserve.ErrMalformed, num, protowire.ParseError(m))
		}
		b = b[m:]
	}
	return nil
}

// Name is empty so that the content-type stays "application/grpc", what
// the client sent before it had a codec of its own: grpc-go appends a forced
// codec's name as a subtype ("application/grpc+proto"), which every server
// should accept but some proxies match exactly.
func (grpcCodec) Name() string { return "" }
