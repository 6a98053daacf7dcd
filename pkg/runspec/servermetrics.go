package runspec

import (
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/runner"
)

// serverMetrics are the spec's server metrics settings as the runner
// takes them (checked by api.RunSpec.CheckFields).
func serverMetrics(s api.RunSpec) runner.ServerMetrics {
	return runner.ServerMetrics{
		URLs:      append([]string(nil), s.ServerMetrics...),
		Interval:  time.Duration(s.ServerMetricsIntervalMs) * time.Millisecond,
		MaxSeries: s.ServerMetricsMaxSeries,
		MaxBytes:  s.ServerMetricsMaxBytes,
		Off:       s.NoServerMetrics,
	}
}
