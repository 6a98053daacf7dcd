package search

import (
	"errors"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// JudgeFor picks goodput when asked (with an SLO), the token-latency
// constraint for a Server run with token latencies, else the ruleset's.
func TestJudgeFor(t *testing.T) {
	s, err := loadgen.NewSettings(loadgen.RulesetLoadGen6, trace.Server, "")
	if err != nil {
		t.Fatal(err)
	}
	if j, err := JudgeFor(s, Options{}); err != nil || j.By != JudgedByLatency {
		t.Errorf("plain loadgen6: %+v %v", j, err)
	}
	s.UseTokenLatencies = true
	if j, err := JudgeFor(s, Options{}); err != nil || j.By != JudgedByTokenLatency {
		t.Errorf("token latencies: %+v %v", j, err)
	}
	if _, err := JudgeFor(s, Options{GoodputPercent: 90}); !errors.Is(err, ErrConfig) {
		t.Errorf("goodput without an SLO: %v, want ErrConfig", err)
	}
	s.Engine.SLO = genai.SLO{TTFT: time.Second}
	for _, g := range []float64{-1, 100.5} {
		if _, err := JudgeFor(s, Options{GoodputPercent: g}); !errors.Is(err, ErrConfig) {
			t.Errorf("goodput %v: %v, want ErrConfig", g, err)
		}
	}
	if j, err := JudgeFor(s, Options{GoodputPercent: 90}); err != nil || j.By != JudgedByGoodput || j.GoodputPercent != 90 || j.SLO != s.Engine.SLO {
		t.Errorf("goodput: %+v %v", j, err)
	}
}

// A goodput trial passes at exactly G% of the samples issued meeting the
// SLO, fails one sample below, and whatever its latency constraint says.
func TestGoodputPasses(t *testing.T) {
	j := Judge{By: JudgedByGoodput, GoodputPercent: 90}
	res := func(met, issued int64) *loadgen.Result {
		return &loadgen.Result{Ruleset: loadgen.RulesetLoadGen6, Scenario: "Server", SamplesIssued: issued,
			PerfConstraintsMet: false, Tokens: &loadgen.TokenResult{SamplesMeetingSLO: &met}}
	}
	if !j.Passes(res(90, 100)) {
		t.Error("90 of 100 at 90%: want a pass")
	}
	if j.Passes(res(89, 100)) {
		t.Error("89 of 100 at 90%: want a fail")
	}
	if j.Passes(res(0, 0)) || j.Passes(&loadgen.Result{SamplesIssued: 10}) {
		t.Error("no samples, or no SLO count: want a fail")
	}
	tr := TrialResultOf(res(95, 100), time.Second, j)
	if !tr.Pass || tr.Goodput == nil || tr.Goodput.Percent != 95 || tr.Goodput.SamplesMeetingSLO != 95 {
		t.Errorf("trial %+v goodput %+v", tr, tr.Goodput)
	}
}
