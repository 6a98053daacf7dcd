package sutproxy_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/grpcclient"
	"github.com/netloadgen/netloadgen/kserve/httpclient"
	"github.com/netloadgen/netloadgen/pkg/sim"
)

// BenchmarkCapacity4x2ms saturates a model of 4 instances × constant 2 ms
// through the real network path (HTTP binary and gRPC) with 32 callers in a
// closed loop. Its capacity is 4 / 2 ms = 2000 inferences/s: the reported
// rate should come out just under that and never above.
//
//	go test -run '^$' -bench Capacity -benchtime 6000x ./pkg/sutproxy
func BenchmarkCapacity4x2ms(b *testing.B) {
	spec, err := sim.ParseModelFlag("name=cap,fn=echo,dtype=FP32,dims=16,max_batch=8,latency=constant:2ms,instances=4")
	if err != nil {
		b.Fatal(err)
	}
	for _, transport := range []string{"http", "grpc"} {
		b.Run(transport, func(b *testing.B) {
			p := startSim(b, spec)
			var infer func() error
			req := &kserve.InferRequest{Model: "cap", Inputs: []kserve.Tensor{{Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{1, 16}, Data: make([]byte, 64)}}}
			switch transport {
			case "http":
				c, err := httpclient.New("http://"+p.HTTPAddr(), httpclient.MaxConns(64))
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				prep, err := c.PrepareInfer(req)
				if err != nil {
					b.Fatal(err)
				}
				infer = func() error { return c.InferPreparedCheck(b.Context(), prep) }
			case "grpc":
				c, err := grpcclient.New(p.GRPCAddr())
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				prep, err := c.PrepareInfer(req)
				if err != nil {
					b.Fatal(err)
				}
				infer = func() error { return c.InferPreparedDiscard(b.Context(), prep) }
			}
			var left atomic.Int64
			left.Store(int64(b.N))
			var wg sync.WaitGroup
			var failed atomic.Int64
			b.ResetTimer()
			start := time.Now()
			for range 32 {
				wg.Go(func() {
					for left.Add(-1) >= 0 {
						if infer() != nil {
							failed.Add(1)
						}
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "inferences/s")
			if failed.Load() > 0 {
				b.Fatalf("%d requests failed", failed.Load())
			}
		})
	}
}
