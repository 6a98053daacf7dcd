package main

import (
	"fmt"
	"time"

	"github.com/netloadgen/netloadgen/api"
)

// serverMetricsFlags are the flags of the server's Prometheus metrics
// scraped during a run (docs/server-metrics.md); run, find-peak and sweep
// share them, as every run flag.
type serverMetricsFlags struct {
	urls     urlFlags
	interval time.Duration
}

// urlFlags are a repeatable flag's URLs.
type urlFlags []string

func (u *urlFlags) String() string     { return fmt.Sprintf("%d URLs", len(*u)) } // never a URL: it may hold a credential
func (u *urlFlags) Set(v string) error { *u = append(*u, v); return nil }

func (f *specFlags) addServerMetricsFlags(m *serverMetricsFlags) {
	spec := &f.spec
	f.fs.Var(&m.urls, "server-metrics", "a Prometheus `URL` of the server's metrics, scraped during the run (repeatable; default: the target's own /metrics, http(s) targets, if it answers at the probe): every sample in server_metrics.jsonl, a summary per series in result.json's server_metrics. A URL on the target's host and port gets the run's TLS settings and headers")
	f.flagOf["server_metrics"] = "server-metrics"
	f.duration(&m.interval, "server-metrics-interval", "server_metrics_interval_ms", "time between scrapes of the server's metrics (default 1s, at least 100ms); a scrape slower than it is abandoned and counted")
	f.integer(&spec.ServerMetricsMaxSeries, "server-metrics-max-series", "server_metrics_max_series", 0, "series of the server's metrics kept over all endpoints (0 = the default, 5000): new ones past it are dropped and counted, with a warning")
	f.fs.Int64Var(&spec.ServerMetricsMaxBytes, "server-metrics-max-bytes", 0, "bound on one scrape's body in bytes (0 = the default, 16 MiB): a body over it is dropped and counted")
	f.flagOf["server_metrics_max_bytes"] = "server-metrics-max-bytes"
	f.fs.BoolVar(&spec.NoServerMetrics, "no-server-metrics", false, "scrape no metrics of the server, not even the target's own /metrics")
	f.flagOf["no_server_metrics"] = "no-server-metrics"
}

// fill writes the flags the spec takes in its own units.
func (m *serverMetricsFlags) fill(spec *api.RunSpec) error {
	spec.ServerMetrics = append([]string(nil), m.urls...)
	if m.interval < 0 || m.interval%time.Millisecond != 0 {
		return fmt.Errorf("--server-metrics-interval: %v is not a whole, positive number of milliseconds", m.interval)
	}
	spec.ServerMetricsIntervalMs = uint64(m.interval / time.Millisecond)
	return nil
}
