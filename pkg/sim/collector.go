package sim

import (
	"maps"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
)

// Collector exports the simulator's state for Prometheus, labelled by model
// and version (a handful of series per model): queue depth and busy
// instances, and executed batch sizes as a histogram. Register it once:
// prometheus.MustRegister(srv.Collector()).
func (s *Server) Collector() prometheus.Collector { return collector{s} }

type collector struct{ s *Server }

var (
	labels    = []string{"model", "version"}
	queueDesc = prometheus.NewDesc("sutproxy_sim_queue_requests",
		"Requests waiting for an instance.", labels, nil)
	busyDesc = prometheus.NewDesc("sutproxy_sim_busy_instances",
		"Instances executing a request or batch.", labels, nil)
	instancesDesc = prometheus.NewDesc("sutproxy_sim_instances",
		"Instances of the model: how many executions may run at once.", labels, nil)
	batchDesc = prometheus.NewDesc("sutproxy_sim_execution_batch_size",
		"Samples per execution: one observation per execution.", labels, nil)
	// The names netloadgen's server view knows (serverview.KnownMetrics),
	// the same values: what a run's scrape of sutproxy reads as the
	// truth of its queue and batches.
	queueDepthDesc = prometheus.NewDesc("sutproxy_queue_depth",
		"Requests waiting for a simulated instance.", labels, nil)
	batchSizeDesc = prometheus.NewDesc("sutproxy_batch_size",
		"Samples per simulated execution: one observation per execution.", labels, nil)
)

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{queueDesc, busyDesc, instancesDesc, batchDesc, queueDepthDesc, batchSizeDesc} {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	for _, name := range c.s.names {
		for _, e := range c.s.models[name].sorted() {
			g := e.gauges()
			lv := []string{name, e.version}
			ch <- prometheus.MustNewConstMetric(queueDesc, prometheus.GaugeValue, float64(g.queued), lv...)
			ch <- prometheus.MustNewConstMetric(busyDesc, prometheus.GaugeValue, float64(g.busy), lv...)
			ch <- prometheus.MustNewConstMetric(instancesDesc, prometheus.GaugeValue, float64(e.spec.Instances), lv...)
			ch <- prometheus.MustNewConstHistogram(batchDesc, g.executions, g.samples, g.buckets, lv...)
			ch <- prometheus.MustNewConstMetric(queueDepthDesc, prometheus.GaugeValue, float64(g.queued), lv...)
			ch <- prometheus.MustNewConstHistogram(batchSizeDesc, g.executions, g.samples, g.buckets, lv...)
		}
	}
}

type engineGauges struct {
	queued, busy int
	executions   uint64
	samples      float64
	buckets      map[float64]uint64 // cumulative, le powers of 2
}

// gauges snapshots the engine for the collector. Buckets are powers of two up
// to the model's max batch size, so their number stays small.
func (e *engine) gauges() engineGauges {
	e.mu.Lock()
	defer e.mu.Unlock()
	g := engineGauges{queued: e.queued, busy: e.spec.Instances - e.idle, executions: e.exec.executions, buckets: map[float64]uint64{}}
	var bounds []float64
	for b := 1; ; b *= 2 {
		bounds = append(bounds, float64(b))
		if b >= e.spec.MaxBatchSize {
			break
		}
	}
	for _, size := range slices.Sorted(maps.Keys(e.exec.bySize)) {
		n := e.exec.bySize[size].count
		g.samples += float64(size) * float64(n)
		for _, b := range bounds {
			if float64(size) <= b {
				g.buckets[b] += n
			}
		}
	}
	for _, b := range bounds {
		g.buckets[b] += 0 // every bucket present, even when empty
	}
	return g
}
