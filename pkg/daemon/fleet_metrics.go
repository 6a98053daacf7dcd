package daemon

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/netloadgen/netloadgen/api"
)

// registerFleetMetrics exports loadgend_workers{state}, set at each sweep.
func registerFleetMetrics(reg prometheus.Registerer, f *Fleet) error {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "loadgend_workers",
		Help: "Registered workers by state (idle, busy, lost)."}, []string{"state"})
	if err := reg.Register(g); err != nil {
		return fmt.Errorf("metrics: registering loadgend_workers: %w", err)
	}
	for _, st := range api.WorkerStates() {
		g.WithLabelValues(string(st)).Set(0)
	}
	f.stats = func(idle, busy, lost int) {
		g.WithLabelValues(string(api.WorkerIdle)).Set(float64(idle))
		g.WithLabelValues(string(api.WorkerBusy)).Set(float64(busy))
		g.WithLabelValues(string(api.WorkerLost)).Set(float64(lost))
	}
	return nil
}
