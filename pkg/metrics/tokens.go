package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// tokenMetrics are a generative run's: its token latencies (native
// histograms, from the sample's scheduled time as the result's) and counts.
type tokenMetrics struct {
	ttft, tpot, itl           prometheus.Histogram
	outputTokens, inputTokens prometheus.Counter
}

func newTokenMetrics() tokenMetrics {
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	}
	return tokenMetrics{
		ttft: histogram("loadgend_ttft_seconds",
			"Time to first token of generative samples answered successfully: the first token-bearing response, from the time their query was scheduled.", latencyBuckets),
		tpot: histogram("loadgend_tpot_seconds",
			"Time per output token of generative samples of at least two tokens answered successfully: (E2E - TTFT)/(tokens - 1), LoadGen's definition.", latenessBuckets),
		itl: histogram("loadgend_itl_seconds",
			"Inter-token latency: every gap between two token-bearing responses of a generative sample answered successfully.", latenessBuckets),
		outputTokens: counter("loadgend_output_tokens_total", "Output tokens of generative samples answered successfully (the server's count, else one per token-bearing response)."),
		inputTokens:  counter("loadgend_input_tokens_total", "Input (prompt) tokens of generative samples answered successfully."),
	}
}

func (t *tokenMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{t.ttft, t.tpot, t.itl, t.outputTokens, t.inputTokens}
}

// Tokens implements loadgen.TokenObserver: one successful generative
// sample's measurements.
func (o *observer) Tokens(_, output, input int, ttft, tpot time.Duration, gaps []time.Duration) {
	t := &o.tok
	t.outputTokens.Add(float64(output))
	if input > 0 {
		t.inputTokens.Add(float64(input))
	}
	t.ttft.Observe(max(ttft, 0).Seconds())
	if output >= 2 {
		t.tpot.Observe(max(tpot, 0).Seconds())
	}
	for _, g := range gaps {
		t.itl.Observe(max(g, 0).Seconds())
	}
}
