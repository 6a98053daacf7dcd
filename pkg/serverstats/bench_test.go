package serverstats

import (
	"testing"

	"github.com/netloadgen/netloadgen/pkg/sutproxy/sutproxytest"
)

// BenchmarkRead is one read of a model's statistics from sutproxy on the
// reader's own connection: what the read before a run adds to its start,
// and what each live read costs once a second.
func BenchmarkRead(b *testing.B) {
	p := sutproxytest.Start(b, "name=m,fn=echo,dims=4,max_batch=8,latency=constant:1ms,instances=1")
	for _, raw := range []string{"http://" + p.HTTPAddr(), "grpc://" + p.GRPCAddr()} {
		b.Run(raw[:4], func(b *testing.B) {
			r := open(b, raw)
			for b.Loop() {
				if _, err := r.Read(b.Context()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
