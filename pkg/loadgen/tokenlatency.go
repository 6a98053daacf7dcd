package loadgen

import (
	"math"
	"slices"
	"sort"
	"time"

	"github.com/netloadgen/netloadgen/pkg/stats"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// LoadGen 6.0.17's token-latency texts (results.cc, logging.cc), word for
// word: people and scripts compare them across runs.
const (
	RecTTFTNotMet = "TTFT constrain not met: Reduce target QPS to improve latency."
	RecTPOTNotMet = "TPOT constrain not met: Reduce target QPS to improve latency."
	// FewTokensMessage is LoadGen's error_runtime for a sample reported
	// with fewer than two tokens.
	FewTokensMessage = "Number of tokens need to be greater than 1"
)

// TokenSample is one sample as LoadGen's token-latency rules read it:
// latency and first-token latency in ns from the sample's scheduled time,
// and its output token count. Failed marks a sample that never completed
// (netloadgen's; LoadGen has none): it is over every bound.
type TokenSample struct {
	LatencyNs    int64
	FirstTokenNs int64
	Tokens       int64
	Failed       bool
}

// TokenLatencies is the verdict of a run with use_token_latencies, judged as
// LoadGen 6.0.17 judges it (results.cc ProcessTokenLatencies,
// PerfConstraintsMet, EarlyStopping): result.json's token_latencies.
type TokenLatencies struct {
	// Percentile is server_target_latency_percentile (Offline: 0.99,
	// unused); the bounds are server_ttft_latency / server_tpot_latency.
	Percentile  float64 `json:"percentile"`
	TTFTBoundNs uint64  `json:"ttft_bound_ns"`
	TPOTBoundNs uint64  `json:"tpot_bound_ns"`
	// TTFT and TPOT tables, per sample (every scenario but Offline, where
	// LoadGen has no first token). TPOT = (latency − TTFT)/(n − 1),
	// truncated; a sample of n ≤ 1 tokens counts n = 0, so its TPOT is
	// −(latency − TTFT), negative, and in min and mean, as in LoadGen.
	TTFT LatencyStats `json:"ttft"`
	TPOT LatencyStats `json:"tpot"`
	// TTFTAnswered and TPOTAnswered are the same tables over the answered
	// samples only (failed: the failed ones left out), what a person
	// reads; TTFT and TPOT keep LoadGen's INT64_MAX for a failed sample.
	// Nil without samples and in a result.json written before they
	// existed.
	TTFTAnswered *LatencyStats `json:"ttft_answered,omitempty"`
	TPOTAnswered *LatencyStats `json:"tpot_answered,omitempty"`
	// TTFTAtPercentileNs / TPOTAtPercentileNs are the tables at
	// Percentile; TTFTMet / TPOTMet whether each is within its bound.
	TTFTAtPercentileNs int64 `json:"ttft_at_percentile_ns"`
	TPOTAtPercentileNs int64 `json:"tpot_at_percentile_ns"`
	TTFTMet            bool  `json:"ttft_met"`
	TPOTMet            bool  `json:"tpot_met"`
	// TTFTOverBound / TPOTOverBound count the samples over each bound
	// (early stopping's t; a failed sample is over both).
	TTFTOverBound int64 `json:"ttft_over_bound"`
	TPOTOverBound int64 `json:"tpot_over_bound"`
	// Early stopping, TPOT first, then TTFT. Server: each with t = the
	// samples over its bound. SingleStream: the percentile estimate of
	// each token array; MultiStream: of the query latencies, both times
	// (streamTokenEarlyStopping). LoadGen's && short-circuits: when TPOT
	// fails TTFT is not judged (nil, an empty text in the logs).
	TPOTEarlyStopping *EarlyStoppingResult `json:"tpot_early_stopping,omitempty"`
	TTFTEarlyStopping *EarlyStoppingResult `json:"ttft_early_stopping,omitempty"`
	EarlyStoppingMet  bool                 `json:"early_stopping_met"`
	// OutputTokens sums n over samples of n ≥ 2; FewTokenSamples counts
	// the others, each an error_runtime FewTokensMessage in the detail log.
	OutputTokens    int64 `json:"output_tokens"`
	FewTokenSamples int64 `json:"samples_with_fewer_than_2_tokens"`
	// Throughputs as LoadGen logs them. Server: completed = tokens / final
	// done time, with loadgen overhead = tokens / final issued time,
	// token_throughput = tokens / (mean latency in ns × samples). Offline:
	// tokens / max latency.
	CompletedTokensPerSecond           float64 `json:"result_completed_tokens_per_second"`
	TokenThroughputWithLoadgenOverhead float64 `json:"result_token_throughput_with_loadgen_overhead"`
	TokenThroughput                    float64 `json:"result_token_throughput"`
	TokensPerSecond                    float64 `json:"result_tokens_per_second"`
	// TPSWithoutLoadgenOverhead (SingleStream): tokens / (mean latency in
	// s × samples), the summary's "TPS w/o loadgen overhead"; its "TPS w/"
	// is TokenThroughputWithLoadgenOverhead.
	TPSWithoutLoadgenOverhead float64 `json:"tps_without_loadgen_overhead,omitempty"`
}

// Met is the token part of the verdict: both percentiles within their
// bounds and early stopping passed.
func (t *TokenLatencies) Met() bool { return t.TTFTMet && t.TPOTMet && t.EarlyStoppingMet }

// tokenRun is what JudgeTokenLatencies needs of a run beyond its samples.
type tokenRun struct {
	scenario                  trace.Scenario
	percentile                float64
	ttftBound, tpotBound      uint64
	queriesIssued             int64
	finalIssuedNs, finalDone  int64
	maxLatencyNs, meanLatency int64
	// queries are the query latencies: MultiStream's early stopping
	// judges them even with token latencies.
	queries stats.Latencies
}

func tokenRunOf(s Settings, res *Result, queries stats.Latencies) tokenRun {
	return tokenRun{queries: queries,
		scenario: s.Scenario, percentile: s.TargetPercentile(),
		ttftBound: s.ServerTTFTLatencyNs, tpotBound: s.ServerTPOTLatencyNs,
		queriesIssued: res.QueriesIssued, finalIssuedNs: res.FinalQueryIssuedTimeNs,
		finalDone: res.FinalQueryAllSamplesDoneTimeNs, maxLatencyNs: res.SampleLatency.MaxNs,
		meanLatency: res.SampleLatency.MeanNs,
	}
}

// judgeTokenLatencies applies LoadGen's token-latency rules to samples (any
// order). Only Server has TTFT/TPOT constraints; SingleStream and
// MultiStream have early stopping alone; Offline gets its tokens per second.
func judgeTokenLatencies(in tokenRun, samples []TokenSample) *TokenLatencies {
	t := &TokenLatencies{Percentile: in.percentile, TTFTBoundNs: in.ttftBound, TPOTBoundNs: in.tpotBound,
		TTFTMet: true, TPOTMet: true, EarlyStoppingMet: true}
	ttft := make([]int64, 0, len(samples))
	tpot := make([]int64, 0, len(samples))
	failed := 0
	for _, s := range samples {
		n := s.Tokens
		if s.Failed {
			failed++
			ttft, tpot = append(ttft, math.MaxInt64), append(tpot, math.MaxInt64)
			continue
		}
		if n <= 1 {
			// LoadGen records the sample's n_tokens as 0 (and an error).
			t.FewTokenSamples++
			n = 0
		}
		t.OutputTokens += n
		ttft = append(ttft, s.FirstTokenNs)
		tpot = append(tpot, (s.LatencyNs-s.FirstTokenNs)/(n-1))
	}
	rate := func(ns int64) float64 {
		if ns <= 0 {
			return 0
		}
		return float64(t.OutputTokens) / (float64(ns) / 1e9)
	}
	if in.scenario == trace.Offline {
		t.TokensPerSecond = rate(in.maxLatencyNs)
		return t
	}
	t.CompletedTokensPerSecond = rate(in.finalDone)
	t.TokenThroughputWithLoadgenOverhead = rate(in.finalIssuedNs)
	if d := in.meanLatency * int64(len(samples)); d > 0 {
		t.TokenThroughput = float64(t.OutputTokens) / float64(d)
		if in.scenario == trace.SingleStream {
			// The summary's "TPS w/o loadgen overhead": tokens over the
			// mean latency in seconds times the samples.
			t.TPSWithoutLoadgenOverhead = float64(t.OutputTokens) / (float64(in.meanLatency) / 1e9 * float64(len(samples)))
		}
	}
	t.TTFT, t.TTFTAtPercentileNs = exactStats(ttft, in.percentile)
	t.TPOT, t.TPOTAtPercentileNs = exactStats(tpot, in.percentile)
	t.TTFTAnswered, t.TPOTAnswered = answeredExact(ttft, failed, in.percentile), answeredExact(tpot, failed, in.percentile)
	if len(samples) == 0 {
		return t
	}
	if in.scenario != trace.Server {
		streamTokenEarlyStopping(t, in, ttft, tpot)
		return t
	}
	t.TTFTMet = t.TTFTAtPercentileNs <= clampBound(in.ttftBound)
	t.TPOTMet = t.TPOTAtPercentileNs <= clampBound(in.tpotBound)
	t.TTFTOverBound, t.TPOTOverBound = countOver(ttft, in.ttftBound), countOver(tpot, in.tpotBound)
	t.TPOTEarlyStopping = serverEarlyStopping(in.percentile, in.queriesIssued, t.TPOTOverBound)
	t.EarlyStoppingMet = t.TPOTEarlyStopping.Met
	if t.EarlyStoppingMet {
		t.TTFTEarlyStopping = serverEarlyStopping(in.percentile, in.queriesIssued, t.TTFTOverBound)
		t.EarlyStoppingMet = t.TTFTEarlyStopping.Met
	}
	return t
}

// streamTokenEarlyStopping is LoadGen's SingleStream and MultiStream
// verdict with token latencies (results.cc EarlyStopping, LogSummary): no
// constraint on TTFT or TPOT (PerfConstraintsMet is Server's), early
// stopping TPOT first, then TTFT (&&). SingleStream estimates each token
// array's percentile (ttft and tpot ascending); MultiStream estimates its
// query latencies both times, for LoadGen passes query_latencies to both
// calls, so the two texts are the same.
func streamTokenEarlyStopping(t *TokenLatencies, in tokenRun, ttft, tpot []int64) {
	judge := func(v []int64) *EarlyStoppingResult {
		return estimateEarlyStopping(in.scenario, in.percentile, func(f *stats.MinPassingFinder) stats.PercentileEstimate {
			if in.scenario == trace.MultiStream {
				return f.EstimatePercentile(in.queries)
			}
			return f.EstimateSelect(int64(len(v)), func(k int64) time.Duration { return time.Duration(v[k]) })
		})
	}
	t.TPOTEarlyStopping = judge(tpot)
	t.EarlyStoppingMet = t.TPOTEarlyStopping.Met
	if t.EarlyStoppingMet {
		t.TTFTEarlyStopping = judge(ttft)
		t.EarlyStoppingMet = t.TTFTEarlyStopping.Met
	}
}

func clampBound(b uint64) int64 { return int64(min(b, math.MaxInt64)) }

// countOver counts the values of ascending v above bound.
func countOver(v []int64, bound uint64) int64 {
	b := clampBound(bound)
	return int64(len(v) - sort.Search(len(v), func(i int) bool { return v[i] > b }))
}

// exactStats sorts v in place and summarises it as LoadGen does: the mean
// is the int64 sum over the count, truncated toward zero, and percentile p
// is v[size_t(n·p)]. It also returns the value at target.
func exactStats(v []int64, target float64) (LatencyStats, int64) {
	if len(v) == 0 {
		return LatencyStats{}, 0
	}
	slices.Sort(v)
	var sum int64
	for _, x := range v {
		if x != math.MaxInt64 {
			sum += x
		}
	}
	at := func(p float64) int64 { return v[min(int(float64(len(v))*p), len(v)-1)] }
	st := LatencyStats{Count: len(v), MinNs: v[0], MaxNs: v[len(v)-1], MeanNs: sum / int64(len(v))}
	ps := reportedPercentiles
	if target > 0 && !slices.Contains(ps, target) {
		ps = append(slices.Clone(ps), target)
		slices.Sort(ps)
	}
	for _, p := range ps {
		st.Percentiles = append(st.Percentiles, Percentile{P: p, LatencyNs: at(p)})
	}
	return st, at(target)
}

// answeredExact is exactStats over the answered samples of v, sorted by
// exactStats with the failed ones (INT64_MAX) last: its first len − failed
// values. Nil for no samples.
func answeredExact(v []int64, failed int, target float64) *LatencyStats {
	if len(v) == 0 {
		return nil
	}
	st, _ := exactStats(v[:len(v)-failed], target)
	st.Failed = failed
	return &st
}

// serverEarlyStopping is LoadGen's Server early stopping with t samples
// over the bound among queries issued.
func serverEarlyStopping(p float64, issued, over int64) *EarlyStoppingResult {
	f, err := stats.NewMinPassingFinder(p, stats.EarlyStoppingConfidence)
	if err != nil {
		return &EarlyStoppingResult{Text: err.Error()}
	}
	v := f.Server(issued, over)
	return serverEarlyStoppingResult(v, p)
}

// serverEarlyStoppingResult is a Server verdict with LoadGen's text.
func serverEarlyStoppingResult(v stats.ServerEarlyStopping, p float64) *EarlyStoppingResult {
	es := &EarlyStoppingResult{Met: v.Met, Queries: v.Queries, OverLatency: v.OverLatency, Required: v.Required, Percentile: p}
	if v.Met {
		es.Text = " * Run successful."
		return es
	}
	es.MoreQueriesNeeded = v.MoreNeeded()
	es.Text = serverEarlyStoppingFailText(v.Queries, es.MoreQueriesNeeded)
	return es
}

// tokenSamples reads every issued sample of the run's record as LoadGen's
// token rules read it, in sequence order. A sample whose answer carried no
// token has its first token at its completion and 0 tokens.
func (r *Run) tokenSamples() []TokenSample {
	out := make([]TokenSample, 0, r.samplesIssued())
	r.eachSample(func(s TokenSample) { out = append(out, s) })
	return out
}

// eachSample calls fn with tokenSamples's samples one by one.
func (r *Run) eachSample(fn func(TokenSample)) {
	t := r.tok.Load()
	// Every sample of the record: those of queries never issued are not
	// recorded and skipped (with several shards the issued queries need
	// not be the first ones).
	r.samples.Each(0, r.n*r.spq, func(seq int, d time.Duration) {
		if d == stats.FailedLatency {
			fn(TokenSample{LatencyNs: int64(d), FirstTokenNs: int64(d), Failed: true})
			return
		}
		s := TokenSample{LatencyNs: int64(d), FirstTokenNs: int64(d)}
		if t != nil && t.tokens[seq] > 0 {
			s.Tokens = int64(t.tokens[seq])
			s.FirstTokenNs = min(max(t.first[seq], 0), int64(d))
		}
		fn(s)
	})
}
