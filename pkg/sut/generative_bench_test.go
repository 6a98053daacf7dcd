package sut

import (
	"context"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
)

// replayGenClient answers every request at once with n one-token
// responses a microsecond apart, then its end.
type replayGenClient struct {
	n  int
	at time.Time
}

func (r *replayGenClient) Generate(_ context.Context, _ *genai.Request, h genai.Handler) {
	for i := range r.n {
		h.Tokens(r.at.Add(time.Duration(i)*time.Microsecond), 1)
	}
	h.End(r.at.Add(time.Duration(r.n)*time.Microsecond), genai.Usage{OutputTokens: r.n}, nil)
}

func (r *replayGenClient) Close() error { return nil }

// BenchmarkGenerativeSample: one op is one 256-token sample through the
// SUT: its request built, every token recorded by its handler (the first
// token's time, each gap), its completion handed to done. Once the pooled
// handler's gap slice has grown to an answer's length, nothing is
// allocated per token (allocs/token), and the request's own allocations
// are none either.
func BenchmarkGenerativeSample(b *testing.B) {
	const n = 256
	g := NewGenerative(&replayGenClient{n: n, at: time.Now()}, promptList{{Text: "p", InputTokens: 128, MaxTokens: n}}, GenerativeOptions{Model: "llm", Stream: true})
	var got loadgen.Completion
	done := func(c loadgen.Completion) { got = c }
	q := loadgen.Query{Samples: []int{0}}
	g.IssueQuery(context.Background(), q, done) // warm the pool
	b.ReportAllocs()
	for b.Loop() {
		g.IssueQuery(context.Background(), q, done)
	}
	if got.Err != nil || got.Tokens != n || len(got.Gaps) != n-1 || got.FirstToken.IsZero() {
		b.Fatalf("completion %+v", got)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/token")
}

// TestGenerativeTokensAllocateNothing: once its pooled handler has served
// an answer as long, a sample of 1,024 tokens costs the SUT no more
// allocations than one of 16: recording a token (its time, its gap)
// allocates nothing.
func TestGenerativeTokensAllocateNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops items at random")
	}
	per := map[int]float64{}
	for _, n := range []int{16, 1024} {
		g := NewGenerative(&replayGenClient{n: n, at: time.Now()}, promptList{{Text: "p", InputTokens: 8, MaxTokens: n}}, GenerativeOptions{Model: "llm", Stream: true})
		var got loadgen.Completion
		q := loadgen.Query{Samples: []int{0}}
		run := func() { g.IssueQuery(context.Background(), q, func(c loadgen.Completion) { got = c }) }
		run() // the handler's gap slice grows to the answer's length once
		per[n] = testing.AllocsPerRun(50, run)
		if got.Err != nil || got.Tokens != n || len(got.Gaps) != n-1 {
			t.Fatalf("%d-token sample: completion %+v", n, got)
		}
	}
	if per[1024] > per[16] {
		t.Errorf("%v allocations per 1024-token sample, %v per 16-token one: want no more", per[1024], per[16])
	}
}
