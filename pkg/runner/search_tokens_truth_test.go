package runner

import (
	"fmt"
	"math"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/search"
	"github.com/netloadgen/netloadgen/pkg/sim"
	"github.com/netloadgen/netloadgen/pkg/sutproxy/sutproxytest"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// tokenTruthAt is the TTFT and TPOT at s's percentile (LoadGen's
// sorted[floor(n·p)]) that sim.LLMTruth gives for exactly the arrivals a
// Server run of s at qps schedules (the same trace generator, settings and
// seeds), each request truthInput tokens in and truthOutput out. TPOT is
// LoadGen's (E2E − TTFT)/(n − 1), E2E the last token.
func tokenTruthAt(t testing.TB, s loadgen.Settings, law sim.LLMSpec, qps float64) (ttft, tpot time.Duration) {
	t.Helper()
	s.ServerTargetQPS = qps
	tr, err := trace.New(s.TraceSettings(), trace.QSL{TotalSampleCount: 1024, PerformanceSampleCount: 1024})
	if err != nil {
		t.Fatal(err)
	}
	reqs := make([]sim.LLMRequest, tr.Len())
	c := tr.Cursor()
	for i := range reqs {
		q, _ := c.Next()
		reqs[i] = sim.LLMRequest{At: q.Scheduled, Input: truthInput, Output: truthOutput}
	}
	timing, err := sim.LLMTruth(law, reqs)
	if err != nil {
		t.Fatal(err)
	}
	ttfts, tpots := make([]time.Duration, len(reqs)), make([]time.Duration, len(reqs))
	for i, r := range reqs {
		ttfts[i], tpots[i] = timing[i].TTFT(r), timing[i].TPOT()
	}
	slices.Sort(ttfts)
	slices.Sort(tpots)
	p := s.ServerTargetLatencyPercentile
	at := func(v []time.Duration) time.Duration { return v[min(int(float64(len(v))*p), len(v)-1)] }
	return at(ttfts), at(tpots)
}

// tokenPeakTruth is the highest rate at which the truth's TTFT and TPOT at
// the percentile are within s's bounds, by bisection to 0.1% between 1 QPS
// and hi (a rate that fails). The truth of a rate is that of its own
// arrivals, so the curve is not strictly monotone: where it crosses a
// bound more than once, the bisection, like the search, lands on one of
// the crossings.
func tokenPeakTruth(t testing.TB, s loadgen.Settings, law sim.LLMSpec, hi float64) float64 {
	t.Helper()
	ok := func(q float64) bool {
		a, b := tokenTruthAt(t, s, law, q)
		return a <= time.Duration(s.ServerTTFTLatencyNs) && b <= time.Duration(s.ServerTPOTLatencyNs)
	}
	lo := 1.0
	if !ok(lo) || ok(hi) {
		t.Fatalf("the bounds do not bracket a peak in [%v, %v]", lo, hi)
	}
	return bisectPeak(lo, hi, ok)
}

// The peak a token-latency search finds against sutproxy's simulated LLM
// (truthLaw, capacity ≈ 141 requests/s of 64 tokens in and 16 out) is
// within 5% of the truth: the highest rate whose arrivals, as the run
// schedules them, sim.LLMTruth serves within the TTFT and TPOT bounds at
// p99 (tokenPeakTruth). One case is bound by TTFT (a steep wall near 110
// QPS, where the queue starts to build), one by TPOT (a gentle slope: the
// step grows with the batch and the prefills in it), each over HTTP SSE
// (openai-chat) and gRPC (kserve-stream). Timing claims on an idle
// machine: bench/search.sh.
func TestTokenPeakWithinFivePercentOfTheTruth(t *testing.T) {
	if os.Getenv(benchEnv) == "" {
		t.Skip("set " + benchEnv + "=1 (bench/search.sh)")
	}
	spec, err := sim.ParseModelFlag(truthLaw)
	if err != nil {
		t.Fatal(err)
	}
	capacity, err := sim.LLMCapacity(*spec.LLM, truthInput, truthOutput)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name       string
		ttft, tpot time.Duration
	}{
		{"ttft-bound", 100 * time.Millisecond, 40 * time.Millisecond},
		{"tpot-bound", time.Second, 26 * time.Millisecond},
	} {
		for _, api := range []genai.API{genai.APIOpenAIChat, genai.APIKServeStream} {
			t.Run(fmt.Sprintf("%s/%s", c.name, api), func(t *testing.T) {
				s, err := loadgen.NewSettings(loadgen.RulesetLoadGen6, trace.Server, "")
				if err != nil {
					t.Fatal(err)
				}
				s.MinDurationMs, s.MinQueryCount, s.ServerTargetLatencyPercentile = 4000, 1, 0.99
				s.ServerTargetLatencyNs = 10e9 // not the constraint: TTFT and TPOT are
				s.UseTokenLatencies, s.ServerTTFTLatencyNs, s.ServerTPOTLatencyNs = true, uint64(c.ttft), uint64(c.tpot)
				truth := tokenPeakTruth(t, s, *spec.LLM, capacity)
				res := tokenTruthSearch(t, s, api, truth, capacity)
				if !res.Found {
					t.Fatalf("no peak: %s\n%s", res.EndReason, search.Summary(res))
				}
				dev := (res.Peak - truth) / truth
				t.Logf("FIGURE token %s %s: truth %.1f qps, peak %.1f qps (%+.2f%%), %d trials, %.1f s", c.name, api, truth, res.Peak, 100*dev, len(res.Trials), res.DurationS)
				if res.JudgedBy != search.JudgedByTokenLatency {
					t.Errorf("judged by %q", res.JudgedBy)
				}
				if math.Abs(dev) > 0.05 {
					t.Errorf("peak %.1f is %.1f%% from the truth %.1f\n%s", res.Peak, 100*dev, truth, search.Summary(res))
				}
			})
		}
	}
}

