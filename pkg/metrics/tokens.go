package metrics

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// tokenMetrics are a generative run's: its token latencies (native
// histograms, from the sample's scheduled time as the result's) and counts.
type tokenMetrics struct {
	ttft, tpot, itl           prometheus.Histogram
	outputTokens, inputTokens prometheus.Counter
	// The active run's token-latency bounds (use_token_latencies; 0:
	// none) and its samples over them so far: the live view of
	// result.json's token_latencies. The bounds are ns, read by every
	// completion's goroutine.
	ttftBoundNs, tpotBoundNs     atomic.Int64
	ttftBound, tpotBound         prometheus.Gauge
	ttftOverBound, tpotOverBound prometheus.Counter
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
		ttftBound: tokenGauge("loadgend_ttft_bound_seconds",
			"The active run's time-to-first-token bound (server_ttft_latency) when it judges token latencies (use_token_latencies), else 0."),
		tpotBound: tokenGauge("loadgend_tpot_bound_seconds",
			"The active run's time-per-output-token bound (server_tpot_latency) when it judges token latencies (use_token_latencies), else 0."),
		ttftOverBound: counter("loadgend_ttft_over_bound_samples_total",
			"Generative samples answered successfully whose time to first token exceeded the run's TTFT bound (runs judging token latencies)."),
		tpotOverBound: counter("loadgend_tpot_over_bound_samples_total",
			"Generative samples answered successfully whose time per output token exceeded the run's TPOT bound (runs judging token latencies)."),
	}
}

func tokenGauge(name, help string) prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
}

// setBounds sets the token-latency bounds samples are counted against
// from now on (0, 0: none).
func (t *tokenMetrics) setBounds(ttft, tpot time.Duration) {
	t.ttftBoundNs.Store(int64(ttft))
	t.tpotBoundNs.Store(int64(tpot))
	t.ttftBound.Set(ttft.Seconds())
	t.tpotBound.Set(tpot.Seconds())
}

func (t *tokenMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{t.ttft, t.tpot, t.itl, t.outputTokens, t.inputTokens, t.ttftBound, t.tpotBound, t.ttftOverBound, t.tpotOverBound}
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
	// A sample of fewer than two tokens has LoadGen's negative TPOT:
	// never over.
	if b := t.ttftBoundNs.Load(); b > 0 && int64(ttft) > b {
		t.ttftOverBound.Inc()
	}
	if b := t.tpotBoundNs.Load(); b > 0 && output >= 2 && int64(tpot) > b {
		t.tpotOverBound.Inc()
	}
}

// SetTokenBounds gives the active run's token-latency bounds
// (server_ttft_latency, server_tpot_latency) when it judges token
// latencies: loadgend_ttft_bound_seconds and loadgend_tpot_bound_seconds
// show them and samples over them count in the *_over_bound_samples_total
// counters until RunEnded. Zero both for a run without them.
func (m *Metrics) SetTokenBounds(ttft, tpot time.Duration) error {
	if ttft < 0 || tpot < 0 {
		return fmt.Errorf("%w: token bounds %v, %v: not negative", ErrRun, ttft, tpot)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.active == "" && (ttft > 0 || tpot > 0) {
		return fmt.Errorf("%w: token bounds without an active run", ErrRun)
	}
	m.tok.setBounds(ttft, tpot)
	return nil
}
