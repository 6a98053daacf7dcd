package triton

import (
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/netloadgen/netloadgen/kserve/inferencepb"
)

func TestModelConfigRoundTrip(t *testing.T) {
	c := ModelConfig{
		Name: "resnet50", Platform: "onnxruntime_onnx", Backend: "onnxruntime", MaxBatchSize: 8,
		Input: []ModelInput{
			{Name: "x", DataType: "TYPE_FP32", Format: "FORMAT_NCHW", Dims: []int64{3, 224, 224}},
			{Name: "mask", DataType: "TYPE_BOOL", Format: "FORMAT_NONE", Dims: []int64{-1}, Optional: true},
		},
		Output: []ModelOutput{
			{Name: "probs", DataType: "TYPE_FP16", Dims: []int64{1000}, LabelFilename: "labels.txt"},
			{Name: "label", DataType: "TYPE_STRING", Dims: []int64{1}},
		},
		InstanceGroup:          []InstanceGroup{{Name: "g0", Count: 2, GPUs: []int32{0, 1}, Kind: "KIND_GPU"}, {Count: 1, Kind: "KIND_CPU"}},
		DynamicBatching:        &DynamicBatching{PreferredBatchSize: []int32{4, 8}, MaxQueueDelayMicroseconds: 100, PreserveOrdering: true},
		SequenceBatching:       &SequenceBatching{MaxSequenceIdleMicroseconds: 5000000},
		ModelTransactionPolicy: &ModelTransactionPolicy{Decoupled: true},
	}
	m, err := ModelConfigToPB(c)
	if err != nil {
		t.Fatal(err)
	}
	// The enums travel as Triton's numbers (PROTOCOL.md §5).
	if m.Input[0].DataType != 11 || m.Input[0].Format != 2 || m.Output[1].DataType != 13 || m.InstanceGroup[1].Kind != 2 {
		t.Errorf("enum numbers: %v", m)
	}
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back inferencepb.ModelConfig
	if err := proto.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if got := ModelConfigFromPB(&back); !reflect.DeepEqual(got, c) {
		t.Errorf("got  %+v\nwant %+v", got, c)
	}
}

func TestModelConfigDefaultsAndErrors(t *testing.T) {
	m, err := ModelConfigToPB(ModelConfig{
		Name:          "m",
		Input:         []ModelInput{{Name: "x", DataType: "TYPE_INT8", Dims: []int64{1}}},
		InstanceGroup: []InstanceGroup{{Count: 1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := ModelConfigFromPB(m)
	if got.Input[0].Format != "FORMAT_NONE" || got.InstanceGroup[0].Kind != "KIND_AUTO" {
		t.Errorf("defaults: %+v", got)
	}
	if got.Output == nil || got.DynamicBatching != nil {
		t.Errorf("absent parts: output %v (want empty, not nil), dynamic batching %v (want nil)", got.Output, got.DynamicBatching)
	}

	bad := []struct {
		name string
		c    ModelConfig
		want string
	}{
		{"input type", ModelConfig{Input: []ModelInput{{Name: "x", DataType: "FP32"}}}, `"FP32"`},
		{"missing type", ModelConfig{Output: []ModelOutput{{Name: "y"}}}, "output y"},
		{"format", ModelConfig{Input: []ModelInput{{Name: "x", DataType: "TYPE_FP32", Format: "NHWC"}}}, "NHWC"},
		{"kind", ModelConfig{InstanceGroup: []InstanceGroup{{Kind: "CPU"}}}, "CPU"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ModelConfigToPB(tc.c); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %s", err, tc.want)
			}
		})
	}
}

func TestStatisticsRoundTrip(t *testing.T) {
	d := func(c, ns uint64) Duration { return Duration{Count: c, NS: ns} }
	s := StatisticsResponse{ModelStats: []ModelStatistics{
		{
			Name: "a", Version: "1", LastInference: 1700000000000, InferenceCount: 10, ExecutionCount: 4,
			InferenceStats: InferStatistics{
				Success: d(10, 1000), Fail: d(1, 2), Queue: d(10, 300), ComputeInput: d(4, 40),
				ComputeInfer: d(4, 400), ComputeOutput: d(4, 44), CacheHit: d(2, 20), CacheMiss: d(8, 80),
			},
			BatchStats: []BatchStatistics{{BatchSize: 1, ComputeInput: d(1, 1), ComputeInfer: d(1, 2), ComputeOutput: d(1, 3)},
				{BatchSize: 4, ComputeInput: d(3, 4), ComputeInfer: d(3, 5), ComputeOutput: d(3, 6)}},
		},
		{Name: "b", Version: "3", BatchStats: []BatchStatistics{}},
	}}
	b, err := proto.Marshal(StatisticsToPB(s))
	if err != nil {
		t.Fatal(err)
	}
	var back inferencepb.ModelStatisticsResponse
	if err := proto.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if got := StatisticsFromPB(&back); !reflect.DeepEqual(got, s) {
		t.Errorf("got  %+v\nwant %+v", got, s)
	}
	if got := StatisticsFromPB(&inferencepb.ModelStatisticsResponse{}); got.ModelStats == nil || len(got.ModelStats) != 0 {
		t.Errorf("empty response: %#v, want an empty list", got)
	}
}