// tokenTruthSearch is a loadgen6 find-peak from 40 QPS, capped below the
// model's capacity (beyond it the queue grows without bound), bisecting to
// 1% of the truth.
func tokenTruthSearch(t *testing.T, s loadgen.Settings, api genai.API, truth, capacity float64) *search.Result {
	t.Helper()
	base := tokenTruthBase(t, s, api)
	base.OutDir = t.TempDir()
	o := search.Options{Start: 40, Upper: math.Floor(capacity), Precision: 0.01 * truth}
	res, err := FindPeak(t.Context(), base, Search{Options: o, EarlyVerdict: true}, SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The truth's curve: TTFT and TPOT at p99 grow with the rate, TTFT
// steeply once the queue builds near capacity.
func TestTokenTruthCurve(t *testing.T) {
	spec, err := sim.ParseModelFlag(truthLaw)
	if err != nil {
		t.Fatal(err)
	}
	s, err := loadgen.NewSettings(loadgen.RulesetLoadGen6, trace.Server, "")
	if err != nil {
		t.Fatal(err)
	}
	s.MinDurationMs, s.MinQueryCount, s.ServerTargetLatencyPercentile = 8000, 1, 0.99
	lowTTFT, lowTPOT := tokenTruthAt(t, s, *spec.LLM, 20)
	highTTFT, highTPOT := tokenTruthAt(t, s, *spec.LLM, 130)
	if !(highTTFT > 3*lowTTFT) || !(highTPOT > lowTPOT) {
		t.Errorf("p99 at 20 QPS: TTFT %v TPOT %v; at 130 QPS: TTFT %v TPOT %v; want both higher, TTFT 3× at least", lowTTFT, lowTPOT, highTTFT, highTPOT)
	}
	// A step is at least 20 ms + a prefill of 64 tokens (1.28 ms): no
	// token comes sooner after the previous one.
	if lowTPOT < 20*time.Millisecond || lowTTFT < 21*time.Millisecond {
		t.Errorf("p99 at 20 QPS: TTFT %v TPOT %v, below the law's floor", lowTTFT, lowTPOT)
	}
}

// tokenTruthBase is a run of s against sutproxy's simulated LLM (truthLaw)
// over api, each request truthInput tokens in and truthOutput out.
func tokenTruthBase(t testing.TB, s loadgen.Settings, api genai.API) Spec {
	t.Helper()
	p := sutproxytest.Start(t, truthLaw)
	transport := "http"
	if api.GRPC() {
		transport = "grpc"
	}
	prompts, err := genai.NewSynthetic(genai.SyntheticOptions{Total: 1024, Input: genai.Fixed(truthInput), Output: genai.Fixed(truthOutput), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return Spec{Target: sutproxytest.Target(p, transport), Model: "truth", API: api, Settings: s, Prompts: prompts,
		TotalSamples: 1024, PerformanceSamples: 1024}
}
