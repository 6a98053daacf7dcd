// Package forward is sutproxy's forwarding front: a server.Backend that
// spreads requests over one or more upstream KServe v2 servers and counts
// each upstream's successes, errors and latency.
package forward

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/triton"
)

// Upstream is one KServe v2 server. The kserve HTTP and gRPC clients satisfy
// it (through the adapters in client.go).
type Upstream interface {
	ServerLive(ctx context.Context) (bool, error)
	ServerReady(ctx context.Context) (bool, error)
	ServerMetadata(ctx context.Context) (kserve.ServerMetadata, error)
	ModelMetadata(ctx context.Context, model, version string) (kserve.ModelMetadata, error)
	ModelReady(ctx context.Context, model, version string) (bool, error)
	Infer(ctx context.Context, req *kserve.InferRequest) (*kserve.InferResponse, error)
	ModelConfig(ctx context.Context, model, version string) (triton.ModelConfig, error)
	ModelStatistics(ctx context.Context, model, version string) (triton.StatisticsResponse, error)
}

// Target pairs an upstream with the name it is counted under (its URL).
type Target struct {
	Name     string
	Upstream Upstream
}

type upstream struct {
	Target
	inflight atomic.Int64
	ok       prometheus.Counter
	failed   prometheus.Counter
	latency  prometheus.Observer
}

// Backend forwards every call to its upstreams.
type Backend struct {
	ups  []*upstream
	next atomic.Uint64
}

// New builds a Backend over targets, registering its per-upstream metrics
// with reg (nil: not registered).
func New(targets []Target, reg prometheus.Registerer) (*Backend, error) {
	if len(targets) == 0 {
		return nil, errors.New("forward: no upstream")
	}
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sutproxy_upstream_requests_total",
		Help: "Inference requests forwarded to an upstream, by outcome (ok, error).",
	}, []string{"upstream", "outcome"})
	latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:                           "sutproxy_upstream_request_duration_seconds",
		Help:                           "Time for an upstream to answer a forwarded inference request.",
		Buckets:                        prometheus.ExponentialBuckets(0.0001, 2, 18),
		NativeHistogramBucketFactor:    1.1,
		NativeHistogramMaxBucketNumber: 160,
	}, []string{"upstream"})
	if reg != nil {
		for _, c := range []prometheus.Collector{requests, latency} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("forward: register metrics: %w", err)
			}
		}
	}
	b := &Backend{}
	for _, t := range targets {
		b.ups = append(b.ups, &upstream{
			Target:  t,
			ok:      requests.WithLabelValues(t.Name, "ok"),
			failed:  requests.WithLabelValues(t.Name, "error"),
			latency: latency.WithLabelValues(t.Name),
		})
	}
	return b, nil
}

// pick returns the upstream with the fewest requests in flight, starting the
// scan at a rotating index so equally loaded upstreams share the work. Least
// outstanding beats plain round robin when upstreams differ in speed.
func (b *Backend) pick() *upstream {
	n := len(b.ups)
	start := int(b.next.Add(1) % uint64(n))
	best := b.ups[start]
	bestN := best.inflight.Load()
	for i := 1; i < n && bestN > 0; i++ {
		u := b.ups[(start+i)%n]
		if v := u.inflight.Load(); v < bestN {
			best, bestN = u, v
		}
	}
	return best
}

// Infer forwards req to the least busy upstream. Neither hop's encoding
// parameters cross to the other (encoding.go).
func (b *Backend) Infer(ctx context.Context, req *kserve.InferRequest) (*kserve.InferResponse, error) {
	u := b.pick()
	u.inflight.Add(1)
	start := time.Now()
	resp, err := u.Upstream.Infer(ctx, upstreamRequest(req))
	u.latency.Observe(time.Since(start).Seconds())
	u.inflight.Add(-1)
	if err != nil {
		u.failed.Inc()
		return nil, upstreamError(u, err)
	}
	u.ok.Inc()
	return frontResponse(resp), nil
}

// upstreamError keeps the upstream's own status (a 404 stays a 404) and turns
// anything else into UNAVAILABLE naming the upstream.
func upstreamError(u *upstream, err error) error {
	var ke *kserve.Error
	if errors.As(err, &ke) && !errors.Is(err, kserve.ErrTransport) {
		return kserve.Errorf(ke.Code, "%s", ke.Message)
	}
	return kserve.Errorf(codes.Unavailable, "upstream %s: %v", u.Name, err)
}

// ServerLive is true when any upstream is live.
func (b *Backend) ServerLive(ctx context.Context) bool {
	for _, u := range b.ups {
		if ok, err := u.Upstream.ServerLive(ctx); err == nil && ok {
			return true
		}
	}
	return false
}

// ServerReady is true when every upstream is ready: a front with a dead
// upstream would fail a share of the requests it takes.
func (b *Backend) ServerReady(ctx context.Context) bool {
	for _, u := range b.ups {
		if ok, err := u.Upstream.ServerReady(ctx); err != nil || !ok {
			return false
		}
	}
	return true
}

// ServerMetadata names the front and lists the extensions it serves itself.
func (b *Backend) ServerMetadata(ctx context.Context) kserve.ServerMetadata {
	return kserve.ServerMetadata{
		Name:       "sutproxy-forward",
		Version:    "1",
		Extensions: []string{kserve.ExtBinaryTensorData, kserve.ExtStatistics, kserve.ExtModelConfiguration},
	}
}

// first asks each upstream in turn and returns the first answer that is not
// "not found"; models may live on only some upstreams.
func first[T any](ctx context.Context, b *Backend, call func(Upstream) (T, error)) (T, error) {
	var zero T
	var lastErr error
	for _, u := range b.ups {
		v, err := call(u.Upstream)
		if err == nil {
			return v, nil
		}
		lastErr = upstreamError(u, err)
		if !errors.Is(err, kserve.ErrNotFound) {
			return zero, lastErr
		}
	}
	return zero, lastErr
}

// ModelReady asks the upstreams in turn.
func (b *Backend) ModelReady(ctx context.Context, model, version string) (bool, error) {
	return first(ctx, b, func(u Upstream) (bool, error) { return u.ModelReady(ctx, model, version) })
}

// ModelMetadata asks the upstreams in turn.
func (b *Backend) ModelMetadata(ctx context.Context, model, version string) (kserve.ModelMetadata, error) {
	return first(ctx, b, func(u Upstream) (kserve.ModelMetadata, error) { return u.ModelMetadata(ctx, model, version) })
}

// ModelConfig asks the upstreams in turn.
func (b *Backend) ModelConfig(ctx context.Context, model, version string) (triton.ModelConfig, error) {
	return first(ctx, b, func(u Upstream) (triton.ModelConfig, error) { return u.ModelConfig(ctx, model, version) })
}

// ModelStatistics sums the statistics of every upstream that knows the model,
// so the front reports what the whole pool did.
func (b *Backend) ModelStatistics(ctx context.Context, model, version string) (triton.StatisticsResponse, error) {
	var parts []triton.StatisticsResponse
	var lastErr error
	for _, u := range b.ups {
		s, err := u.Upstream.ModelStatistics(ctx, model, version)
		if err != nil {
			lastErr = upstreamError(u, err)
			if errors.Is(err, kserve.ErrNotFound) {
				continue
			}
			return triton.StatisticsResponse{}, lastErr
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return triton.StatisticsResponse{}, lastErr
	}
	return triton.Sum(parts...), nil
}
