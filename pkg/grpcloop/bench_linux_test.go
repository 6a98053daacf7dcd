//go:build linux

package grpcloop

// Closed-loop throughput and client cost per call with 32 calls
// outstanding, by connection count, against a real server: NLG_BENCH_GRPC
// is the gRPC host:port of bench/nullserver (run it on another core). The
// rate is the server's as much as ours; -benchmem shows the client's
// allocations (none).

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
)

func BenchmarkClosedLoop32(b *testing.B) {
	addr := os.Getenv("NLG_BENCH_GRPC")
	if addr == "" {
		b.Skip("NLG_BENCH_GRPC (gRPC host:port of bench/nullserver) not set")
	}
	msg, err := kserve.MarshalGRPCInfer(&kserve.InferRequest{Model: "null", Inputs: []kserve.Tensor{{
		Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{1, 16}, Data: make([]byte, 64)}}})
	if err != nil {
		b.Fatal(err)
	}
	req, err := NewRequest(ModelInferPath, addr, 0, msg)
	if err != nil {
		b.Fatal(err)
	}
	// Answers checked as a run checks them.
	want := kserve.NewExpect("null", []kserve.TensorMetadata{{Name: "OUTPUT0", Datatype: kserve.FP32, Shape: []int64{-1, 16}}}, true)
	check := func(_ uint64, msg []byte) error { return want.CheckProto(msg, 1) }
	for _, conns := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("conns=%d", conns), func(b *testing.B) {
			var failed error
			left := b.N
			var l *Loop
			l, err = New(Config{Addr: addr, Conns: conns, Check: check, OnDone: func(_ uint64, _ time.Time, err error) {
				if err != nil && failed == nil {
					failed = err
				}
				if left > 0 {
					left--
					l.Send(req, 0)
				}
			}})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			ctx := context.Background()
			if err := l.Preconnect(ctx, conns); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for range min(32, left) {
				left--
				l.Send(req, 0)
			}
			for l.Outstanding() > 0 {
				l.PollUntil(ctx, time.Now().Add(time.Second))
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
			if failed != nil {
				b.Fatal(failed)
			}
		})
	}
}
