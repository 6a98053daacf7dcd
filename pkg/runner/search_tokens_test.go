package runner

import (
	"math"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/search"
	"github.com/netloadgen/netloadgen/pkg/sim"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// tokenLLM is the simulated LLM of the token-constraint peak: 16
// sequences, a step of 4 ms + 0.25 ms a sequence + 20 µs a prefilled
// token; with 32 input and 32 output tokens, about 60 requests/s at most.
const tokenLLM = "name=m,kind=llm,max_seqs=16,step=4ms,per_seq=250us,prefill=20us"

const tokenIn, tokenOut = 32, 32

// tokenTails are the TTFT and TPOT at the settings' percentile
// (sorted[floor(n·p)], as LoadGen) that the discrete-event truth of the
// simulated LLM (sim.LLMTruth) gives for exactly the arrivals a Server run
// at qps schedules: the same trace generator, settings and seeds.
func tokenTails(t testing.TB, s loadgen.Settings, spec sim.LLMSpec, qps float64) (ttft, tpot time.Duration) {
	t.Helper()
	s.ServerTargetQPS = qps
	tr, err := trace.New(s.TraceSettings(), trace.QSL{TotalSampleCount: 1024, PerformanceSampleCount: 1024})
	if err != nil {
		t.Fatal(err)
	}
	reqs := make([]sim.LLMRequest, tr.Len())
	for i := range reqs {
		reqs[i] = sim.LLMRequest{At: tr.Query(i).Scheduled, Input: tokenIn, Output: tokenOut}
	}
	timings, err := sim.LLMTruth(spec, reqs)
	if err != nil {
		t.Fatal(err)
	}
	ttfts, tpots := make([]time.Duration, len(reqs)), make([]time.Duration, len(reqs))
	for i, tm := range timings {
		ttfts[i], tpots[i] = tm.TTFT(reqs[i]), tm.TPOT()
	}
	slices.Sort(ttfts)
	slices.Sort(tpots)
	k := int(float64(len(reqs)) * s.ServerTargetLatencyPercentile)
	return ttfts[k], tpots[k]
}

// tokenTruePeak is the largest rate whose truth meets both token bounds,
// by bisection to 0.1%.
func tokenTruePeak(t testing.TB, s loadgen.Settings, spec sim.LLMSpec) float64 {
	t.Helper()
	ok := func(qps float64) bool {
		ttft, tpot := tokenTails(t, s, spec, qps)
		return ttft <= time.Duration(s.ServerTTFTLatencyNs) && tpot <= time.Duration(s.ServerTPOTLatencyNs)
	}
	lo, hi := 1.0, 1.0
	for ok(hi) {
		lo, hi = hi, hi*2
	}
	for hi-lo > 0.001*lo {
		if mid := lo + (hi-lo)/2; ok(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// tokenSettings are loadgen6 Server settings judged by TTFT and TPOT at
// p99 against ttft and tpot, with no query-latency bound.
func tokenSettings(t testing.TB, minDur uint64, ttft, tpot time.Duration) loadgen.Settings {
	s := serverSettings(t, loadgen.RulesetLoadGen6, minDur)
	s.ServerTargetLatencyNs, s.UseTokenLatencies = 0, true
	s.ServerTTFTLatencyNs, s.ServerTPOTLatencyNs = uint64(ttft), uint64(tpot)
	return s
}

func tokenSpec(t testing.TB) sim.LLMSpec {
	m, err := sim.ParseModelFlag(tokenLLM)
	if err != nil {
		t.Fatal(err)
	}
	return *m.LLM
}

// The truth itself: TPOT grows with the batch, so with load; the peak
// under the two bounds is below the model's capacity, lower under a tight
// TPOT bound than under a TTFT bound alone.
func TestTokenTruthSimulation(t *testing.T) {
	s, spec := tokenSettings(t, 3000, 60*time.Millisecond, 7*time.Millisecond), tokenSpec(t)
	capacity, err := sim.LLMCapacity(spec, tokenIn, tokenOut)
	if err != nil {
		t.Fatal(err)
	}
	_, low := tokenTails(t, s, spec, 5)
	_, high := tokenTails(t, s, spec, 0.9*capacity)
	if !(low < high) || low < 4*time.Millisecond {
		t.Errorf("TPOT p99 at 5/s %v, at 90%% of capacity %v: want at least a 4 ms step, growing with load", low, high)
	}
	peak := tokenTruePeak(t, s, spec)
	if peak <= 5 || peak >= capacity {
		t.Errorf("peak under TTFT ≤ 60 ms and TPOT ≤ 7 ms: %.1f/s, want within (5, capacity %.1f)", peak, capacity)
	}
	if loose := tokenTruePeak(t, tokenSettings(t, 3000, 100*time.Millisecond, 20*time.Millisecond), spec); loose <= peak || loose >= capacity {
		t.Errorf("peak under TTFT ≤ 100 ms alone: %.1f/s, want within (%.1f, capacity %.1f)", loose, peak, capacity)
	}
}

// The Server peak a search finds under token constraints (TTFT and TPOT
// at p99) over the network is within 5% of the truth the discrete-event
// simulation of the same arrivals gives, over HTTP and gRPC.
func TestTokenPeakWithinFivePercentOfTheTruth(t *testing.T) {
	if os.Getenv(benchEnv) == "" {
		// As TestServerPeakWithinFivePercentOfTheTruth: a p99 of a few
		// seconds of samples fails on a stall of a shared machine.
		t.Skip("set " + benchEnv + "=1 (bench/search.sh)")
	}
	spec := tokenSpec(t)
	prompts, err := genai.NewSynthetic(genai.SyntheticOptions{Total: 1024, Input: genai.Fixed(tokenIn), Output: genai.Fixed(tokenOut)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name       string
		ttft, tpot time.Duration
		transport  string
	}{
		// TTFT binds: the queue near capacity (truth 57.75/s of 60.1).
		{"TTFT-bound http", 100 * time.Millisecond, 20 * time.Millisecond, "http"},
		{"TTFT-bound grpc", 100 * time.Millisecond, 20 * time.Millisecond, "grpc"},
		// TPOT binds: the batch's step time (truth 38.5/s).
		{"TPOT-bound http", 60 * time.Millisecond, 7 * time.Millisecond, "http"},
		{"TPOT-bound grpc", 60 * time.Millisecond, 7 * time.Millisecond, "grpc"},
	} {
		t.Run(c.name, func(t *testing.T) {
			transport := c.transport
			p := startProxy(t, tokenLLM)
			s := tokenSettings(t, 3000, c.ttft, c.tpot)
			truth := tokenTruePeak(t, s, spec)
			planner, err := search.NewFindPeak(search.FindPeakConfig{Start: 10, StepSize: 1, Precision: 0.01 * truth})
			if err != nil {
				t.Fatal(err)
			}
			base := Spec{Target: targetOf(p, transport), Model: "m", Settings: s, Prompts: prompts, TotalSamples: 1024, PerformanceSamples: 1024}
			res, err := search.Run(t.Context(), search.Config{Planner: planner, Trials: &networkTrials{Base: base, EarlyVerdict: true}, Dir: t.TempDir(),
				Ruleset: string(s.Ruleset), Scenario: "Server", Algorithm: search.AlgoFindPeak, Unit: search.UnitQPS})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Found {
				t.Fatalf("no peak: %s\n%s", res.EndReason, search.Summary(res))
			}
			dev := (res.Peak - truth) / truth
			t.Logf("FIGURE token peak %s: truth %.2f qps, peak %.2f qps (%+.2f%%), %d trials, %.1f s", c.name, truth, res.Peak, 100*dev, len(res.Trials), res.DurationS)
			if math.Abs(dev) > 0.05 {
				t.Errorf("peak %.2f is %.1f%% from the truth %.2f\n%s", res.Peak, 100*dev, truth, search.Summary(res))
			}
		})
	}
}
