package sim

import (
	"context"
	"slices"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/triton"
)

// ModelConfig answers Triton's model configuration for a model's spec: dims
// without the batch dimension when the model batches (PROTOCOL.md §5).
func (s *Server) ModelConfig(_ context.Context, name, version string) (triton.ModelConfig, error) {
	e, err := s.engine(name, version)
	if err != nil {
		return triton.ModelConfig{}, err
	}
	spec := e.spec
	cfg := triton.ModelConfig{
		Name:          spec.Name,
		Platform:      spec.Platform,
		MaxBatchSize:  int32(spec.MaxBatchSize),
		InstanceGroup: []triton.InstanceGroup{{Name: spec.Name, Count: int32(spec.Instances), Kind: "KIND_CPU"}},
	}
	for _, t := range spec.Inputs {
		cfg.Input = append(cfg.Input, triton.ModelInput{Name: t.Name, DataType: TritonType(t.Datatype), Dims: configDims(t.Shape, spec.MaxBatchSize)})
	}
	for _, t := range spec.Outputs {
		cfg.Output = append(cfg.Output, triton.ModelOutput{Name: t.Name, DataType: TritonType(t.Datatype), Dims: configDims(t.Shape, spec.MaxBatchSize)})
	}
	if spec.LLM != nil {
		cfg.ModelTransactionPolicy = &triton.ModelTransactionPolicy{Decoupled: true}
		cfg.Backend = "sim-llm"
	}
	if b := spec.DynamicBatching; b != nil {
		cfg.DynamicBatching = &triton.DynamicBatching{
			PreferredBatchSize:        []int32{int32(b.MaxBatchSize)},
			MaxQueueDelayMicroseconds: uint64(b.MaxQueueDelay.D().Microseconds()),
		}
	}
	return cfg, nil
}

func configDims(shape []int64, maxBatch int) []int64 {
	if maxBatch > 0 {
		return slices.Clone(shape[1:])
	}
	return slices.Clone(shape)
}

// TritonType is Triton's config enum name for a datatype: TYPE_ and the
// protocol's name, except BYTES, which Triton calls TYPE_STRING.
func TritonType(d kserve.DataType) string {
	if d == kserve.Bytes {
		return "TYPE_STRING"
	}
	if !d.Valid() {
		return "TYPE_INVALID"
	}
	return "TYPE_" + string(d)
}
