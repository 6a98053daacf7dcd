package loadgen

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/stats"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// lingerSUT answers a one-token sample 4 ms after its only token, as a
// server that closes the stream late does: LoadGen's TPOT of such a sample
// is (latency − TTFT)/(0 − 1) = −4 ms.
type lingerSUT struct{ *genSUT }

func (s lingerSUT) IssueQuery(ctx context.Context, q Query, done func(Completion)) {
	s.genSUT.IssueQuery(ctx, q, func(c Completion) {
		if c.Tokens == 1 {
			c.At = c.At.Add(4 * time.Millisecond)
		}
		done(c)
	})
}

// TestTokenLatencies: a Server run with use_token_latencies judges TTFT
// and TPOT at the target percentile, sorted[floor(n·p)], against their
// bounds, as the test computes them from the scripted samples: TPOT
// (latency − TTFT)/(n − 1) truncated, a sample of fewer than two tokens
// counted as 0 tokens, a failed sample over both bounds; early stopping on
// the samples over each bound.
func TestTokenLatencies(t *testing.T) {
	fail := func(id int) error {
		if id == 17 {
			return errors.New("boom")
		}
		return nil
	}
	for _, c := range []struct {
		name       string
		p          float64
		ttft, tpot time.Duration
		met        bool
	}{
		{"over both", 0.99, 9 * time.Millisecond, 2 * time.Millisecond, false},
		{"within both", 0.99, 12 * time.Millisecond, 3 * time.Millisecond, true},
		{"over TPOT only", 0.99, 12 * time.Millisecond, 2 * time.Millisecond, false},
		// A fifth of the samples have one token: at p10 the TPOT is their −4 ms.
		{"negative TPOT at p10", 0.1, 5 * time.Millisecond, time.Nanosecond, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := testSettings(t, RulesetLoadGen6, trace.Server)
			s.MinQueryCount = 2000 // a failed sample at p99 needs more than 100 samples
			s.ServerTargetLatencyPercentile = c.p
			s.UseTokenLatencies, s.ServerTTFTLatencyNs, s.ServerTPOTLatencyNs = true, uint64(c.ttft), uint64(c.tpot)
			r, err := NewRun(s, lingerSUT{&genSUT{law: lawOf, generative: true, fail: fail}}, &fakeQSL{total: 1000, perf: 256}, WithClock(newFakeClock()), quiet)
			if err != nil {
				t.Fatal(err)
			}
			res, err := r.Execute(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			tl := res.TokenLatencies
			if tl == nil {
				t.Fatal("no token_latencies in a Server run with use_token_latencies")
			}
			var ttft, tpot []int64
			var under2 int64
			for id := range int(res.QueriesIssued) {
				l := lawOf(id)
				if id == 17 {
					ttft, tpot = append(ttft, math.MaxInt64), append(tpot, math.MaxInt64)
					continue
				}
				e2e, n := l.e2e(), int64(l.tokens)
				if n < 2 {
					under2++
					n, e2e = 0, e2e+4*time.Millisecond
				}
				ttft, tpot = append(ttft, int64(l.ttft)), append(tpot, int64(e2e-l.ttft)/(n-1))
			}
			slices.Sort(ttft)
			slices.Sort(tpot)
			at := func(vs []int64) int64 { return vs[int(float64(len(vs))*c.p)] }
			over := func(vs []int64, b time.Duration) (n int64) {
				for _, v := range vs {
					if v > int64(b) {
						n++
					}
				}
				return n
			}
			if tpot[0] != -int64(4*time.Millisecond) {
				t.Fatalf("the test's own TPOT: smallest %d, want −4 ms", tpot[0])
			}
			f, _ := stats.NewMinPassingFinder(c.p, stats.EarlyStoppingConfidence)
			n := int64(len(ttft))
			for _, b := range []struct {
				name      string
				at, over  int64
				bound     uint64
				met       bool
				es        *EarlyStoppingResult
				vs        []int64
				wantBound time.Duration
			}{
				{"ttft", tl.TTFTAtPercentileNs, tl.TTFTOverBound, tl.TTFTBoundNs, tl.TTFTMet, tl.TTFTEarlyStopping, ttft, c.ttft},
				{"tpot", tl.TPOTAtPercentileNs, tl.TPOTOverBound, tl.TPOTBoundNs, tl.TPOTMet, tl.TPOTEarlyStopping, tpot, c.tpot},
			} {
				o := over(b.vs, b.wantBound)
				if b.at != at(b.vs) || b.bound != uint64(b.wantBound) || b.met != (at(b.vs) <= int64(b.wantBound)) || b.over != o {
					t.Errorf("%s: at %d, bound %d, met %v, over %d; want p %d, bound %d, over %d", b.name, b.at, b.bound, b.met, b.over, at(b.vs), b.wantBound, o)
				}
				// TTFT's early stopping is judged only when TPOT's held
				// (LoadGen's && short-circuits).
				if b.name == "ttft" && !tl.TPOTEarlyStopping.Met {
					if b.es != nil {
						t.Errorf("ttft early stopping judged after TPOT's failed: %+v", b.es)
					}
					continue
				}
				es := f.Server(n, o)
				if b.es == nil || b.es.Met != es.Met || b.es.Required != es.Required || b.es.OverLatency != o {
					t.Errorf("%s early stopping %+v; want met %v, required %d, over %d", b.name, b.es, es.Met, es.Required, o)
				}
			}
			met := tl.TTFTMet && tl.TPOTMet
			if int64(tl.TTFT.Count) != res.SamplesIssued || tl.FewTokenSamples != under2 || under2 == 0 || tl.Percentile != c.p || met != c.met || res.PerfConstraintsMet != met {
				t.Errorf("samples %d (issued %d), under two tokens %d (want %d), percentile %v, met %v (want %v), perf constraints %v",
					tl.TTFT.Count, res.SamplesIssued, tl.FewTokenSamples, under2, tl.Percentile, met, c.met, res.PerfConstraintsMet)
			}
			wantES := tl.TPOTEarlyStopping.Met && tl.TTFTEarlyStopping != nil && tl.TTFTEarlyStopping.Met
			if tl.EarlyStoppingMet != wantES || res.EarlyStoppingMet != wantES {
				t.Errorf("early_stopping_met %v (result %v), want %v", tl.EarlyStoppingMet, res.EarlyStoppingMet, wantES)
			}
		})
	}
}

