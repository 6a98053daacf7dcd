package api

import (
	"net/url"
	"strings"
)

// Bounds of the server metrics' settings.
const (
	MaxServerMetricsURLs       = 16
	MinServerMetricsIntervalMs = 100
	MaxServerMetricsIntervalMs = 3_600_000
	MaxServerMetricsSeries     = 1_000_000
	MaxServerMetricsBytes      = 1 << 30
	maxServerMetricsURLLen     = 2048
)

// checkServerMetrics bounds the server metrics' settings, naming the
// field.
func (m RunSpec) checkServerMetrics() error {
	if m.NoServerMetrics && len(m.ServerMetrics) > 0 {
		return fieldErr("no_server_metrics", "scrapes nothing, yet server_metrics names endpoints: give one of them")
	}
	if len(m.ServerMetrics) > MaxServerMetricsURLs {
		return fieldErr("server_metrics", "%d URLs: at most %d", len(m.ServerMetrics), MaxServerMetricsURLs)
	}
	for _, raw := range m.ServerMetrics {
		if err := checkMetricsURL(raw); err != nil {
			return err
		}
	}
	if v := m.ServerMetricsIntervalMs; v != 0 && (v < MinServerMetricsIntervalMs || v > MaxServerMetricsIntervalMs) {
		return fieldErr("server_metrics_interval_ms", "%d: want 0 (the default, 1000) or %d to %d ms", v, MinServerMetricsIntervalMs, MaxServerMetricsIntervalMs)
	}
	if v := m.ServerMetricsMaxSeries; v < 0 || v > MaxServerMetricsSeries {
		return fieldErr("server_metrics_max_series", "%d: want 0 (the default, 5000) to %d", v, MaxServerMetricsSeries)
	}
	if v := m.ServerMetricsMaxBytes; v < 0 || v > MaxServerMetricsBytes {
		return fieldErr("server_metrics_max_bytes", "%d: want 0 (the default, 16 MiB) to %d (1 GiB)", v, MaxServerMetricsBytes)
	}
	return nil
}

// checkMetricsURL: http(s), a host, no credentials, query or fragment.
// The URL is never quoted: it may hold what it must not.
func checkMetricsURL(raw string) error {
	if len(raw) > maxServerMetricsURLLen {
		return fieldErr("server_metrics", "a URL longer than %d bytes", maxServerMetricsURLLen)
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.ContainsAny(raw, " \t\r\n"):
		return fieldErr("server_metrics", "a URL is not http(s)://host[:port]/path")
	case u.User != nil:
		return fieldErr("server_metrics", "a URL has credentials (user:password@): the spec is stored, so give them as a header (--header), which a URL on the target's host gets")
	case u.RawQuery != "" || u.Fragment != "":
		return fieldErr("server_metrics", "a URL has a query or fragment, which may carry a secret: give the path only, and credentials as a header")
	}
	return nil
}
