// Package serverstats reads a server's statistics extension (Triton's
// GET /v2/models/{m}[/versions/{v}]/stats, gRPC ModelStatistics) before and
// after a run, and while it lasts, for result.json's server.statistics and
// the live server-queue figure. A read never fails, slows or invalidates
// the run: it goes on a connection of its own, is bounded in time
// (Timeout) and size (MaxBytes), and what goes wrong is a note in the
// result.
package serverstats

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"time"

	"google.golang.org/grpc"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/grpcclient"
	"github.com/netloadgen/netloadgen/kserve/httpclient"
	"github.com/netloadgen/netloadgen/pkg/serverview"
	"github.com/netloadgen/netloadgen/pkg/target"
	"github.com/netloadgen/netloadgen/triton"
)

const (
	// Timeout bounds one read, connecting included: Triton answers in
	// well under a millisecond; a server that takes seconds is not
	// waited for.
	Timeout = 2 * time.Second
	// MaxBytes bounds one answer: a model's statistics with a few hundred
	// batch sizes are tens of KB.
	MaxBytes = 4 << 20
	// maxModels and maxBatchSizes bound what an answer may hold once
	// decoded, so that a hostile answer within MaxBytes cannot make the
	// delta's arithmetic large.
	maxModels     = 256
	maxBatchSizes = 4096
)

// Source is where statistics come from: kserve/httpclient's and
// kserve/grpcclient's Clients are ones.
type Source interface {
	ModelStatistics(ctx context.Context, model, version string) (triton.StatisticsResponse, error)
}

// Reader reads one model's statistics, each read within its timeout.
type Reader struct {
	src            Source
	model, version string
	timeout        time.Duration
	close          func() error
}

// New is a Reader of model (version "": every version the server reports)
// from src; timeout ≤ 0 is Timeout.
func New(src Source, model, version string, timeout time.Duration) *Reader {
	if timeout <= 0 {
		timeout = Timeout
	}
	return &Reader{src: src, model: model, version: version, timeout: timeout, close: func() error { return nil }}
}

// Open is a Reader on a client of its own to t, with the run's headers and
// TLS configuration (nil: plain text, or the system's roots), one
// connection, its answers bounded by MaxBytes: the run's connections and
// event loop never carry a read.
func Open(t target.Target, model, version string, headers []kserve.Header, tlsCfg *tls.Config) (*Reader, error) {
	switch t.Scheme {
	case "http", "https":
		c, err := httpclient.New(t.URL, httpclient.MaxConns(1), httpclient.Headers(headers), httpclient.TLS(tlsCfg),
			httpclient.DialTimeout(Timeout), httpclient.MaxResponseBytes(MaxBytes), httpclient.MaxResponseBytesTotal(2*MaxBytes))
		if err != nil {
			return nil, fmt.Errorf("statistics client: %w", err)
		}
		r := New(c, model, version, Timeout)
		r.close = c.Close
		return r, nil
	case "grpc", "grpcs":
		opts := []grpcclient.Option{grpcclient.WithConns(1), grpcclient.WithHeaders(headers),
			grpcclient.WithDialOptions(grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxBytes)))}
		if tlsCfg != nil {
			opts = append(opts, grpcclient.WithTLS(tlsCfg))
		}
		c, err := grpcclient.New(t.Host, opts...)
		if err != nil {
			return nil, fmt.Errorf("statistics client: %w", err)
		}
		r := New(c, model, version, Timeout)
		r.close = c.Close
		return r, nil
	}
	return nil, fmt.Errorf("statistics client: unknown scheme %q", t.Scheme)
}

// Close closes the reader's own client.
func (r *Reader) Close() error { return r.close() }

// Read reads the statistics once, within the reader's timeout.
func (r *Reader) Read(ctx context.Context) ([]serverview.ModelStats, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	resp, err := r.src.ModelStatistics(ctx, r.model, r.version)
	if errors.Is(err, kserve.ErrTooLarge) {
		// The client's text names the run's flag; this bound is the
		// reads' own.
		return nil, fmt.Errorf("the statistics reads take at most %d bytes: %w", MaxBytes, err)
	}
	if err != nil {
		return nil, err
	}
	return Convert(resp)
}

// ErrTooMany marks an answer with more models or batch sizes than a read
// keeps.
var ErrTooMany = errors.New("statistics answer too big")

// Convert is Triton's answer as result.json keeps it (last_inference
// dropped: a time, not a count), refused when it holds more than maxModels
// models or maxBatchSizes batch sizes in one.
func Convert(resp triton.StatisticsResponse) ([]serverview.ModelStats, error) {
	if len(resp.ModelStats) > maxModels {
		return nil, fmt.Errorf("%w: %d model versions, more than the %d read", ErrTooMany, len(resp.ModelStats), maxModels)
	}
	out := make([]serverview.ModelStats, len(resp.ModelStats))
	for i, m := range resp.ModelStats {
		if len(m.BatchStats) > maxBatchSizes {
			return nil, fmt.Errorf("%w: model %q has %d batch sizes, more than the %d read", ErrTooMany, m.Name, len(m.BatchStats), maxBatchSizes)
		}
		is := m.InferenceStats
		out[i] = serverview.ModelStats{
			Name: m.Name, Version: m.Version, InferenceCount: m.InferenceCount, ExecutionCount: m.ExecutionCount,
			InferenceStats: serverview.InferStats{
				Success: dur(is.Success), Fail: dur(is.Fail), Queue: dur(is.Queue),
				ComputeInput: dur(is.ComputeInput), ComputeInfer: dur(is.ComputeInfer), ComputeOutput: dur(is.ComputeOutput),
				CacheHit: dur(is.CacheHit), CacheMiss: dur(is.CacheMiss),
			},
		}
		for _, b := range m.BatchStats {
			out[i].BatchStats = append(out[i].BatchStats, serverview.BatchStats{BatchSize: b.BatchSize,
				ComputeInput: dur(b.ComputeInput), ComputeInfer: dur(b.ComputeInfer), ComputeOutput: dur(b.ComputeOutput)})
		}
	}
	return out, nil
}

func dur(d triton.Duration) serverview.Duration { return serverview.Duration{Count: d.Count, NS: d.NS} }

// NotOffered reports whether err says the endpoint has no statistics
// extension: HTTP 404 (the path is unknown: the model was found by the
// probe), 405 or 501, gRPC UNIMPLEMENTED or NOT_FOUND.
func NotOffered(err error) bool {
	if errors.Is(err, kserve.ErrUnimplemented) || errors.Is(err, kserve.ErrNotFound) {
		return true
	}
	var ke *kserve.Error
	return errors.As(err, &ke) && ke.HTTPStatus == http.StatusMethodNotAllowed
}
