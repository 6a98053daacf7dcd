package loadgen

import (
	"fmt"
	"time"

	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/stats"
)

// Token count sources (TokenResult.TokenCountSource).
const (
	// TokensFromServer: every sample's output tokens are the server's
	// count (usage.completion_tokens, output_ids).
	TokensFromServer = "server"
	// TokensFromResponses: some samples' output tokens were counted one
	// per token-bearing response (the server gave no count).
	TokensFromResponses = "responses"
)

// TokenResult is what a generative run measured of its tokens: result.json's
// tokens (RESULT.md). Per-sample times count from the sample's scheduled
// time, as every latency does; only samples answered successfully with at
// least one output token count.
type TokenResult struct {
	// Samples is the samples measured.
	Samples int64 `json:"samples"`
	// TTFT: first token-bearing response − scheduled. TPOT: LoadGen's
	// (E2E − TTFT)/(n − 1) of each sample of n ≥ 2 tokens. E2E: the
	// sample's latency. All three exact, from the per-sample record.
	TTFT TokenStats `json:"ttft_ns"`
	TPOT TokenStats `json:"tpot_ns"`
	// ITL is every inter-token gap of every sample, from a histogram
	// (within 0.1%).
	ITL TokenStats `json:"itl_ns"`
	E2E TokenStats `json:"e2e_ns"`

	OutputTokens int64 `json:"output_tokens"`
	InputTokens  int64 `json:"input_tokens"`
	// OutputTokensPerSecond is OutputTokens over the time from the run's
	// start to its last completion (final_query_all_samples_done_time_ns).
	OutputTokensPerSecond float64 `json:"output_tokens_per_second"`
	// OutputTokensPerSecondPerUser is the mean over samples of n ≥ 2
	// tokens of (n − 1)/(E2E − TTFT), i.e. of 1/TPOT: the decode speed one
	// user sees once the first token has come. A sample whose tokens all
	// arrived in one read is left out (its quotient is no rate), and a
	// warning counts them.
	OutputTokensPerSecondPerUser float64 `json:"output_tokens_per_second_per_user"`

	// With an SLO (engine.slo, --slo): the objectives, the samples meeting
	// them, and their rate over the same time as OutputTokensPerSecond.
	SLO                     *genai.SLO `json:"slo,omitempty"`
	SamplesMeetingSLO       *int64     `json:"samples_meeting_slo,omitempty"`
	GoodputSamplesPerSecond *float64   `json:"goodput_samples_per_second,omitempty"`

	// TokenCountSource is TokensFromServer or TokensFromResponses.
	TokenCountSource string `json:"token_count_source"`
}

// TokenStats summarise one token measurement, in ns; all zero when no
// sample had one (Count 0). Percentiles are sorted[floor(n·p)], the mean
// truncated, as LatencyStats' are.
type TokenStats struct {
	Count int64 `json:"count"`
	Mean  int64 `json:"mean"`
	P50   int64 `json:"p50"`
	P90   int64 `json:"p90"`
	P99   int64 `json:"p99"`
	Max   int64 `json:"max"`
}

// tokenStatsOf summarises exact values (taking ownership of ds).
func tokenStatsOf(ds []time.Duration) TokenStats {
	l, err := stats.NewLatencies(ds)
	if err != nil || l.Len() == 0 {
		return TokenStats{}
	}
	sum, _ := l.Summary()
	at := func(p float64) int64 { v, _ := l.Percentile(p); return int64(v) }
	return TokenStats{Count: int64(l.Len()), Mean: int64(sum.Mean), P50: at(0.5), P90: at(0.9), P99: at(0.99), Max: int64(sum.Max)}
}

// tokenSample is one generative sample as the result reads it.
type tokenSample struct {
	ttft, e2e     time.Duration
	tokens, input int64
	burst         bool // its tokens all arrived at one instant
}

