package runlog

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/mlperflog"
	"github.com/netloadgen/netloadgen/pkg/stats"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// tokenLines are netloadgen's summary lines (and netloadgen_ detail keys)
// of a generative run's tokens; none without them.
func tokenLines(res *loadgen.Result) []mlperflog.Field {
	tk := res.Tokens
	if tk == nil {
		return nil
	}
	f := []mlperflog.Field{
		{Key: "token_samples", Value: strconv.FormatInt(tk.Samples, 10)},
		{Key: "ttft", Value: tokenStatsText(tk.TTFT)},
		{Key: "tpot", Value: tokenStatsText(tk.TPOT)},
		{Key: "itl", Value: tokenStatsText(tk.ITL)},
		{Key: "e2e", Value: tokenStatsText(tk.E2E)},
		{Key: "output_tokens", Value: strconv.FormatInt(tk.OutputTokens, 10)},
		{Key: "input_tokens", Value: strconv.FormatInt(tk.InputTokens, 10)},
		{Key: "output_tokens_per_second", Value: fmt.Sprintf("%.2f", tk.OutputTokensPerSecond)},
		{Key: "output_tokens_per_second_per_user", Value: fmt.Sprintf("%.2f", tk.OutputTokensPerSecondPerUser)},
	}
	if g := tk.GoodputSamplesPerSecond; g != nil {
		f = append(f, mlperflog.Field{Key: "goodput_samples_per_second",
			Value: fmt.Sprintf("%.2f (%d of %d samples met %s)", *g, *tk.SamplesMeetingSLO, tk.Samples, tk.SLO)})
	}
	return append(f, mlperflog.Field{Key: "token_count_source", Value: tk.TokenCountSource})
}

// tokenStatsText is one measurement's line: mean and percentiles in ms.
func tokenStatsText(s loadgen.TokenStats) string {
	if s.Count == 0 {
		return "none"
	}
	ms := func(ns int64) string { return strconv.FormatFloat(float64(ns)/1e6, 'f', 3, 64) }
	return fmt.Sprintf("mean %s ms, p50 %s, p90 %s, p99 %s, max %s ms (%d)", ms(s.Mean), ms(s.P50), ms(s.P90), ms(s.P99), ms(s.Max), s.Count)
}

// tokenSummary is SummaryLine's clause for a generative run.
func tokenSummary(res *loadgen.Result) string {
	tk := res.Tokens
	if tk == nil {
		return ""
	}
	ms := func(ns int64) string { return fmt.Sprintf("%.3f ms", float64(ns)/1e6) }
	var b strings.Builder
	fmt.Fprintf(&b, "; tokens: TTFT p50 %s p99 %s, TPOT p50 %s p99 %s, %.1f output tokens/s (%s)",
		ms(tk.TTFT.P50), ms(tk.TTFT.P99), ms(tk.TPOT.P50), ms(tk.TPOT.P99), tk.OutputTokensPerSecond, tk.TokenCountSource)
	if g := tk.GoodputSamplesPerSecond; g != nil {
		fmt.Fprintf(&b, ", goodput %.2f samples/s", *g)
	}
	return b.String()
}

