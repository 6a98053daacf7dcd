package server

// This file builds the gRPC server: the KServe v2 service over a Backend,
// plus the standard health service and server reflection, so generic tools
// (grpcurl, grpc_health_probe, Kubernetes gRPC probes) work without our
// .proto files.

import (
	"context"
	"errors"
	"math"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/inferencepb"
)

// GRPCObserver is told of every call the gRPC server answers: the RPC's short
// name ("ModelInfer", "ModelStreamInfer", "ServerLive", ...), the model it
// named ("" for server-wide calls), the status code and the time the server
// spent. ModelStreamInfer reports once per request in the stream (the code of
// a failed one is what a unary call would have answered). It runs on the
// serving goroutine: it must be quick and safe for concurrent use.
type GRPCObserver func(method, model string, code codes.Code, d time.Duration)

// grpcMaxMessage matches the client's limit (Triton's: 2^31-1 bytes); gRPC's
// default of 4 MiB would refuse ordinary image batches.
const grpcMaxMessage = math.MaxInt32

// NewGRPCServer builds a gRPC server serving GRPCInferenceService from b,
// with grpc.health.v1 (SERVING) and server reflection. opts come after the
// server's own (message size limits), so they take precedence. Serve it with
// s.Serve(listener); stop it with s.GracefulStop or s.Stop.
func NewGRPCServer(b Backend, opts ...grpc.ServerOption) *grpc.Server {
	return NewObservedGRPCServer(b, nil, opts...)
}

// NewObservedGRPCServer is NewGRPCServer reporting every call to obs (nil:
// none).
func NewObservedGRPCServer(b Backend, obs GRPCObserver, opts ...grpc.ServerOption) *grpc.Server {
	return NewHookedGRPCServer(b, GRPCHooks{Observe: obs}, opts...)
}

// GRPCHooks are a gRPC server's optional callbacks.
type GRPCHooks struct {
	Observe GRPCObserver
	// Emit is told of every generated token sent.
	Emit EmitFunc
	// Wire, when set, is the EmitListener the server is served on: tokens
	// are then recorded (to its EmitFunc) when the write carrying their
	// response goes to the socket, not when grpc-go's Send queues it.
	Wire *EmitListener
	// Arrival, when set, says when the stream message being handled (its
	// context's) reached the host: a generative request's time starts there.
	Arrival func(ctx context.Context) time.Time
}

// NewHookedGRPCServer is NewGRPCServer with hooks.
func NewHookedGRPCServer(b Backend, h GRPCHooks, opts ...grpc.ServerOption) *grpc.Server {
	s := grpc.NewServer(append([]grpc.ServerOption{
		grpc.MaxRecvMsgSize(grpcMaxMessage),
		grpc.MaxSendMsgSize(grpcMaxMessage),
	}, opts...)...)
	inferencepb.RegisterGRPCInferenceServiceServer(s, &grpcService{b: b, obs: h.Observe, emit: h.Emit, wire: h.Wire, arrival: h.Arrival})
	hs := health.NewServer() // "" (the whole server) is SERVING from the start
	hs.SetServingStatus(inferencepb.GRPCInferenceService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(s, hs)
	reflection.Register(s)
	return s
}

// grpcStatus turns a Backend or conversion error into the status to answer
// with: an *kserve.Error keeps its code, a context error its own, anything
// else is INTERNAL (backend.go's contract).
func grpcStatus(err error) error {
	if err == nil {
		return nil
	}
	if ke, ok := errors.AsType[*kserve.Error](err); ok && ke.Code != codes.OK {
		return status.Error(ke.Code, ke.Message)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return status.FromContextError(err).Err()
	}
	return status.Error(codes.Internal, err.Error())
}
