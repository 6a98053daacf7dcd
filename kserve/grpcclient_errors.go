package kserve

// This file turns gRPC call failures into the package's errors, telling a
// status the server answered with from one grpc-go made up for a broken
// connection: both arrive as a *status.Status, often with the same code
// (UNAVAILABLE is also what Triton answers when its queue is full).

import (
	"context"
	"fmt"
	"sync/atomic"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
)

// grpcCall is the context of one RPC. It records whether the server's
// trailers (which carry its status) arrived; it is one allocation per call,
// the context and the flag together.
type grpcCall struct {
	context.Context
	trailer atomic.Bool
}

type grpcCallKey struct{}

func newGRPCCall(ctx context.Context) *grpcCall { return &grpcCall{Context: ctx} }

func (c *grpcCall) Value(key any) any {
	if key == (grpcCallKey{}) {
		return c
	}
	return c.Context.Value(key)
}

// grpcTrailerWatch is a stats.Handler marking the grpcCall of an RPC whose
// trailers arrived. grpc-go reports InTrailer from the frame that carried the
// status, before the call returns, so the flag is set by the time the caller
// reads it.
type grpcTrailerWatch struct{}

func (grpcTrailerWatch) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (grpcTrailerWatch) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}
func (grpcTrailerWatch) HandleConn(context.Context, stats.ConnStats) {}

func (grpcTrailerWatch) HandleRPC(ctx context.Context, s stats.RPCStats) {
	if _, ok := s.(*stats.InTrailer); !ok {
		return
	}
	if c, ok := ctx.Value(grpcCallKey{}).(*grpcCall); ok {
		c.trailer.Store(true)
	}
}

// grpcTransportError is an UNAVAILABLE that no server sent: a refused, reset
// or closed connection. It matches both ErrTransport and its *Error (so
// errors.Is(err, ErrUnavailable) holds too).
type grpcTransportError struct{ err *Error }

func (e *grpcTransportError) Error() string {
	return fmt.Sprintf("%v: gRPC %s: %s", ErrTransport, e.err.Code, e.err.Message)
}

func (e *grpcTransportError) Unwrap() []error { return []error{ErrTransport, e.err} }

// fail converts the error of an RPC made with c.
func (c *grpcCall) fail(err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return fmt.Errorf("%w: %w", ErrTransport, err)
	}
	ke := &Error{Code: st.Code(), Message: st.Message()}
	switch {
	case (ke.Code == codes.DeadlineExceeded || ke.Code == codes.Canceled) && c.Context.Err() != nil:
		return fmt.Errorf("%w: %w", c.Context.Err(), ke)
	case ke.Code == codes.DeadlineExceeded && hasDeadline(c.Context):
		// grpc-go sends our deadline to the server, whose timer can fire
		// (and reset the stream) a moment before ours: it is still our
		// deadline that passed.
		return fmt.Errorf("%w: %w", context.DeadlineExceeded, ke)
	case ke.Code == codes.Unavailable && !c.trailer.Load():
		return &grpcTransportError{err: ke}
	}
	return ke
}

func hasDeadline(ctx context.Context) bool {
	_, ok := ctx.Deadline()
	return ok
}
