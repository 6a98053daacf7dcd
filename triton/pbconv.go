package triton

// This file converts model configuration and statistics to and from the gRPC
// messages. Enums are held as their proto names (TYPE_FP32, KIND_CPU,
// FORMAT_NONE), the form Triton's JSON uses.

import (
	"fmt"

	"github.com/netloadgen/netloadgen/kserve/inferencepb"
)

// ModelConfigToPB encodes c. An unknown data type, kind or format name is an
// error; an empty kind or format is the proto default (KIND_AUTO,
// FORMAT_NONE), as Triton reads a config that omits them.
func ModelConfigToPB(c ModelConfig) (*inferencepb.ModelConfig, error) {
	m := &inferencepb.ModelConfig{
		Name:         c.Name,
		Platform:     c.Platform,
		Backend:      c.Backend,
		MaxBatchSize: c.MaxBatchSize,
	}
	for _, in := range c.Input {
		dt, err := enumValue("input "+in.Name+" data_type", in.DataType, "", inferencepb.DataType_value)
		if err != nil {
			return nil, err
		}
		f, err := enumValue("input "+in.Name+" format", in.Format, "FORMAT_NONE", inferencepb.ModelInput_Format_value)
		if err != nil {
			return nil, err
		}
		m.Input = append(m.Input, &inferencepb.ModelInput{
			Name:     in.Name,
			DataType: inferencepb.DataType(dt),
			Format:   inferencepb.ModelInput_Format(f),
			Dims:     in.Dims,
			Optional: in.Optional,
		})
	}
	for _, out := range c.Output {
		dt, err := enumValue("output "+out.Name+" data_type", out.DataType, "", inferencepb.DataType_value)
		if err != nil {
			return nil, err
		}
		m.Output = append(m.Output, &inferencepb.ModelOutput{
			Name:          out.Name,
			DataType:      inferencepb.DataType(dt),
			Dims:          out.Dims,
			LabelFilename: out.LabelFilename,
		})
	}
	for _, g := range c.InstanceGroup {
		k, err := enumValue("instance_group "+g.Name+" kind", g.Kind, "KIND_AUTO", inferencepb.ModelInstanceGroup_Kind_value)
		if err != nil {
			return nil, err
		}
		m.InstanceGroup = append(m.InstanceGroup, &inferencepb.ModelInstanceGroup{
			Name:  g.Name,
			Count: g.Count,
			Gpus:  g.GPUs,
			Kind:  inferencepb.ModelInstanceGroup_Kind(k),
		})
	}
	if d := c.DynamicBatching; d != nil {
		m.DynamicBatching = &inferencepb.ModelDynamicBatching{
			PreferredBatchSize:        d.PreferredBatchSize,
			MaxQueueDelayMicroseconds: d.MaxQueueDelayMicroseconds,
			PreserveOrdering:          d.PreserveOrdering,
		}
	}
	if s := c.SequenceBatching; s != nil {
		m.SequenceBatching = &inferencepb.ModelSequenceBatching{MaxSequenceIdleMicroseconds: s.MaxSequenceIdleMicroseconds}
	}
	if p := c.ModelTransactionPolicy; p != nil {
		m.ModelTransactionPolicy = &inferencepb.ModelTransactionPolicy{Decoupled: p.Decoupled}
	}
	return m, nil
}

// enumValue looks name up in a proto enum's value table; "" means def (or is
// an error when def is "" too).
func enumValue(what, name, def string, values map[string]int32) (int32, error) {
	if name == "" {
		name = def
	}
	v, ok := values[name]
	if !ok {
		return 0, fmt.Errorf("model config: %s: unknown value %q", what, name)
	}
	return v, nil
}

// ModelConfigFromPB decodes m. Enum values the proto does not name come out
// as their number, so nothing the server sent is lost.
func ModelConfigFromPB(m *inferencepb.ModelConfig) ModelConfig {
	c := ModelConfig{
		Name:         m.GetName(),
		Platform:     m.GetPlatform(),
		Backend:      m.GetBackend(),
		MaxBatchSize: m.GetMaxBatchSize(),
		// Empty, not nil: the JSON form lists them as [] (Triton prints both).
		Input:  make([]ModelInput, 0, len(m.GetInput())),
		Output: make([]ModelOutput, 0, len(m.GetOutput())),
	}
	for _, in := range m.GetInput() {
		c.Input = append(c.Input, ModelInput{
			Name:     in.GetName(),
			DataType: in.GetDataType().String(),
			Format:   in.GetFormat().String(),
			Dims:     in.GetDims(),
			Optional: in.GetOptional(),
		})
	}
	for _, out := range m.GetOutput() {
		c.Output = append(c.Output, ModelOutput{
			Name:          out.GetName(),
			DataType:      out.GetDataType().String(),
			Dims:          out.GetDims(),
			LabelFilename: out.GetLabelFilename(),
		})
	}
	for _, g := range m.GetInstanceGroup() {
		c.InstanceGroup = append(c.InstanceGroup, InstanceGroup{
			Name:  g.GetName(),
			Count: g.GetCount(),
			GPUs:  g.GetGpus(),
			Kind:  g.GetKind().String(),
		})
	}
	if d := m.GetDynamicBatching(); d != nil {
		c.DynamicBatching = &DynamicBatching{
			PreferredBatchSize:        d.GetPreferredBatchSize(),
			MaxQueueDelayMicroseconds: d.GetMaxQueueDelayMicroseconds(),
			PreserveOrdering:          d.GetPreserveOrdering(),
		}
	}
	if s := m.GetSequenceBatching(); s != nil {
		c.SequenceBatching = &SequenceBatching{MaxSequenceIdleMicroseconds: s.GetMaxSequenceIdleMicroseconds()}
	}
	if p := m.GetModelTransactionPolicy(); p != nil {
		c.ModelTransactionPolicy = &ModelTransactionPolicy{Decoupled: p.GetDecoupled()}
	}
	return c
}

