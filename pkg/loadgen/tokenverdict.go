package loadgen

import (
	"math"
	"slices"
	"sort"
	"time"

	"github.com/netloadgen/netloadgen/pkg/stats"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// TokenLatencies are the token-latency constraints of a Server run with
// use_token_latencies, as LoadGen 6.0 judges them (results.cc): the time
// to first token and the time per output token at the target percentile
// against server_ttft_latency and server_tpot_latency, and loadgen6's early
// stopping on each. result.json's token_latencies (RESULT.md); the daemon
// and the peak search read the same figures.
type TokenLatencies struct {
	// Percentile is the target percentile both are judged at.
	Percentile float64 `json:"percentile"`
	// Samples are the samples judged: every sample issued, as LoadGen
	// judges every completed one. A failed sample counts as over both
	// bounds (FailedLatency, 9223372036854775807, wherever it shows).
	Samples int64 `json:"samples"`
	// SamplesUnderTwoTokens answered with fewer than two tokens: LoadGen
	// logs "Number of tokens need to be greater than 1", counts them as 0
	// tokens and their TPOT as (latency − TTFT)/(0 − 1), i.e. negative.
	SamplesUnderTwoTokens int64      `json:"samples_under_two_tokens"`
	TTFT                  TokenBound `json:"ttft"`
	TPOT                  TokenBound `json:"tpot"`
	// Met: both percentiles are within their bounds.
	Met bool `json:"met"`
	// EarlyStoppingMet: loadgen6's early stopping holds for both (nil
	// under v0.5, which has none).
	EarlyStoppingMet *bool `json:"early_stopping_met,omitempty"`
}

// TokenBound is one token constraint: the percentile against its bound.
type TokenBound struct {
	// PercentileNs is sorted[floor(n·p)] of the per-sample values.
	PercentileNs int64  `json:"percentile_ns"`
	BoundNs      uint64 `json:"bound_ns"`
	Met          bool   `json:"met"`
	// OverBound counts samples over the bound (early stopping's t).
	OverBound int64 `json:"over_bound"`
	// EarlyStoppingMet: at least h(t)+t samples were judged (loadgen6);
	// EarlyStoppingRequired is h(t)+t.
	EarlyStoppingMet      *bool `json:"early_stopping_met,omitempty"`
	EarlyStoppingRequired int64 `json:"early_stopping_required,omitempty"`
}

// tokenSamples returns every issued sample's TTFT and TPOT in LoadGen's
// terms, and how many had fewer than two tokens. TPOT is (latency −
// TTFT)/(n − 1), int64 truncated; a sample of n ≤ 1 tokens counts as 0
// tokens (so its TPOT is −(latency − TTFT)). A sample whose answer
// carried no first-token time has TTFT = latency.
func (r *Run) tokenSamples() (ttft, tpot []int64, under2 int64) {
	t := r.tok.Load()
	n := int(r.issuedQ.Load()) * r.spq
	r.samples.Each(0, n, func(seq int, d time.Duration) {
		if d == stats.FailedLatency {
			ttft, tpot = append(ttft, int64(d)), append(tpot, int64(d))
			return
		}
		lat, first, tokens := int64(d), int64(d), int64(0)
		if t != nil && t.tokens[seq] > 0 {
			first = min(max(t.first[seq]-r.scheduled[seq/r.spq], 0), lat)
			tokens = int64(t.tokens[seq])
		}
		if tokens <= 1 {
			tokens = 0
			under2++
		}
		ttft, tpot = append(ttft, first), append(tpot, (lat-first)/(tokens-1))
	})
	return ttft, tpot, under2
}

// tokenLatencies judges the token constraints (nil unless a Server run
// with use_token_latencies).
func (r *Run) tokenLatencies() *TokenLatencies {
	s := r.settings
	if s.Scenario != trace.Server || !s.UseTokenLatencies {
		return nil
	}
	ttft, tpot, under2 := r.tokenSamples()
	p := r.tr.Settings.TargetLatencyPercentile
	out := &TokenLatencies{Percentile: p, Samples: int64(len(ttft)), SamplesUnderTwoTokens: under2}
	var f *stats.MinPassingFinder
	if s.Ruleset == RulesetLoadGen6 {
		f, _ = stats.NewMinPassingFinder(p, stats.EarlyStoppingConfidence)
	}
	out.TTFT = judgeTokens(ttft, p, s.ServerTTFTLatencyNs, f)
	out.TPOT = judgeTokens(tpot, p, s.ServerTPOTLatencyNs, f)
	out.Met = out.TTFT.Met && out.TPOT.Met
	if out.TTFT.EarlyStoppingMet != nil && out.TPOT.EarlyStoppingMet != nil {
		met := *out.TTFT.EarlyStoppingMet && *out.TPOT.EarlyStoppingMet
		out.EarlyStoppingMet = &met
	}
	return out
}

// judgeTokens judges per-sample values (taking ownership of vs) at
// percentile p against bound: sorted[floor(n·p)] ≤ bound; no sample meets
// it. f, when not nil, adds Server early stopping over the same samples.
func judgeTokens(vs []int64, p float64, bound uint64, f *stats.MinPassingFinder) TokenBound {
	b := TokenBound{BoundNs: bound, Met: true}
	slices.Sort(vs)
	lim := int64(min(bound, math.MaxInt64))
	if n := len(vs); n > 0 {
		b.PercentileNs = vs[min(int(float64(n)*p), n-1)]
		b.Met = b.PercentileNs <= lim
		b.OverBound = int64(n - sort.Search(n, func(i int) bool { return vs[i] > lim }))
	}
	if f != nil {
		v := f.Server(int64(len(vs)), b.OverBound)
		b.EarlyStoppingMet, b.EarlyStoppingRequired = &v.Met, v.Required
	}
	return b
}
