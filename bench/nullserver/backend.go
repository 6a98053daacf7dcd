package main

import (
	"context"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/triton"
)

// modelName is the one model served; its shape matches sutproxy's built-in
// null model (INPUT0 FP32 [-1,16] -> OUTPUT0 FP32 [-1,16]), so the same
// loadgend and peer commands run against both.
const modelName = "null"

// nullBackend answers the control-plane calls (health, metadata, config)
// that loadgend makes before a run; inference never reaches it on the hot
// path (see fixedInfer and the gRPC interceptor).
type nullBackend struct{ f *fixed }

func (nullBackend) ServerLive(context.Context) bool  { return true }
func (nullBackend) ServerReady(context.Context) bool { return true }

func (nullBackend) ServerMetadata(context.Context) kserve.ServerMetadata {
	return kserve.ServerMetadata{Name: "nullserver", Version: "1", Extensions: []string{kserve.ExtBinaryTensorData}}
}

func (nullBackend) ModelReady(_ context.Context, model, _ string) (bool, error) {
	if model != modelName {
		return false, kserve.ErrNotFound
	}
	return true, nil
}

func (nullBackend) ModelMetadata(_ context.Context, model, _ string) (kserve.ModelMetadata, error) {
	if model != modelName {
		return kserve.ModelMetadata{}, kserve.ErrNotFound
	}
	t := []kserve.TensorMetadata{{Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{-1, 16}}}
	o := []kserve.TensorMetadata{{Name: "OUTPUT0", Datatype: kserve.FP32, Shape: []int64{-1, 16}}}
	return kserve.ModelMetadata{Name: modelName, Versions: []string{"1"}, Platform: "null", Inputs: t, Outputs: o}, nil
}

func (b nullBackend) Infer(_ context.Context, req *kserve.InferRequest) (*kserve.InferResponse, error) {
	if req.Model != modelName {
		return nil, kserve.ErrNotFound
	}
	n := int64(1)
	if len(req.Inputs) > 0 && len(req.Inputs[0].Shape) > 0 {
		n = req.Inputs[0].Shape[0]
	}
	return b.f.answer(n).resp, nil
}

func (nullBackend) ModelConfig(_ context.Context, model, _ string) (triton.ModelConfig, error) {
	if model != modelName {
		return triton.ModelConfig{}, kserve.ErrNotFound
	}
	return triton.ModelConfig{
		Name: modelName, Platform: "null", MaxBatchSize: maxBatch,
		Input:  []triton.ModelInput{{Name: "INPUT0", DataType: "TYPE_FP32", Dims: []int64{16}}},
		Output: []triton.ModelOutput{{Name: "OUTPUT0", DataType: "TYPE_FP32", Dims: []int64{16}}},
	}, nil
}

func (nullBackend) ModelStatistics(context.Context, string, string) (triton.StatisticsResponse, error) {
	return triton.StatisticsResponse{}, nil
}
