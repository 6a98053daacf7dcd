package runner

import (
	"os"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/search"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// v0.5 MultiStream against a dynamically batched model whose batch takes
// base + N × per-sample: 4.5 ms + N × 1 ms fits the 50 ms interval up to
// N = 45, the true maximum.
func TestMultiStreamFindsTheTrueMaximum(t *testing.T) {
	if os.Getenv(benchEnv) == "" {
		t.Skip("set " + benchEnv + "=1 (bench/search.sh)")
	}
	const trueMax = 45
	p := startProxy(t, "name=m,fn=echo,dims=16,max_batch=64,latency=constant:4500us,per_sample=1ms,instances=1,batch=64")
	for _, transport := range []string{"http", "grpc"} {
		t.Run(transport, func(t *testing.T) {
			s, err := loadgen.NewSettings(loadgen.RulesetV05, trace.MultiStream, "")
			if err != nil {
				t.Fatal(err)
			}
			s.MinDurationMs, s.MinQueryCount, s.MultiStreamTargetQPS = 3000, 1, 20
			planner, algo, unit, err := search.Plan(s, search.Options{Start: 8})
			if err != nil {
				t.Fatal(err)
			}
			base := Spec{Target: targetOf(p, transport), Model: "m", Settings: s, TotalSamples: 1024, PerformanceSamples: 1024}
			res, err := search.Run(t.Context(), search.Config{Planner: planner, Trials: &networkTrials{Base: base, EarlyVerdict: true}, Dir: t.TempDir(),
				Ruleset: "v0.5", Scenario: "MultiStream", Algorithm: algo, Unit: unit})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("FIGURE MultiStream %s: true max %d, found %v, %d trials, %.1f s\n%s", transport, trueMax, res.Peak, len(res.Trials), res.DurationS, search.Summary(res))
			if !res.Found || (res.Peak != trueMax && res.Peak != trueMax-1) {
				t.Errorf("found %v (found=%v), want %d or %d", res.Peak, res.Found, trueMax, trueMax-1)
			}
		})
	}
}

// The same search with early verdicts on and off: the answer must match,
// and the time with them at most half.
func TestEarlyVerdictHalvesTheSearch(t *testing.T) {
	if os.Getenv(benchEnv) == "" {
		t.Skip("set " + benchEnv + "=1 (bench/search.sh)")
	}
	c := peakCase{"M/D/1 1ms http", "name=m,fn=echo,dims=16,max_batch=0,latency=constant:1ms,instances=1", queueModel{1, constantLaw(time.Millisecond)}, "http", 100, 0}
	p := startProxy(t, c.flag)
	s := serverSettings(t, loadgen.RulesetLoadGen6, 3000)
	// An upper bound far above the capacity, as a capacity planner who does
	// not know it would give: the widening overshoots to 8×.
	var times [2]float64
	var peaks [2]float64
	for i, early := range []bool{true, false} {
		res := searchPeak(t, p, c, s, 20, early)
		times[i], peaks[i] = res.DurationS, res.Peak
		t.Logf("FIGURE early verdict %v: peak %.1f, %d trials, %.1f s\n%s", early, res.Peak, len(res.Trials), res.DurationS, search.Summary(res))
	}
	t.Logf("FIGURE early verdict: %.1f s vs %.1f s without (ratio %.2f); peaks %.1f vs %.1f", times[0], times[1], times[0]/times[1], peaks[0], peaks[1])
	if times[0] > times[1]/2 {
		t.Errorf("with early verdicts %.1f s, without %.1f s: not at most half", times[0], times[1])
	}
	if peaks[0] != peaks[1] {
		t.Errorf("peaks differ: %v with early verdicts, %v without", peaks[0], peaks[1])
	}
}
