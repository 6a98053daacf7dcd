//go:build linux

package sut

// The loop SUT's per-request cost, the counterpart of BenchmarkIssueQueryHTTP
// (same window, same server, same command with -bench IssueQueryLoop): the
// issuer writes, polls and records on one goroutine. -benchmem shows the
// steady state allocates nothing.

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/kserve/httpclient"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
)

func BenchmarkIssueQueryLoop(b *testing.B) {
	addr := os.Getenv("NLG_BENCH_HTTP")
	if addr == "" {
		b.Skip("NLG_BENCH_HTTP (host:port of bench/nullserver) not set")
	}
	enc, err := httpclient.New("http://"+addr, httpclient.Binary(true))
	if err != nil {
		b.Fatal(err)
	}
	l, err := NewLoop(enc, benchLibrary(b), benchOptions(), LoopOptions{Addr: addr, MaxConns: benchWindow})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	if err := l.Preconnect(ctx, benchWindow); err != nil {
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