// tokenResult computes the run's TokenResult (nil when no sample carried
// tokens). It runs after close, like result.
func (r *Run) tokenResult(res *Result) *TokenResult {
	t := r.tok.Load()
	if t == nil || t.fromServer.Load()+t.fromResponses.Load() == 0 {
		return nil
	}
	var ttft, tpot, e2e []time.Duration
	out := &TokenResult{TokenCountSource: TokensFromServer}
	if t.fromResponses.Load() > 0 {
		out.TokenCountSource = TokensFromResponses
	}
	slo := r.settings.Engine.SLO
	var met, perUserN, burst int64
	var perUser float64
	r.eachTokenSample(t, func(s tokenSample) {
		out.Samples++
		out.OutputTokens += s.tokens
		out.InputTokens += s.input
		ttft, e2e = append(ttft, s.ttft), append(e2e, s.e2e)
		pot := samplePOT(int64(s.e2e), int64(s.ttft), s.tokens)
		if s.tokens >= 2 {
			tpot = append(tpot, pot)
			switch {
			case s.e2e <= s.ttft:
			case s.burst:
				// Every token in one read, the end a moment later: the
				// quotient is a read's spacing, not a decode rate.
				burst++
			default:
				perUser += float64(s.tokens-1) / (s.e2e - s.ttft).Seconds()
				perUserN++
			}
		}
		if slo.Met(s.ttft, pot, s.e2e, int(s.tokens)) {
			met++
		}
	})
	out.TTFT, out.TPOT, out.E2E = tokenStatsOf(ttft), tokenStatsOf(tpot), tokenStatsOf(e2e)
	out.ITL = histogramStats(t.itl)
	if perUserN > 0 {
		out.OutputTokensPerSecondPerUser = perUser / float64(perUserN)
	}
	res.Warnings = append(res.Warnings, tokenWarnings(t, burst)...)
	secs := float64(res.FinalQueryAllSamplesDoneTimeNs) / 1e9
	if secs > 0 {
		out.OutputTokensPerSecond = float64(out.OutputTokens) / secs
	}
	if slo.Set() {
		good := 0.0
		if secs > 0 {
			good = float64(met) / secs
		}
		out.SLO, out.SamplesMeetingSLO, out.GoodputSamplesPerSecond = &slo, &met, &good
	}
	return out
}

// eachTokenSample calls fn for every sample answered successfully with
// tokens, in sequence order.
func (r *Run) eachTokenSample(t *tokenRecord, fn func(tokenSample)) {
	// Every sample of the record: unissued ones are not recorded, skipped.
	r.samples.Each(0, r.n*r.spq, func(seq int, d time.Duration) {
		if d == stats.FailedLatency || t.tokens[seq] <= 0 {
			return
		}
		ttft := time.Duration(t.first[seq])
		fn(tokenSample{ttft: min(max(ttft, 0), d), e2e: d, tokens: int64(t.tokens[seq]), input: int64(t.input[seq]), burst: t.burst[seq]})
	})
}

// tokenWarnings are the run's warnings about its token counts and rates,
// one each, with counts: the server's claims set aside
// (Completion.TokensClaimed) and the samples left out of the per-user rate
// because their tokens all came at once.
func tokenWarnings(t *tokenRecord, burst int64) []string {
	var w []string
	if n := t.claimsSetAside.Load(); n > 0 {
		w = append(w, fmt.Sprintf("the server's output token counts were not believed for %d samples: it claimed %d tokens where %d token-bearing responses came "+
			"(a claim over max_tokens, under the responses or over %d per response); the responses were counted instead (docs/genai.md, token counts)",
			n, t.claimedTokens.Load(), t.countedTokens.Load(), genai.MaxTokensPerResponse))
	}
	if burst > 0 {
		w = append(w, fmt.Sprintf("%d samples' tokens all arrived in one read, with no time between the first and the last: "+
			"left out of output_tokens_per_second_per_user (their TPOT, LoadGen's, measures no decoding)", burst))
	}
	return w
}

// histogramStats summarises a live histogram (the inter-token gaps).
func histogramStats(l *stats.LiveHistogram) TokenStats {
	h := l.Snapshot()
	if h.TotalCount() == 0 {
		return TokenStats{}
	}
	at := func(p float64) int64 { v, _ := stats.HistogramPercentile(h, p); return int64(v) }
	return TokenStats{Count: h.TotalCount(), Mean: int64(h.Mean()), P50: at(0.5), P90: at(0.9), P99: at(0.99), Max: h.Max()}
}
