package sim

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/triton"
)

func TestModelConfigAndMetadata(t *testing.T) {
	s, err := New(DefaultModels(), WithVersion("1.2.3"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	meta := s.ServerMetadata(ctx)
	if meta.Name != "sutproxy" || meta.Version != "1.2.3" || !slices.Contains(meta.Extensions, "statistics") ||
		!slices.Contains(meta.Extensions, "model_configuration") || !slices.Contains(meta.Extensions, "binary_tensor_data") {
		t.Errorf("server metadata %+v", meta)
	}
	cfg, err := s.ModelConfig(ctx, "batched", "")
	if err != nil {
		t.Fatal(err)
	}
	want := triton.ModelConfig{
		Name: "batched", Platform: "sim", MaxBatchSize: 32,
		Input:           []triton.ModelInput{{Name: "INPUT0", DataType: "TYPE_FP32", Dims: []int64{64}}},
		Output:          []triton.ModelOutput{{Name: "OUTPUT0", DataType: "TYPE_FP32", Dims: []int64{10}}},
		InstanceGroup:   []triton.InstanceGroup{{Name: "batched", Count: 1, Kind: "KIND_CPU"}},
		DynamicBatching: &triton.DynamicBatching{PreferredBatchSize: []int32{32}, MaxQueueDelayMicroseconds: 1000},
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("config\n got %+v\nwant %+v", cfg, want)
	}
	md, err := s.ModelMetadata(ctx, "simple", "1")
	if err != nil {
		t.Fatal(err)
	}
	wantMD := kserve.ModelMetadata{Name: "simple", Versions: []string{"1"}, Platform: "sim",
		Inputs:  []kserve.TensorMetadata{{Name: "INPUT0", Datatype: kserve.Int32, Shape: []int64{-1, 16}}, {Name: "INPUT1", Datatype: kserve.Int32, Shape: []int64{-1, 16}}},
		Outputs: []kserve.TensorMetadata{{Name: "OUTPUT0", Datatype: kserve.Int32, Shape: []int64{-1, 16}}, {Name: "OUTPUT1", Datatype: kserve.Int32, Shape: []int64{-1, 16}}}}
	if !reflect.DeepEqual(md, wantMD) {
		t.Errorf("metadata\n got %+v\nwant %+v", md, wantMD)
	}
	if ready, err := s.ModelReady(ctx, "simple", ""); !ready || err != nil {
		t.Errorf("ModelReady: %v %v", ready, err)
	}
	for _, call := range []func() error{
		func() error { _, err := s.ModelConfig(ctx, "nope", ""); return err },
		func() error { _, err := s.ModelMetadata(ctx, "simple", "2"); return err },
		func() error { _, err := s.ModelReady(ctx, "nope", ""); return err },
		func() error { _, err := s.ModelStatistics(ctx, "nope", ""); return err },
	} {
		if err := call(); !errors.Is(err, kserve.ErrNotFound) {
			t.Errorf("unknown model or version: %v, want not found", err)
		}
	}
}

func TestStatisticsSelectsVersions(t *testing.T) {
	spec := ModelSpec{Name: "v", Versions: []string{"1", "2"}, Function: Echo,
		Inputs: []TensorSpec{{Name: "x", Datatype: kserve.Uint8, Shape: []int64{2}}}}
	s, err := New([]ModelSpec{spec, {Name: "w", Function: Echo, Inputs: spec.Inputs}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	resp, err := s.Infer(ctx, &kserve.InferRequest{Model: "v", Inputs: []kserve.Tensor{{Name: "x", Datatype: kserve.Uint8, Shape: []int64{2}, Data: []byte{1, 2}}}})
	if err != nil || resp.Version != "2" {
		t.Fatalf("default version: %v %v, want the last listed, 2", resp, err)
	}
	tests := []struct {
		model, version string
		want           []string
	}{
		{"", "", []string{"v/1", "v/2", "w/1"}},
		{"v", "", []string{"v/1", "v/2"}},
		{"v", "2", []string{"v/2"}},
	}
	for _, tt := range tests {
		st, err := s.ModelStatistics(ctx, tt.model, tt.version)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range st.ModelStats {
			got = append(got, m.Name+"/"+m.Version)
			if wantCount := uint64(0); m.Name+"/"+m.Version == "v/2" {
				wantCount = 1
				if m.InferenceCount != wantCount {
					t.Errorf("v/2 inference_count %d, want 1", m.InferenceCount)
				}
			} else if m.InferenceCount != wantCount {
				t.Errorf("%s/%s inference_count %d, want 0", m.Name, m.Version, m.InferenceCount)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("statistics(%q, %q) = %v, want %v", tt.model, tt.version, got, tt.want)
		}
	}
}

func TestCollector(t *testing.T) {
	s, e, clk := newTestEngine(t, 2, constant(2*ms), nil)
	for _, n := range []int{1, 3, 3} {
		mustEnqueue(t, e, n, clk)
	}
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(s.Collector()); err != nil {
		t.Fatal(err)
	}
	read := func() map[string]*dto.Metric {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]*dto.Metric{}
		for _, mf := range mfs {
			out[mf.GetName()] = mf.GetMetric()[0]
		}
		return out
	}
	m := read()
	if q, b := m["sutproxy_sim_queue_requests"].GetGauge().GetValue(), m["sutproxy_sim_busy_instances"].GetGauge().GetValue(); q != 1 || b != 2 {
		t.Errorf("queue %v, busy %v; want 1 and 2", q, b)
	}
	if q := m["sutproxy_queue_depth"].GetGauge().GetValue(); q != 1 {
		t.Errorf("sutproxy_queue_depth %v, want 1", q)
	}
	clk.Advance(time.Second)
	after := read()
	h := after["sutproxy_sim_execution_batch_size"].GetHistogram()
	if h.GetSampleCount() != 3 || h.GetSampleSum() != 7 {
		t.Errorf("batch size histogram: %d executions, sum %v; want 3 and 7", h.GetSampleCount(), h.GetSampleSum())
	}
	if k := after["sutproxy_batch_size"].GetHistogram(); k.GetSampleCount() != 3 || k.GetSampleSum() != 7 {
		t.Errorf("sutproxy_batch_size: %d executions, sum %v; want 3 and 7", k.GetSampleCount(), k.GetSampleSum())
	}
	for _, b := range h.GetBucket() {
		want := map[float64]uint64{1: 1, 2: 1, 4: 3, 8: 3}[b.GetUpperBound()]
		if b.GetCumulativeCount() != want {
			t.Errorf("bucket le=%v: %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), want)
		}
	}
}
