package runner

import (
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/search"
	"github.com/netloadgen/netloadgen/pkg/sutproxy/sutproxytest"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// tinyLLM answers 16 tokens about 2 ms apart: a query latency of 30 ms or
// more, far over the 5 ms latency bound tokenSearchSettings keep, while
// TTFT and TPOT are a few ms.
const tinyLLM = "name=llm,kind=llm,max_seqs=64,step=2ms,per_seq=10us,prefill=1us"

func tokenSearchSettings(t *testing.T) loadgen.Settings {
	s, err := loadgen.NewSettings(loadgen.RulesetLoadGen6, trace.Server, "")
	if err != nil {
		t.Fatal(err)
	}
	s.MinDurationMs, s.MinQueryCount = 300, 1
	s.ServerTargetLatencyNs, s.ServerTargetLatencyPercentile = 5e6, 0.9
	return s
}

// tokenSearch runs a loadgen6 find-peak from 20 QPS capped at 40 against
// tinyLLM over openai-chat, trials stopped early where the search may.
func tokenSearch(t *testing.T, s loadgen.Settings, o search.Options) *search.Result {
	t.Helper()
	p := sutproxytest.Start(t, tinyLLM)
	prompts, err := genai.NewSynthetic(genai.SyntheticOptions{Total: 256, Input: genai.Fixed(8), Output: genai.Fixed(16), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	base := Spec{Target: sutproxytest.Target(p, "http"), Model: "llm", API: genai.APIOpenAIChat, Settings: s, Prompts: prompts,
		TotalSamples: 256, PerformanceSamples: 256, OutDir: t.TempDir()}
	o.Start, o.Upper = 20, 40
	res, err := FindPeak(t.Context(), base, Search{Options: o, EarlyVerdict: true, MaxTrials: 4}, SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A search with token latencies judges its trials by TTFT and TPOT, not
// by the query latency: runs whose every query is over the latency bound
// pass when TTFT and TPOT are within theirs (the search's own early
// verdict, which watches the query latency, must not cut them), and fail
// on a TPOT bound the model cannot hold, with the figures in search.json.
func TestTokenSearchJudgesByTTFTAndTPOT(t *testing.T) {
	t.Run("within", func(t *testing.T) {
		s := tokenSearchSettings(t)
		s.UseTokenLatencies, s.ServerTTFTLatencyNs, s.ServerTPOTLatencyNs = true, 1e9, 1e9
		res := tokenSearch(t, s, search.Options{})
		if res.JudgedBy != search.JudgedByTokenLatency {
			t.Errorf("judged by %q, want %q", res.JudgedBy, search.JudgedByTokenLatency)
		}
		if !res.Found || res.Peak != 40 || len(res.Trials) != 2 {
			t.Fatalf("peak %v found %v after %d trials, want 40 after 2: %s\n%s", res.Peak, res.Found, len(res.Trials), res.EndReason, search.Summary(res))
		}
		for _, tr := range res.Trials {
			tk := tr.TokenLatencies
			if tk == nil || !tk.TTFTMet || !tk.TPOTMet || tk.TPOTBoundMs != 1000 || tk.TPOTMs <= 0 || tr.EarlyVerdict != "" {
				t.Errorf("trial %d: token figures %+v, early verdict %q", tr.Index, tk, tr.EarlyVerdict)
			}
			if tr.TailLatencyMs <= 5 {
				t.Errorf("trial %d: p90 latency %v ms, want over the 5 ms bound (else the test proves nothing)", tr.Index, tr.TailLatencyMs)
			}
		}
	})
	t.Run("tpot over", func(t *testing.T) {
		s := tokenSearchSettings(t)
		s.UseTokenLatencies, s.ServerTTFTLatencyNs, s.ServerTPOTLatencyNs = true, 1e9, 5e5
		res := tokenSearch(t, s, search.Options{})
		if res.Found || len(res.Trials) != 1 {
			t.Fatalf("found %v after %d trials, want the base trial to fail\n%s", res.Found, len(res.Trials), search.Summary(res))
		}
		tk := res.Trials[0].TokenLatencies
		if res.Trials[0].Pass || tk == nil || tk.TPOTMet || !tk.TTFTMet || tk.TPOTMs <= 0.5 {
			t.Errorf("trial: pass %v, token figures %+v", res.Trials[0].Pass, tk)
		}
	})
}

// A goodput search passes a trial when the share of its samples meeting
// the SLO reaches the asked percentage, whatever the latency bound says.
func TestGoodputSearchJudgesBySLOShare(t *testing.T) {
	for _, c := range []struct {
		name string
		slo  genai.SLO
		pass bool
	}{
		{"all meet", genai.SLO{TTFT: time.Second, TPOT: time.Second}, true},
		{"none meet", genai.SLO{TPOT: 500 * time.Microsecond}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := tokenSearchSettings(t)
			s.Engine.SLO = c.slo
			res := tokenSearch(t, s, search.Options{GoodputPercent: 90})
			if res.JudgedBy != search.JudgedByGoodput || res.GoodputPercent != 90 || res.SLO == nil {
				t.Errorf("judged by %q at %v%% with SLO %v", res.JudgedBy, res.GoodputPercent, res.SLO)
			}
			if len(res.Trials) == 0 || res.Trials[0].Pass != c.pass || res.Found != c.pass {
				t.Fatalf("trials %d, found %v, want the base trial to pass: %v\n%s", len(res.Trials), res.Found, c.pass, search.Summary(res))
			}
			g := res.Trials[0].Goodput
			if g == nil || g.SamplesIssued == 0 || (c.pass && g.Percent != 100) || (!c.pass && g.Percent != 0) {
				t.Errorf("goodput %+v", g)
			}
		})
	}
}
