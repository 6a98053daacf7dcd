package worker

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// ownMetrics are the worker's own, beside the run metrics.
type ownMetrics struct {
	connected                     prometheus.Gauge
	heartbeats, assignments       prometheus.Counter
	clockOffset, clockUncertainty prometheus.Gauge
}

func newOwnMetrics(reg prometheus.Registerer) (ownMetrics, error) {
	m := ownMetrics{
		connected: prometheus.NewGauge(prometheus.GaugeOpts{Name: "loadgend_worker_registered",
			Help: "1 while the worker is registered with its coordinator."}),
		heartbeats: prometheus.NewCounter(prometheus.CounterOpts{Name: "loadgend_worker_heartbeats_total",
			Help: "Heartbeats the coordinator took."}),
		assignments: prometheus.NewCounter(prometheus.CounterOpts{Name: "loadgend_worker_assignments_total",
			Help: "Run assignments taken."}),
		clockOffset: prometheus.NewGauge(prometheus.GaugeOpts{Name: "loadgend_worker_clock_offset_seconds",
			Help: "The worker's clock minus the coordinator's, as last measured."}),
		clockUncertainty: prometheus.NewGauge(prometheus.GaugeOpts{Name: "loadgend_worker_clock_uncertainty_seconds",
			Help: "The last clock offset's uncertainty (half the least round trip)."}),
	}
	for _, c := range []prometheus.Collector{m.connected, m.heartbeats, m.assignments, m.clockOffset, m.clockUncertainty} {
		if err := reg.Register(c); err != nil {
			return m, fmt.Errorf("metrics: registering: %w", err)
		}
	}
	return m, nil
}