// StatisticsToPB encodes a statistics response.
func StatisticsToPB(s StatisticsResponse) *inferencepb.ModelStatisticsResponse {
	m := &inferencepb.ModelStatisticsResponse{}
	for _, ms := range s.ModelStats {
		is := ms.InferenceStats
		pm := &inferencepb.ModelStatistics{
			Name:           ms.Name,
			Version:        ms.Version,
			LastInference:  ms.LastInference,
			InferenceCount: ms.InferenceCount,
			ExecutionCount: ms.ExecutionCount,
			InferenceStats: &inferencepb.InferStatistics{
				Success:       durationToPB(is.Success),
				Fail:          durationToPB(is.Fail),
				Queue:         durationToPB(is.Queue),
				ComputeInput:  durationToPB(is.ComputeInput),
				ComputeInfer:  durationToPB(is.ComputeInfer),
				ComputeOutput: durationToPB(is.ComputeOutput),
				CacheHit:      durationToPB(is.CacheHit),
				CacheMiss:     durationToPB(is.CacheMiss),
			},
		}
		for _, b := range ms.BatchStats {
			pm.BatchStats = append(pm.BatchStats, &inferencepb.InferBatchStatistics{
				BatchSize:     b.BatchSize,
				ComputeInput:  durationToPB(b.ComputeInput),
				ComputeInfer:  durationToPB(b.ComputeInfer),
				ComputeOutput: durationToPB(b.ComputeOutput),
			})
		}
		m.ModelStats = append(m.ModelStats, pm)
	}
	return m
}

// StatisticsFromPB decodes a statistics response; absent durations are zero.
func StatisticsFromPB(m *inferencepb.ModelStatisticsResponse) StatisticsResponse {
	// Empty, not nil, slices: the JSON form is [] when there is nothing.
	s := StatisticsResponse{ModelStats: make([]ModelStatistics, 0, len(m.GetModelStats()))}
	for _, pm := range m.GetModelStats() {
		is := pm.GetInferenceStats()
		ms := ModelStatistics{
			Name:           pm.GetName(),
			Version:        pm.GetVersion(),
			LastInference:  pm.GetLastInference(),
			InferenceCount: pm.GetInferenceCount(),
			ExecutionCount: pm.GetExecutionCount(),
			InferenceStats: InferStatistics{
				Success:       durationFromPB(is.GetSuccess()),
				Fail:          durationFromPB(is.GetFail()),
				Queue:         durationFromPB(is.GetQueue()),
				ComputeInput:  durationFromPB(is.GetComputeInput()),
				ComputeInfer:  durationFromPB(is.GetComputeInfer()),
				ComputeOutput: durationFromPB(is.GetComputeOutput()),
				CacheHit:      durationFromPB(is.GetCacheHit()),
				CacheMiss:     durationFromPB(is.GetCacheMiss()),
			},
			BatchStats: make([]BatchStatistics, 0, len(pm.GetBatchStats())),
		}
		for _, b := range pm.GetBatchStats() {
			ms.BatchStats = append(ms.BatchStats, BatchStatistics{
				BatchSize:     b.GetBatchSize(),
				ComputeInput:  durationFromPB(b.GetComputeInput()),
				ComputeInfer:  durationFromPB(b.GetComputeInfer()),
				ComputeOutput: durationFromPB(b.GetComputeOutput()),
			})
		}
		s.ModelStats = append(s.ModelStats, ms)
	}
	return s
}

func durationToPB(d Duration) *inferencepb.StatisticDuration {
	return &inferencepb.StatisticDuration{Count: d.Count, Ns: d.NS}
}

func durationFromPB(d *inferencepb.StatisticDuration) Duration {
	return Duration{Count: d.GetCount(), NS: d.GetNs()}
}
