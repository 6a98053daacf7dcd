package sim

import (
	"context"
	"slices"
	"testing"

	"github.com/netloadgen/netloadgen/kserve"
)

func TestCachingModelAnswersRepeatsWithoutExecuting(t *testing.T) {
	for _, tc := range []struct {
		flag      string
		wantCache bool
	}{
		{"name=c,fn=classify,classes=10,dims=8,max_batch=4,cache=1", true},
		{"name=c,fn=classify,classes=10,dims=8,max_batch=4", false},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			spec, err := ParseModelFlag(tc.flag)
			if err != nil {
				t.Fatal(err)
			}
			s, err := New([]ModelSpec{spec})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			req := func(v float32) *kserve.InferRequest {
				return &kserve.InferRequest{Model: "c", Inputs: []kserve.Tensor{{Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{1, 8}, Data: fp32s(v, 1, 2, 3, 4, 5, 6, 7)}}}
			}
			var first []byte
			for i, v := range []float32{0.5, 0.5, 0.5, 9} {
				resp, err := s.Infer(context.Background(), req(v))
				if err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					first = resp.Outputs[0].Data
				} else if i < 3 && !slices.Equal(resp.Outputs[0].Data, first) {
					t.Fatalf("request %d: a repeat answered differently", i)
				}
			}
			st, err := s.ModelStatistics(context.Background(), "c", "")
			if err != nil {
				t.Fatal(err)
			}
			ms := st.ModelStats[0]
			wantExec, wantHits := uint64(4), uint64(0)
			if tc.wantCache {
				wantExec, wantHits = 2, 2
			}
			if ms.ExecutionCount != wantExec || ms.InferenceStats.CacheHit.Count != wantHits || ms.InferenceStats.Success.Count != 4 {
				t.Fatalf("executions %d (want %d), cache hits %d (want %d), successes %d (want 4)",
					ms.ExecutionCount, wantExec, ms.InferenceStats.CacheHit.Count, wantHits, ms.InferenceStats.Success.Count)
			}
		})
	}
}

func TestCacheFlagErrors(t *testing.T) {
	for _, f := range []string{
		"name=c,cache_hit=1ms",
		"name=c,cache=maybe",
		"name=c,cache=1,cache_hit=-1ms",
	} {
		if _, err := ParseModelFlag(f); err == nil {
			t.Errorf("%s: accepted", f)
		}
	}
	s, err := ParseModelFlag("name=c,cache=true,cache_hit=50us")
	if err != nil || !s.Cache || s.CacheHitLatency.D().Microseconds() != 50 {
		t.Fatalf("cache=true,cache_hit=50us: %+v, %v", s, err)
	}
}
