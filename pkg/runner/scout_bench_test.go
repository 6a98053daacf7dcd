package runner

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/search"
	"github.com/netloadgen/netloadgen/pkg/sim"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// scoutCase is one row of issue 33's benchmark: a sutproxy model of known
// capacity, the base spec of a search against it and its truth.
type scoutCase struct {
	name  string
	start func(t *testing.T) (base Spec, truth float64, o search.Options)
}

// scoutBenchMinMs is the benchmark's minimum duration (env, default def):
// the full-length trial's, of which a scout is 10%.
func scoutBenchMinMs(t *testing.T, env string, def uint64) uint64 {
	v := os.Getenv(env)
	if v == "" {
		return def
	}
	ms, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", env, err)
	}
	return ms
}

// queueCase is an M/D/c sutproxy model against its simulated truth, judged
// at p99 ≤ bound.
func queueCase(name, flag string, m queueModel, bound time.Duration, transport string, start float64) scoutCase {
	return scoutCase{name, func(t *testing.T) (Spec, float64, search.Options) {
		p := startProxy(t, flag)
		s := serverSettings(t, loadgen.RulesetLoadGen6, scoutBenchMinMs(t, "NLG_SCOUT_MIN_MS", 20000))
		s.ServerFindPeakQPSBoundaryStepSize, s.ServerTargetLatencyNs = 1, uint64(bound)
		truth := truthFor(t, s, m, 11)
		return Spec{Target: targetOf(p, transport), Model: "m", Settings: s, TotalSamples: 1024, PerformanceSamples: 1024,
			HTTPClient: os.Getenv("NLG_HTTP_CLIENT")}, truth, search.Options{Start: start, Precision: 0.02 * truth}
	}}
}

// tokenCase is the simulated LLM under TTFT and TPOT bounds at p90 (the
// token-bound truth of search_tokens_truth_test.go).
func tokenCase(name string, api genai.API, ttft, tpot time.Duration) scoutCase {
	return scoutCase{name, func(t *testing.T) (Spec, float64, search.Options) {
		spec, err := sim.ParseModelFlag(truthLaw)
		if err != nil {
			t.Fatal(err)
		}
		capacity, err := sim.LLMCapacity(*spec.LLM, truthInput, truthOutput)
		if err != nil {
			t.Fatal(err)
		}
		s, err := loadgen.NewSettings(loadgen.RulesetLoadGen6, trace.Server, "")
		if err != nil {
			t.Fatal(err)
		}
		// At p90: the p99's early-stopping minimum, 662 queries, takes
		// 5.6 s at the LLM's 118 QPS, so its scout trials would be as long
		// as 56 s trials' tenth; p90's 64 take 0.5 s. The trials are
		// NLG_SCOUT_LLM_MIN_MS long (default 30 s). Near its capacity the
		// LLM's queue builds for as long as the load lasts, which a scout
		// of a few seconds does not see (bench/search-results.md).
		s.MinDurationMs, s.MinQueryCount, s.ServerTargetLatencyPercentile = scoutBenchMinMs(t, "NLG_SCOUT_LLM_MIN_MS", 30000), 1, 0.9
		s.ServerTargetLatencyNs = 10e9
		s.UseTokenLatencies, s.ServerTTFTLatencyNs, s.ServerTPOTLatencyNs = true, uint64(ttft), uint64(tpot)
		truth := tokenPeakTruth(t, s, *spec.LLM, capacity)
		return tokenTruthBase(t, s, api), truth, search.Options{Start: 40, Upper: math.Floor(capacity), Precision: 0.02 * truth}
	}}
}