// TestNoTokenLatenciesBlock: without use_token_latencies result.json has
// no token_latencies; an Offline run's has no constraint (no TTFT or TPOT
// table, no early stopping), as LoadGen's. (Its tokens per second are
// TestJudgeTokenLatenciesFailedAndOffline's: genSUT reports tokens per
// one-sample query only.)
func TestNoTokenLatenciesBlock(t *testing.T) {
	s := testSettings(t, RulesetLoadGen6, trace.Server)
	if _, res := genRun(t, s, &genSUT{law: lawOf, generative: true}); res.TokenLatencies != nil {
		t.Errorf("token_latencies without use_token_latencies: %+v", res.TokenLatencies)
	}
	s = testSettings(t, RulesetLoadGen6, trace.Offline)
	s.UseTokenLatencies = true
	_, res := genRun(t, s, &genSUT{law: lawOf, generative: true})
	if tl := res.TokenLatencies; tl == nil || tl.TTFT.Count != 0 || tl.TPOTEarlyStopping != nil || tl.TTFTEarlyStopping != nil || !tl.TTFTMet || !tl.TPOTMet {
		t.Errorf("Offline token_latencies: %+v, want no constraint", tl)
	}
}

// TestTokenEarlyVerdictMatchesFullRun: with token latencies the early
// verdict counts samples over the TTFT and the TPOT bound, each against the
// percentile's and early stopping's allowance for the planned queries: a
// run doomed by either stops sooner with the full run's verdict and names
// the bound; a run within both is never stopped, though every sample is
// over the query-latency bound, which judges nothing here.
func TestTokenEarlyVerdictMatchesFullRun(t *testing.T) {
	within := func(id int) genLaw {
		return genLaw{ttft: 5 * time.Millisecond, gap: time.Millisecond, tokens: 4, input: 10}
	}
	for _, c := range []struct {
		name  string
		law   func(id int) genLaw
		bound string // the bound named by the early verdict; "" for a passing run
	}{
		{"TTFT tail from query 100", func(id int) genLaw {
			l := within(id)
			if id >= 100 && id%5 == 0 {
				l.ttft = 50 * time.Millisecond
			}
			return l
		}, "TTFT"},
		{"TPOT tail from query 100", func(id int) genLaw {
			l := within(id)
			if id >= 100 && id%5 == 0 {
				l.gap = 30 * time.Millisecond
			}
			return l
		}, "TPOT"},
		{"passing run", within, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := testSettings(t, RulesetLoadGen6, trace.Server)
			s.MinDurationMs = 600
			s.UseTokenLatencies, s.ServerTTFTLatencyNs, s.ServerTPOTLatencyNs = true, uint64(20*time.Millisecond), uint64(10*time.Millisecond)
			s.ServerTargetLatencyNs = 1 // every sample over it
			run := func(early bool) *Result {
				s.Engine.EarlyVerdict = early
				r, err := NewRun(s, &genSUT{law: c.law, generative: true}, &fakeQSL{total: 1000, perf: 256}, WithClock(newFakeClock()), quiet)
				if err != nil {
					t.Fatal(err)
				}
				res, err := r.Execute(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			whole, early := run(false), run(true)
			if whole.Valid != early.Valid || whole.Valid != (c.bound == "") {
				t.Fatalf("full run %s, early verdict run %s (%v); want valid %v", whole.Validity, early.Validity, early.InvalidReasons, c.bound == "")
			}
			if c.bound == "" {
				if early.EarlyVerdict != nil || early.QueriesIssued != whole.QueriesIssued {
					t.Errorf("a run within its token bounds was stopped: %+v", early.EarlyVerdict)
				}
				return
			}
			ev := early.EarlyVerdict
			if ev == nil || !ev.Stopped || early.EndReason != StopEarlyVerdict || !strings.Contains(ev.Reason, "over the "+c.bound+" bound") {
				t.Fatalf("not stopped early on the %s bound: %s %+v", c.bound, early.EndReason, ev)
			}
			if early.QueriesIssued >= whole.QueriesIssued {
				t.Errorf("early run issued %d, full run %d", early.QueriesIssued, whole.QueriesIssued)
			}
		})
	}
}
