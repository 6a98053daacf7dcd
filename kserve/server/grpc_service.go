package server

// This file implements the unary RPCs of GRPCInferenceService over a Backend.

import (
	"context"
	"errors"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/inferencepb"
	"github.com/netloadgen/netloadgen/triton"
)

// grpcService is GRPCInferenceService over a Backend.
type grpcService struct {
	inferencepb.UnimplementedGRPCInferenceServiceServer
	b       Backend
	obs     GRPCObserver
	emit    EmitFunc
	wire    *EmitListener
	arrival func(context.Context) time.Time
}

// begin starts timing a call when there is an observer to tell.
func (s *grpcService) begin() time.Time {
	if s.obs == nil {
		return time.Time{}
	}
	return time.Now()
}

// done reports a call (err already a status error) to the observer.
func (s *grpcService) done(method, model string, start time.Time, err error) {
	if s.obs != nil {
		s.obs(method, model, status.Code(err), time.Since(start))
	}
}

func (s *grpcService) ServerLive(ctx context.Context, _ *inferencepb.ServerLiveRequest) (*inferencepb.ServerLiveResponse, error) {
	start := s.begin()
	r := &inferencepb.ServerLiveResponse{Live: s.b.ServerLive(ctx)}
	s.done("ServerLive", "", start, nil)
	return r, nil
}

func (s *grpcService) ServerReady(ctx context.Context, _ *inferencepb.ServerReadyRequest) (*inferencepb.ServerReadyResponse, error) {
	start := s.begin()
	r := &inferencepb.ServerReadyResponse{Ready: s.b.ServerReady(ctx)}
	s.done("ServerReady", "", start, nil)
	return r, nil
}

func (s *grpcService) ServerMetadata(ctx context.Context, _ *inferencepb.ServerMetadataRequest) (*inferencepb.ServerMetadataResponse, error) {
	start := s.begin()
	r := kserve.ServerMetadataToPB(s.b.ServerMetadata(ctx))
	s.done("ServerMetadata", "", start, nil)
	return r, nil
}

func (s *grpcService) ModelReady(ctx context.Context, m *inferencepb.ModelReadyRequest) (*inferencepb.ModelReadyResponse, error) {
	start := s.begin()
	ready, err := s.b.ModelReady(ctx, m.GetName(), m.GetVersion())
	if errors.Is(err, kserve.ErrNotFound) {
		// Triton answers OK with ready=false for a model it does not know,
		// and tritonclient's is_model_ready relies on it (it raises on an
		// error status instead of returning False).
		ready, err = false, nil
	}
	err = grpcStatus(err)
	s.done("ModelReady", m.GetName(), start, err)
	if err != nil {
		return nil, err
	}
	return &inferencepb.ModelReadyResponse{Ready: ready}, nil
}

func (s *grpcService) ModelMetadata(ctx context.Context, m *inferencepb.ModelMetadataRequest) (*inferencepb.ModelMetadataResponse, error) {
	start := s.begin()
	md, err := s.b.ModelMetadata(ctx, m.GetName(), m.GetVersion())
	err = grpcStatus(err)
	s.done("ModelMetadata", m.GetName(), start, err)
	if err != nil {
		return nil, err
	}
	return kserve.ModelMetadataToPB(md), nil
}

func (s *grpcService) ModelConfig(ctx context.Context, m *inferencepb.ModelConfigRequest) (*inferencepb.ModelConfigResponse, error) {
	start := s.begin()
	r, err := s.modelConfig(ctx, m)
	s.done("ModelConfig", m.GetName(), start, err)
	return r, err
}

func (s *grpcService) modelConfig(ctx context.Context, m *inferencepb.ModelConfigRequest) (*inferencepb.ModelConfigResponse, error) {
	cfg, err := s.b.ModelConfig(ctx, m.GetName(), m.GetVersion())
	if err != nil {
		return nil, grpcStatus(err)
	}
	pc, err := triton.ModelConfigToPB(cfg)
	if err != nil {
		// The Backend built a config the proto cannot carry: our fault, not the client's.
		return nil, status.Errorf(codes.Internal, "model %s: %v", m.GetName(), err)
	}
	return &inferencepb.ModelConfigResponse{Config: pc}, nil
}

func (s *grpcService) ModelStatistics(ctx context.Context, m *inferencepb.ModelStatisticsRequest) (*inferencepb.ModelStatisticsResponse, error) {
	start := s.begin()
	st, err := s.b.ModelStatistics(ctx, m.GetName(), m.GetVersion())
	err = grpcStatus(err)
	s.done("ModelStatistics", m.GetName(), start, err)
	if err != nil {
		return nil, err
	}
	return triton.StatisticsToPB(st), nil
}

func (s *grpcService) ModelInfer(ctx context.Context, m *inferencepb.ModelInferRequest) (*inferencepb.ModelInferResponse, error) {
	start := s.begin()
	r, err := s.infer(ctx, m)
	s.done("ModelInfer", m.GetModelName(), start, err)
	return r, err
}

// infer decodes, runs and encodes one request; its error is a status error.
func (s *grpcService) infer(ctx context.Context, m *inferencepb.ModelInferRequest) (*inferencepb.ModelInferResponse, error) {
	req, err := kserve.InferRequestFromPB(m)
	if err != nil {
		return nil, grpcStatus(err)
	}
	resp, err := s.b.Infer(ctx, req)
	if err != nil {
		return nil, grpcStatus(err)
	}
	if resp == nil {
		return nil, status.Errorf(codes.Internal, "model %s: no response", req.Model)
	}
	out, err := kserve.InferResponseToPB(resp)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "model %s: bad response: %v", req.Model, err)
	}
	// The protocol echoes the request's model and id. Set them on the message,
	// not on resp: a Backend may hand out one shared response.
	if out.ModelName == "" {
		out.ModelName = req.Model
	}
	if out.Id == "" {
		out.Id = req.ID
	}
	return out, nil
}
