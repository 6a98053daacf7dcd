//go:build linux

package sut

// The gRPC loop SUT's per-request cost, the counterpart of
// BenchmarkIssueQueryLoop over gRPC (same window; NLG_BENCH_GRPC is the
// gRPC host:port of bench/nullserver). -benchmem shows the steady state
// allocates nothing.

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
)

func BenchmarkIssueQueryGRPCLoop(b *testing.B) {
	addr := os.Getenv("NLG_BENCH_GRPC")
	if addr == "" {
		b.Skip("NLG_BENCH_GRPC (gRPC host:port of bench/nullserver) not set")
	}
	l, err := NewGRPCLoop(benchLibrary(b), benchOptions(), GRPCLoopOptions{Addr: addr, Conns: 2})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	if err := l.Preconnect(ctx, 2); err != nil {
		b.Fatal(err)
	}
	samples := make([][]int, 64)
	l.sizeSingles(64)
	for i := range samples {
		samples[i] = []int{i}
		if _, err := l.request(samples[i]); err != nil { // what Prepare does for a trace
			b.Fatal(err)
		}
	}
	out := 0
	var failed error
	done := func(c loadgen.Completion) {
		if c.Err != nil && failed == nil {
			failed = c.Err
		}
		out--
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		for out >= benchWindow {
			l.PollUntil(ctx, time.Now().Add(time.Second))
		}
		out++
		l.IssueQuery(ctx, loadgen.Query{ID: i, Samples: samples[i%64]}, done)
	}
	for out > 0 {
		l.PollUntil(ctx, time.Now().Add(time.Second))
	}
	b.StopTimer()
	if failed != nil {
		b.Fatal(failed)
	}
}