// tokenLatencies maps the engine's token-latency verdict onto LoadGen's
// token lines and keys.
func tokenLatencies(tl *loadgen.TokenLatencies, sc trace.Scenario) (*mlperflog.TokenLatencies, error) {
	ttft, err := tableOf(tl.TTFT)
	if err != nil {
		return nil, fmt.Errorf("%w: first-token latencies: %w", ErrInvalidResult, err)
	}
	tpot, err := tableOf(tl.TPOT)
	if err != nil {
		return nil, fmt.Errorf("%w: time per output token: %w", ErrInvalidResult, err)
	}
	es := func(r *loadgen.EarlyStoppingResult) *stats.ServerEarlyStopping {
		if r == nil {
			return nil
		}
		return &stats.ServerEarlyStopping{Met: r.Met, Queries: r.Queries, OverLatency: r.OverLatency, Required: r.Required}
	}
	out := &mlperflog.TokenLatencies{
		FirstToken: ttft, TPOT: tpot, TTFTMet: tl.TTFTMet, TPOTMet: tl.TPOTMet,
		CompletedTokensPerSecond:           tl.CompletedTokensPerSecond,
		TokenThroughputWithLoadgenOverhead: tl.TokenThroughputWithLoadgenOverhead,
		TokenThroughput:                    tl.TokenThroughput,
		TokensPerSecond:                    tl.TokensPerSecond,
		TPSWithoutLoadgenOverhead:          tl.TPSWithoutLoadgenOverhead,
		FirstTokenTarget:                   time.Duration(tl.TTFTAtPercentileNs),
	}
	switch sc {
	case trace.Server:
		out.TPOTEarlyStopping, out.TTFTEarlyStopping = es(tl.TPOTEarlyStopping), es(tl.TTFTEarlyStopping)
	case trace.SingleStream, trace.MultiStream:
		var err error
		if out.TPOTEstimate, err = tokenEstimate(tl.TPOTEarlyStopping, sc); err == nil {
			out.TTFTEstimate, err = tokenEstimate(tl.TTFTEarlyStopping, sc)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// tokenEstimate maps a SingleStream or MultiStream token early-stopping
// verdict onto LoadGen's estimate block; SingleStream's p99 part from its
// value and the count it needs.
func tokenEstimate(r *loadgen.EarlyStoppingResult, sc trace.Scenario) (*mlperflog.EarlyStopping, error) {
	if r == nil {
		return nil, nil
	}
	es := &mlperflog.EarlyStopping{Estimate: &stats.PercentileEstimate{
		Met: r.Met, Queries: r.Queries, MinQueries: r.MinQueries, Discarded: r.Discarded, Latency: time.Duration(r.EstimateNs)}}
	if sc != trace.SingleStream || !r.Met {
		return es, nil
	}
	f99, err := stats.NewMinPassingFinder(0.99, stats.EarlyStoppingConfidence)
	if err != nil {
		return nil, fmt.Errorf("p99 early stopping: %w", err)
	}
	minQ := f99.MinPassing(1) + 1 // PercentileEstimate.MinQueries: h(1)+1
	es.Estimate99 = &stats.PercentileEstimate{Met: r.Queries >= minQ, Queries: r.Queries, MinQueries: minQ, Latency: time.Duration(r.EstimateP99Ns)}
	return es, nil
}

// tokenLatencySummary is SummaryLine's clause for a run judged by TTFT and
// TPOT: each at the target percentile against its bound.
func tokenLatencySummary(res *loadgen.Result) string {
	tl := res.TokenLatencies
	if tl == nil {
		return ""
	}
	ms := func(ns int64) string { return fmt.Sprintf("%.3f ms", float64(ns)/1e6) }
	p := fmt.Sprintf("p%s", strconv.FormatFloat(tl.Percentile*100, 'f', -1, 64))
	// The answered samples' TTFT and TPOT: a failed sample's are LoadGen's
	// INT64_MAX (the verdict counts them, a reader wants the latency).
	ttft := answeredTokenAt(tl.TTFTAtPercentileNs, tl.TTFTAnswered, tl.Percentile)
	tpot := answeredTokenAt(tl.TPOTAtPercentileNs, tl.TPOTAnswered, tl.Percentile)
	switch res.Scenario {
	case "Offline":
		return fmt.Sprintf("; %.2f tokens/s", tl.TokensPerSecond)
	case "SingleStream", "MultiStream":
		// No bound: LoadGen judges them by early stopping alone.
		return fmt.Sprintf("; token latencies: TTFT %s %s, TPOT %s %s%s, %.2f tokens/s completed",
			p, ttft, p, tpot, answeredNote(loadgen.Answered(tl.TTFT, tl.TTFTAnswered)), tl.CompletedTokensPerSecond)
	}
	return fmt.Sprintf("; judged by token latencies: TTFT %s %s (bound %s), TPOT %s %s (bound %s)%s, %.2f tokens/s completed",
		p, ttft, ms(int64(tl.TTFTBoundNs)), p, tpot, ms(int64(tl.TPOTBoundNs)), answeredNote(loadgen.Answered(tl.TTFT, tl.TTFTAnswered)),
		tl.CompletedTokensPerSecond)
}

// answeredTokenAt is a token latency at percentile p over the answered
// samples (answered, when the result has it; else LoadGen's value at),
// in ms; "failed" for a value that is a failed sample's.
func answeredTokenAt(at int64, answered *loadgen.LatencyStats, p float64) string {
	if answered != nil {
		return msAt(*answered, p)
	}
	if at == int64(stats.FailedLatency) {
		return "failed"
	}
	return fmt.Sprintf("%.3f ms", float64(at)/1e6)
}