// Issue 33's benchmark: against models of known capacity, the scout
// strategy finds the full search's peak within the search's precision (2%
// of the truth here) in at most a third of its wall time, both measured
// one after the other in one sitting, each with the defaults of a search
// (trial warm-ups, one retry); a second full search after them shows how
// far two full searches land apart on this host. bench/search-scout.sh;
// the table is in bench/search-results.md.
func TestScoutFindsTheFullPeakInAThird(t *testing.T) {
	if os.Getenv(benchEnv) == "" {
		t.Skip("set " + benchEnv + "=1 (bench/search-scout.sh)")
	}
	// The search tests' M/D/c models at 1 ms and 2 ms judged at 10 ms
	// meet this 2-vCPU VM's stalls of 5–10 ms in 10 s trials (a 1 ms
	// model's p99 at 200 QPS reads 3 ms in one run and 10 ms in the next),
	// so the rows are M/D/c models of 5 ms judged at 50 ms, where a
	// stall moves no verdict; NLG_SCOUT_TIGHT=1 adds the tight ones.
	const md4, md8 = "name=m,fn=echo,dims=16,max_batch=0,latency=constant:5ms,instances=4", "name=m,fn=echo,dims=16,max_batch=0,latency=constant:5ms,instances=8"
	cases := []scoutCase{
		queueCase("M/D/4 5ms http", md4, queueModel{4, constantLaw(5 * time.Millisecond)}, 50*time.Millisecond, "http", 200),
		queueCase("M/D/4 5ms grpc", md4, queueModel{4, constantLaw(5 * time.Millisecond)}, 50*time.Millisecond, "grpc", 200),
		queueCase("M/D/8 5ms http", md8, queueModel{8, constantLaw(5 * time.Millisecond)}, 50*time.Millisecond, "http", 400),
		queueCase("M/D/8 5ms grpc", md8, queueModel{8, constantLaw(5 * time.Millisecond)}, 50*time.Millisecond, "grpc", 400),
		tokenCase("LLM ttft-bound openai-chat", genai.APIOpenAIChat, 100*time.Millisecond, 40*time.Millisecond),
		tokenCase("LLM ttft-bound kserve-stream", genai.APIKServeStream, 100*time.Millisecond, 40*time.Millisecond),
		// Bound by TPOT instead: the step time grows with the batch, a
		// state the server reaches in a request's time, not a queue's.
		tokenCase("LLM tpot-bound openai-chat", genai.APIOpenAIChat, time.Second, 26*time.Millisecond),
		tokenCase("LLM tpot-bound kserve-stream", genai.APIKServeStream, time.Second, 26*time.Millisecond),
	}
	if os.Getenv("NLG_SCOUT_TIGHT") != "" {
		const md1, md42 = "name=m,fn=echo,dims=16,max_batch=0,latency=constant:1ms,instances=1", "name=m,fn=echo,dims=16,max_batch=0,latency=constant:2ms,instances=4"
		cases = append(cases,
			queueCase("M/D/1 1ms http", md1, queueModel{1, constantLaw(time.Millisecond)}, 10*time.Millisecond, "http", 200),
			queueCase("M/D/1 1ms grpc", md1, queueModel{1, constantLaw(time.Millisecond)}, 10*time.Millisecond, "grpc", 200),
			queueCase("M/D/4 2ms http", md42, queueModel{4, constantLaw(2 * time.Millisecond)}, 10*time.Millisecond, "http", 400),
			queueCase("M/D/4 2ms grpc", md42, queueModel{4, constantLaw(2 * time.Millisecond)}, 10*time.Millisecond, "grpc", 400))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base, truth, o := c.start(t)
			// full, scout, full again: the second full search is the
			// control, how far two full searches of this host land apart.
			var runs []*search.Result
			for _, strategy := range []string{search.StrategyFull, search.StrategyScout, search.StrategyFull} {
				runs = append(runs, scoutBenchSearch(t, c.name, base, o, strategy))
			}
			full, scout, again := runs[0], runs[1], runs[2]
			ratio := scout.DurationS / full.DurationS
			t.Logf("FIGURE scout %s: truth %.1f; full %.1f in %d trials %.1f s; scout %.1f in %s, %.1f s; ratio %.2f (%.2f of the second full); |scout−full| %.1f; second full %.1f in %.1f s, |full−full| %.1f (precision %.1f)",
				c.name, truth, full.Peak, len(full.Trials), full.DurationS, scout.Peak, stagesText(scout), scout.DurationS, ratio, scout.DurationS/again.DurationS,
				math.Abs(scout.Peak-full.Peak), again.Peak, again.DurationS, math.Abs(again.Peak-full.Peak), o.Precision)
			if math.Abs(scout.Peak-full.Peak) > o.Precision {
				t.Errorf("scout's peak %.1f, full's %.1f: more than the precision %.1f apart (the second full: %.1f)", scout.Peak, full.Peak, o.Precision, again.Peak)
			}
			if ratio > 1.0/3 {
				t.Errorf("scout took %.1f s, full %.1f s: ratio %.2f, over a third", scout.DurationS, full.DurationS, ratio)
			}
		})
	}
}

// scoutBenchSearch is one search of the benchmark, with a search's
// defaults (trial warm-ups, one retry).
func scoutBenchSearch(t *testing.T, name string, base Spec, o search.Options, strategy string) *search.Result {
	t.Helper()
	o.Strategy = strategy
	base.OutDir = t.TempDir()
	sc := Search{Options: o, EarlyVerdict: true, TrialWarmupDefault: true, RetryFailed: 1}
	if ms := scoutBenchMinMs(t, "NLG_SCOUT_DURATION_MS", 0); ms > 0 {
		// --scout-duration, in place of 10% of the trial.
		sc.ScoutDuration = time.Duration(ms) * time.Millisecond
	}
	res, err := FindPeak(t.Context(), base, sc, SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s %s:\n%s", name, strategy, search.Summary(res))
	if !res.Found {
		t.Fatalf("%s: no peak: %s", strategy, res.EndReason)
	}
	return res
}

// stagesText is a scout search's stages as "8 scout + 2 verify trials".
func stagesText(res *search.Result) string {
	var out string
	for i, st := range res.Stages {
		if i > 0 {
			out += " + "
		}
		out += fmt.Sprintf("%d %s", st.Trials, st.Stage)
	}
	return out + " trials"
}
