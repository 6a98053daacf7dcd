package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/search"
)

// A loadgen6 Server trial of a generative endpoint with token latencies is
// judged by TTFT and TPOT, not query latency (whose bound is 0, as
// mlperf.conf sets it for the LLM tasks): at a twentieth of the simulated
// LLM's capacity it passes; at four times it, the search's early verdict
// stops it on a token bound.
func TestTrialJudgedByTokens(t *testing.T) {
	// 4 sequences of 8 tokens at 2 ms a step: about 250 requests/s.
	p := startProxy(t, "name=chat,kind=llm,max_seqs=4,step=2ms,per_seq=0us,prefill=1us")
	prompts, err := genai.NewSynthetic(genai.SyntheticOptions{Total: 64, Input: genai.Fixed(16), Output: genai.Fixed(8)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		qps  float64
		pass bool
	}{{12.5, true}, {1000, false}} {
		s := serverSettings(t, loadgen.RulesetLoadGen6, 800)
		s.ServerTargetLatencyNs = 0
		s.UseTokenLatencies, s.ServerTTFTLatencyNs, s.ServerTPOTLatencyNs = true, uint64(100*time.Millisecond), uint64(20*time.Millisecond)
		base := Spec{Target: targetOf(p, "http"), Model: "chat", Settings: s, Prompts: prompts, TotalSamples: 64, PerformanceSamples: 64}
		n := &networkTrials{Base: base, EarlyVerdict: true, Judge: search.Judge{By: search.JudgedByTokenLatency}}
		tr, err := n.RunTrial(t.Context(), search.TrialRequest{Index: 1, Target: tc.qps, Phase: search.PhaseBase, Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if tr.Pass != tc.pass || tr.Tokens == nil || tr.Criteria == nil || tr.Criteria.LatencyMet != tc.pass {
			t.Fatalf("%v QPS: pass %v (want %v), tokens %+v, criteria %+v, early verdict %q", tc.qps, tr.Pass, tc.pass, tr.Tokens, tr.Criteria, tr.EarlyVerdict)
		}
		if !tc.pass && !strings.Contains(tr.EarlyVerdict, "TTFT bound") && !strings.Contains(tr.EarlyVerdict, "TPOT bound") {
			t.Errorf("%v QPS: not stopped on a token bound: %q", tc.qps, tr.EarlyVerdict)
		}
		if tc.pass && (tr.Tokens.TTFTBoundMs != 100 || tr.Tokens.TPOTBoundMs != 20 || tr.Tokens.TTFTMs <= 0) {
			t.Errorf("%v QPS: token figures %+v", tc.qps, tr.Tokens)
		}
	}
}
