package loadgen

import (
	"context"
	"errors"
	"math"
	"slices"
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
				name  string
				got   TokenBound
				vs    []int64
				bound time.Duration
			}{{"ttft", tl.TTFT, ttft, c.ttft}, {"tpot", tl.TPOT, tpot, c.tpot}} {
				o := over(b.vs, b.bound)
				es := f.Server(n, o)
				if b.got.PercentileNs != at(b.vs) || b.got.BoundNs != uint64(b.bound) || b.got.Met != (at(b.vs) <= int64(b.bound)) ||
					b.got.OverBound != o || b.got.EarlyStoppingMet == nil || *b.got.EarlyStoppingMet != es.Met || b.got.EarlyStoppingRequired != es.Required {
					t.Errorf("%s: %+v; want p99 %d, bound %d, over %d, early stopping %v (%d)", b.name, b.got, at(b.vs), b.bound, o, es.Met, es.Required)
				}
			}
			if tl.Samples != res.SamplesIssued || tl.SamplesUnderTwoTokens != under2 || under2 == 0 || tl.Percentile != c.p || tl.Met != c.met {
				t.Errorf("samples %d (issued %d), under two tokens %d (want %d), percentile %v, met %v (want %v)",
					tl.Samples, res.SamplesIssued, tl.SamplesUnderTwoTokens, under2, tl.Percentile, tl.Met, c.met)
			}
			if tl.EarlyStoppingMet == nil || *tl.EarlyStoppingMet != (*tl.TTFT.EarlyStoppingMet && *tl.TPOT.EarlyStoppingMet) {
				t.Errorf("early_stopping_met %v with TTFT %v, TPOT %v", tl.EarlyStoppingMet, *tl.TTFT.EarlyStoppingMet, *tl.TPOT.EarlyStoppingMet)
			}
		})
	}
}

// TestNoTokenLatenciesBlock: without use_token_latencies, or outside
// Server, result.json has no token_latencies; v0.5 has no early stopping.
func TestNoTokenLatenciesBlock(t *testing.T) {
	s := testSettings(t, RulesetLoadGen6, trace.Server)
	if _, res := genRun(t, s, &genSUT{law: lawOf, generative: true}); res.TokenLatencies != nil {
		t.Errorf("token_latencies without use_token_latencies: %+v", res.TokenLatencies)
	}
	s = testSettings(t, RulesetLoadGen6, trace.Offline)
	s.UseTokenLatencies = true
	if _, res := genRun(t, s, &genSUT{law: lawOf, generative: true}); res.TokenLatencies != nil {
		t.Errorf("token_latencies of an Offline run: %+v", res.TokenLatencies)
	}
	s = testSettings(t, RulesetV05, trace.Server)
	s.UseTokenLatencies = true
	_, res := genRun(t, s, &genSUT{law: lawOf, generative: true})
	if tl := res.TokenLatencies; tl == nil || tl.EarlyStoppingMet != nil || tl.TTFT.EarlyStoppingMet != nil {
		t.Errorf("v0.5 token_latencies: %+v, want one without early stopping", tl)
	}
}
