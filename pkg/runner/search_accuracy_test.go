package runner

import (
	"math"
	"os"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/search"
	"github.com/netloadgen/netloadgen/pkg/sutproxy"
	"github.com/netloadgen/netloadgen/pkg/sutproxy/sutproxytest"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// benchEnv turns the reduced network tests into the full comparisons of
// bench/search.sh.
const benchEnv = "NETLOADGEN_SEARCH_BENCH"

func startProxy(t *testing.T, flags ...string) *sutproxy.Proxy {
	return sutproxytest.Start(t, flags...)
}

func targetOf(p *sutproxy.Proxy, transport string) string { return sutproxytest.Target(p, transport) }

func serverSettings(t testing.TB, rs loadgen.Ruleset, minDur uint64) loadgen.Settings {
	s, err := loadgen.NewSettings(rs, trace.Server, "")
	if err != nil {
		t.Fatal(err)
	}
	s.MinDurationMs, s.MinQueryCount = minDur, 1
	s.ServerTargetLatencyNs, s.ServerTargetLatencyPercentile = 10e6, 0.99
	return s
}

type peakCase struct {
	name      string
	flag      string
	model     queueModel
	transport string
	start     float64
	// minDurMs, when set, is the trials' length: a heavy-tailed law's p99
	// from 3 s of samples (the 18th largest of ~1,800) moves by more than
	// the 5% the comparison allows.
	minDurMs uint64
}

// searchPeak runs a loadgen6 search against a sutproxy model and returns
// the result.
func searchPeak(t *testing.T, p *sutproxy.Proxy, c peakCase, s loadgen.Settings, precision float64, early bool) *search.Result {
	t.Helper()
	planner, err := search.NewFindPeak(search.FindPeakConfig{Start: c.start, StepSize: 1, Precision: precision})
	if err != nil {
		t.Fatal(err)
	}
	base := Spec{Target: targetOf(p, c.transport), Model: "m", Settings: s, TotalSamples: 1024, PerformanceSamples: 1024, HTTPClient: os.Getenv("NLG_HTTP_CLIENT")}
	res, err := search.Run(t.Context(), search.Config{Planner: planner, Trials: &networkTrials{Base: base, EarlyVerdict: early}, Dir: t.TempDir(),
		Ruleset: string(s.Ruleset), Scenario: "Server", Algorithm: search.AlgoFindPeak, Unit: search.UnitQPS})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The Server peak a search finds over the network is within 5% of the
// truth an independent M/G/c simulation of the same arrivals gives.
func TestServerPeakWithinFivePercentOfTheTruth(t *testing.T) {
	if os.Getenv(benchEnv) == "" {
		// Trials of a few seconds judge a p99 from a few thousand samples: a
		// 20 ms stall of a shared CI machine fails them, so the comparison
		// runs in bench/search.sh, not in the unit suite.
		t.Skip("set " + benchEnv + "=1 (bench/search.sh)")
	}
	cases := []peakCase{
		{"M/D/1 1ms http", "name=m,fn=echo,dims=16,max_batch=0,latency=constant:1ms,instances=1", queueModel{1, constantLaw(time.Millisecond)}, "http", 200, 0},
	}
	minDur := uint64(1500)
	if os.Getenv(benchEnv) != "" {
		minDur = 3000
		cases = append(cases,
			peakCase{"M/D/1 1ms grpc", cases[0].flag, cases[0].model, "grpc", 200, 0},
			peakCase{"M/D/4 2ms http", "name=m,fn=echo,dims=16,max_batch=0,latency=constant:2ms,instances=4", queueModel{4, constantLaw(2 * time.Millisecond)}, "http", 400, 0},
			peakCase{"M/D/4 2ms grpc", "name=m,fn=echo,dims=16,max_batch=0,latency=constant:2ms,instances=4", queueModel{4, constantLaw(2 * time.Millisecond)}, "grpc", 400, 0},
			peakCase{"M/G/2 lognormal 2ms σ0.5 http", "name=m,fn=echo,dims=16,max_batch=0,latency=lognormal:2ms:0.5,instances=2", queueModel{2, lognormalLaw(2*time.Millisecond, 0.5)}, "http", 200, 6000},
			peakCase{"M/G/2 lognormal 2ms σ0.5 grpc", "name=m,fn=echo,dims=16,max_batch=0,latency=lognormal:2ms:0.5,instances=2", queueModel{2, lognormalLaw(2*time.Millisecond, 0.5)}, "grpc", 200, 6000},
		)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := startProxy(t, c.flag)
			dur := minDur
			if c.minDurMs != 0 {
				dur = c.minDurMs
			}
			s := serverSettings(t, loadgen.RulesetLoadGen6, dur)
			truth := truthFor(t, s, c.model, 11)
			res := searchPeak(t, p, c, s, 0.01*truth, true)
			if !res.Found {
				t.Fatalf("no peak: %s\n%s", res.EndReason, search.Summary(res))
			}
			dev := (res.Peak - truth) / truth
			t.Logf("FIGURE %s: truth %.1f qps, peak %.1f qps (%+.2f%%), %d trials, %.1f s", c.name, truth, res.Peak, 100*dev, len(res.Trials), res.DurationS)
			if math.Abs(dev) > 0.05 {
				t.Errorf("peak %.1f is %.1f%% from the truth %.1f\n%s", res.Peak, 100*dev, truth, search.Summary(res))
			}
		})
	}
}
