package metrics

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/netloadgen/netloadgen/pkg/outcome"
)

// Metrics holds loadgend's collectors. Its observer methods are safe for
// concurrent use and do not allocate once every histogram bucket they touch
// exists; the run methods take a lock and are meant for the daemon's control
// path.
type Metrics struct {
	queriesIssued, queriesCompleted, queriesFailed prometheus.Counter
	samplesIssued, samplesCompleted                prometheus.Counter
	samplesFailed                                  [outcome.Count]prometheus.Counter
	// failedByCode is resolved per failure (a hash and a read lock; only
	// failures pay it): creating the 520 code series up front would list
	// them all, at 0, on every scrape.
	failedByCode                     *prometheus.CounterVec
	requestsResent                   prometheus.Counter
	queriesInFlight, samplesInFlight prometheus.Gauge
	latency, lateness                prometheus.Histogram
	tok                              tokenMetrics

	// okSamples mirrors samplesCompleted for the achieved-rate gauge: a
	// Prometheus counter can only be read back through a costly Write.
	okSamples atomic.Int64
	rate      *rateWindow

	mu          sync.Mutex // serialises the run methods
	active      string     // the active run's id; "" when none
	activeInfo  []string   // its run_info label values
	targetQPS   prometheus.Gauge
	state       *prometheus.GaugeVec
	runs        *prometheus.CounterVec
	info        *prometheus.GaugeVec
	searchTrial prometheus.Gauge
	searchLow   prometheus.Gauge
	searchHigh  prometheus.Gauge
}

// Classic buckets: a 1-2.5-5 series, so a classic-only scraper still tells
// 100 µs from 250 µs and 30 s from 60 s.
var (
	latencyBuckets  = []float64{100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 500e-3, 1, 2.5, 5, 10, 30, 60}
	latenessBuckets = append([]float64{10e-6, 25e-6, 50e-6}, latencyBuckets...)
)

const (
	// nativeFactor 1.05 gives schema 4 (16 buckets per power of two, each
	// ≤ 4.5% wide): a percentile estimate within about 2%.
	nativeFactor = 1.05
	// maxNativeBuckets bounds memory: 100 µs to 60 s at schema 4 is about
	// 310 buckets. Past it the client halves the resolution rather than
	// resetting (no NativeHistogramMinResetDuration): a reset would lose
	// the run's count.
	maxNativeBuckets = 320
	// rateWindow is the achieved-rate gauge's look-back.
	rateWindowSpan = 5 * time.Second
)

func histogram(name, help string, buckets []float64) prometheus.Histogram {
	return prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:                           name,
		Help:                           help,
		Buckets:                        buckets,
		NativeHistogramBucketFactor:    nativeFactor,
		NativeHistogramMaxBucketNumber: maxNativeBuckets,
		NativeHistogramMaxExemplars:    -1,
	})
}

// New creates loadgend's metrics and registers them on reg (which NewRegistry
// makes with the Go runtime and process collectors already on it). It fails
// if any of them is already registered there.
func New(reg prometheus.Registerer) (*Metrics, error) {
	if reg == nil {
		return nil, errors.New("metrics: no registerer")
	}
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	}
	gauge := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
	}
	m := &Metrics{
		queriesIssued:    counter("loadgend_queries_issued_total", "Queries handed to the system under test."),
		queriesCompleted: counter("loadgend_queries_completed_total", "Queries whose every sample was answered successfully."),
		queriesFailed:    counter("loadgend_queries_failed_total", "Queries finished with at least one failed sample."),
		samplesIssued:    counter("loadgend_samples_issued_total", "Samples handed to the system under test."),
		samplesCompleted: counter("loadgend_samples_completed_total", "Samples answered successfully."),
		requestsResent: counter("loadgend_requests_resent_total",
			"Requests the client sent again because they provably never reached the server (their connection was found closed or reset before they were written); added when a run or search trial ends. Not failures: a written request is never resent."),
		queriesInFlight: gauge("loadgend_queries_in_flight", "Queries issued and not yet finished."),
		samplesInFlight: gauge("loadgend_samples_in_flight", "Samples issued and not yet finished."),
		latency: histogram("loadgend_sample_latency_seconds",
			"Latency of successfully answered samples, from the time their query was scheduled (LoadGen's latency).", latencyBuckets),
		lateness: histogram("loadgend_issue_lateness_seconds",
			"How long after its scheduled time each query was issued.", latenessBuckets),
		targetQPS: gauge("loadgend_target_samples_per_second", "The active run's target rate (LoadGen's target QPS); 0 without an active run."),
		state: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "loadgend_run_state",
			Help: "1 for the state of the active or most recent run, 0 for the others."}, []string{"state"}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "loadgend_runs_total",
			Help: "Runs ended, by final state."}, []string{"state"}),
		info: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "loadgend_run_info",
			Help: "1 for the active run, labelled with its id, scenario, model and target; absent without one."},
			[]string{"run_id", "scenario", "model", "target"}),
		searchTrial: gauge("loadgend_search_trial", "The active peak search's current trial number; 0 outside a search."),
		searchLow:   gauge("loadgend_search_lower_bound_samples_per_second", "The active peak search's lower bound on the peak rate."),
		searchHigh:  gauge("loadgend_search_upper_bound_samples_per_second", "The active peak search's upper bound on the peak rate (+Inf until one is known)."),
		rate:        newRateWindow(rateWindowSpan, time.Now),
		tok:         newTokenMetrics(),
	}
	failed := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "loadgend_samples_failed_total",
		Help: "Samples that failed, by outcome: " + fmt.Sprint(outcome.Outcomes()) + "."}, []string{"outcome"})
	m.failedByCode = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "loadgend_samples_failed_by_code_total",
		Help: "Samples that failed, by the status the server answered with: http_100 to http_599, http_other, " +
			"grpc_ok to grpc_unauthenticated (gRPC's 17 codes), grpc_other, or \"\" when no answer carried one. " +
			"A series appears at its first failure."}, []string{"code"})
	for o := range outcome.Count {
		// Resolved once: a label lookup per completion would hash and lock.
		m.samplesFailed[o] = failed.WithLabelValues(o.String())
	}
	for _, s := range States() {
		m.state.WithLabelValues(s).Set(0)
		if terminal(s) {
			m.runs.WithLabelValues(s).Add(0)
		}
	}
	achieved := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "loadgend_achieved_samples_per_second",
		Help: "Samples answered successfully per second over about the last 5 s, measured between scrapes."},
		func() float64 { return m.rate.observe(m.okSamples.Load()) })
	all := []prometheus.Collector{m.queriesIssued, m.queriesCompleted, m.queriesFailed,
		m.samplesIssued, m.samplesCompleted, failed, m.failedByCode, m.requestsResent, m.queriesInFlight, m.samplesInFlight,
		m.latency, m.lateness, m.targetQPS, achieved, m.state, m.runs, m.info,
		m.searchTrial, m.searchLow, m.searchHigh}
	all = append(all, m.tok.collectors()...)
	for i, c := range all {
		if err := reg.Register(c); err != nil {
			for _, r := range all[:i] { // leave reg as it was
				reg.Unregister(r)
			}
			return nil, fmt.Errorf("metrics: registering: %w", err)
		}
	}
	return m, nil
}

// NewRegistry returns a fresh registry holding the Go runtime and process
// collectors, for New and Handler.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// Handler serves g for GET /metrics, in the text format or, when the
// scraper asks for it, protobuf (which native histograms need).
func Handler(g prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}
