package grpcloop

import (
	"context"
	"testing"

	"github.com/netloadgen/netloadgen/kserve/genwire"
	"github.com/netloadgen/netloadgen/pkg/genai"
)

// A token costs no allocation: a request answered with 1,024 tokens costs
// what one answered with 16 does. The server (genRawServer) allocates
// nothing per request, so the counts are the client's.
func TestGeneratorAllocationsDoNotGrowWithTokens(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates for its own bookkeeping")
	}
	per := map[int]float64{}
	for _, n := range []int{16, 1024} {
		s := startGenRaw(t, n, "")
		g := newGen(t, s.addr(), 1, genwire.Options{})
		if err := g.Connect(t.Context()); err != nil {
			t.Fatal(err)
		}
		h := &doneHandler{done: make(chan struct{}, 1)}
		req := &genai.Request{Model: "llm", Prompt: prompt("a b", n), Stream: true, ID: 10000000}
		run := func() {
			h.tokens = 0
			req.ID++
			g.Generate(context.Background(), req, h)
			<-h.done
			if h.err != nil || h.tokens != n {
				t.Fatalf("End %v after %d tokens, want %d", h.err, h.tokens, n)
			}
		}
		run()
		per[n] = testing.AllocsPerRun(50, run)
	}
	if per[1024] > per[16] {
		t.Errorf("%v allocations per 1024-token request, %v per 16-token one: want no more", per[1024], per[16])
	}
	t.Logf("allocations per request: %v", per)
}
