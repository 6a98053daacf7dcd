package sut

// The per-request cost of the issue path (IssueQuery, the transport's call,
// the completion callback), for profiling:
//
//	taskset -c 1 bin/nullserver --ready-file /tmp/r.json &
//	NLG_BENCH_HTTP=127.0.0.1:PORT NLG_BENCH_GRPC=127.0.0.1:PORT taskset -c 0 \
//	  go test ./pkg/sut -run '^$' -bench IssueQuery -benchmem -cpuprofile cpu.out
//
// The null variant needs no server: it is the cost netloadgen adds around
// any transport. The network variants skip unless their target is given.

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/grpcclient"
	"github.com/netloadgen/netloadgen/kserve/httpclient"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/qsl"
)

// benchWindow is the number of queries outstanding: like the peers' 32
// connections, so the server's round trip overlaps.
const benchWindow = 32

type nullClient struct{}

func (nullClient) Prepare(*kserve.InferRequest, *kserve.Expect) (Call, error) {
	return func(context.Context) (time.Time, error) { return time.Time{}, nil }, nil
}

func benchLibrary(b *testing.B) *qsl.Synthetic {
	b.Helper()
	lib, err := qsl.NewSynthetic(kserve.ModelMetadata{Name: "null", Inputs: []kserve.TensorMetadata{
		{Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{-1, 16}}}}, qsl.SyntheticOptions{Batched: true, Total: 64, Performance: 64, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	all := make([]int, 64)
	for i := range all {
		all[i] = i
	}
	if err := lib.Load(b.Context(), all); err != nil {
		b.Fatal(err)
	}
	return lib
}

// benchOptions are bench/nullserver's model, its answers checked as a run
// checks them.
func benchOptions() Options {
	return Options{Model: "null", MaxBatch: 64, Expect: kserve.NewExpect("null",
		[]kserve.TensorMetadata{{Name: "OUTPUT0", Datatype: kserve.FP32, Shape: []int64{-1, 16}}}, true)}
}

func benchIssue(b *testing.B, client Client) {
	lib := benchLibrary(b)
	n, err := New(client, lib, benchOptions())
	if err != nil {
		b.Fatal(err)
	}
	n.single = make([]Call, lib.TotalSampleCount()) // what Prepare does for a trace
	for i := range 64 {
		if _, err := n.prepareSingle(i); err != nil {
			b.Fatal(err)
		}
	}
	slots := make(chan struct{}, benchWindow)
	failed := make(chan error, 1)
	done := func(c loadgen.Completion) {
		if c.Err != nil {
			select {
			case failed <- c.Err:
			default:
			}
		}
		<-slots
	}
	samples := make([][]int, 64)
	for i := range samples {
		samples[i] = []int{i}
	}
	ctx := b.Context()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		slots <- struct{}{}
		n.IssueQuery(ctx, loadgen.Query{ID: i, Samples: samples[i%64]}, done)
	}
	for range benchWindow {
		slots <- struct{}{}
	}
	b.StopTimer()
	select {
	case err := <-failed:
		b.Fatal(err)
	default:
	}
}

func BenchmarkIssueQueryNull(b *testing.B) { benchIssue(b, nullClient{}) }

func BenchmarkIssueQueryHTTP(b *testing.B) {
	addr := os.Getenv("NLG_BENCH_HTTP")
	if addr == "" {
		b.Skip("NLG_BENCH_HTTP (host:port of bench/nullserver) not set")
	}
	c, err := httpclient.New("http://"+addr, httpclient.MaxConns(benchWindow), httpclient.Binary(true))
	if err != nil {
		b.Fatal(err)
	}
	benchIssue(b, HTTP(c))
}

func BenchmarkIssueQueryGRPC(b *testing.B) {
	addr := os.Getenv("NLG_BENCH_GRPC")
	if addr == "" {
		b.Skip("NLG_BENCH_GRPC (host:port of bench/nullserver) not set")
	}
	c, err := grpcclient.New(addr, grpcclient.WithConns(2))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	benchIssue(b, GRPC(c))
}
