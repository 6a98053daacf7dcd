package sutproxy

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
)

// metrics counts what the front ends answered. Labels are the protocol, the
// route (a fixed set) and the status: never the model name or request id,
// which a client controls and could blow up the series count.
type metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sutproxy_requests_total",
			Help: "Requests answered, by protocol (http, grpc), route and status code.",
		}, []string{"protocol", "route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:                           "sutproxy_request_duration_seconds",
			Help:                           "Time from request received to response ready, by protocol and route.",
			Buckets:                        prometheus.ExponentialBuckets(0.00005, 2, 18),
			NativeHistogramBucketFactor:    1.1,
			NativeHistogramMaxBucketNumber: 160,
		}, []string{"protocol", "route"}),
	}
	reg.MustRegister(m.requests, m.duration)
	return m
}

func (m *metrics) observeHTTP(route, _ string, status int, d time.Duration) {
	m.requests.WithLabelValues("http", route, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues("http", route).Observe(d.Seconds())
}

func (m *metrics) observeGRPC(method, _ string, code codes.Code, d time.Duration) {
	m.requests.WithLabelValues("grpc", method, code.String()).Inc()
	m.duration.WithLabelValues("grpc", method).Observe(d.Seconds())
}
