package grpcclient_test

// The gRPC client's own cost per inference call, without a server in the
// same process (whose allocations would be counted too):
//
//	taskset -c 1 bin/nullserver --ready-file /tmp/r.json &
//	NLG_BENCH_GRPC=127.0.0.1:PORT taskset -c 0 \
//	  go test ./kserve/grpcclient -run '^$' -bench GRPCClient -benchmem
//
// The benchmarks skip unless their target is given.

import (
	"os"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/grpcclient"
)

func benchGRPCClient(b *testing.B, call func(*grpcclient.Client, *grpcclient.Prepared) error, opts ...grpcclient.Option) {
	addr := os.Getenv("NLG_BENCH_GRPC")
	if addr == "" {
		b.Skip("NLG_BENCH_GRPC (host:port of bench/nullserver) not set")
	}
	c, err := grpcclient.New(addr, append([]grpcclient.Option{grpcclient.WithConns(1), grpcclient.WithEagerConnect(10 * time.Second)}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	p, err := c.PrepareInfer(&kserve.InferRequest{Model: "null", ID: "bench", Inputs: []kserve.Tensor{{
		Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{1, 16}, Data: make([]byte, 64)}}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := call(c, p); err != nil {
			b.Fatal(err)
		}
	}
}

// One FP32[1,16] round trip at a time to bench/nullserver.
func BenchmarkGRPCClientInferPrepared(b *testing.B) {
	benchGRPCClient(b, func(c *grpcclient.Client, p *grpcclient.Prepared) error {
		_, err := c.InferPrepared(b.Context(), p)
		return err
	})
}

func BenchmarkGRPCClientInferPreparedDiscard(b *testing.B) {
	benchGRPCClient(b, func(c *grpcclient.Client, p *grpcclient.Prepared) error {
		return c.InferPreparedDiscard(b.Context(), p)
	})
}

// The same with a bearer token as metadata (WithHeaders): the interceptor's
// cost per call.
func BenchmarkGRPCClientInferPreparedDiscardHeaders(b *testing.B) {
	benchGRPCClient(b, func(c *grpcclient.Client, p *grpcclient.Prepared) error {
		return c.InferPreparedDiscard(b.Context(), p)
	}, grpcclient.WithHeaders([]kserve.Header{{Name: "Authorization", Value: "Bearer 0123456789abcdef0123456789abcdef"}}))
}
