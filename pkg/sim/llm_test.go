package sim

import (
	"context"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/server"
)

// testLaw is small enough to compute by hand.
var testLaw = LLMSpec{MaxSeqs: 2, StepBase: Duration(10 * time.Millisecond), StepPerSeq: Duration(time.Millisecond), PrefillPerToken: Duration(100 * time.Microsecond)}

// TestLLMTruthByHand checks the discrete-event truth against the law
// worked out by hand: a step of b sequences prefilling p tokens takes
// 10ms + b×1ms + p×0.1ms; at most two sequences; FIFO beyond.
func TestLLMTruthByHand(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	reqs := []LLMRequest{
		{At: 0, Input: 10, Output: 3},      // step 0-12 alone: 10+1+1
		{At: ms(5), Input: 20, Output: 2},  // joins at 12: 10+2+2 = 14 → 26
		{At: ms(6), Input: 0, Output: 1},   // batch full until 38: 10+1 → 49
		{At: ms(100), Input: 0, Output: 2}, // idle: starts at once, 11 per step
	}
	got, err := LLMTruth(testLaw, reqs)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]time.Duration{{ms(12), ms(26), ms(38)}, {ms(26), ms(38)}, {ms(49)}, {ms(111), ms(122)}}
	for i := range want {
		if !reflect.DeepEqual(got[i].Tokens, want[i]) {
			t.Errorf("request %d: tokens at %v, want %v", i, got[i].Tokens, want[i])
		}
	}
	if ttft := got[2].TTFT(reqs[2]); ttft != ms(43) {
		t.Errorf("TTFT of the queued request %v, want 43ms", ttft)
	}
	if tpot := got[0].TPOT(); tpot != ms(13) {
		t.Errorf("TPOT %v, want (38-12)/2 = 13ms", tpot)
	}
}

func TestLLMTruthRefusesBadInput(t *testing.T) {
	if _, err := LLMTruth(testLaw, []LLMRequest{{Output: 0}}); err == nil || !strings.Contains(err.Error(), "output") {
		t.Errorf("output 0: %v", err)
	}
	if _, err := LLMTruth(LLMSpec{MaxSeqs: -1}, nil); err == nil || !strings.Contains(err.Error(), "llm.max_seqs") {
		t.Errorf("max_seqs -1: %v", err)
	}
}

// llmServer serves one LLM model on a fake clock.
func llmServer(t *testing.T, l LLMSpec) (*Server, *fakeClock) {
	t.Helper()
	clk := newFakeClock()
	s, err := New([]ModelSpec{{Name: "llm", LLM: &l}}, withClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, clk
}

// words is a prompt of n pseudo-tokens.
func words(n int) string { return strings.TrimSpace(strings.Repeat("w ", n)) }

// TestLLMEngineMatchesTruth: the real engine, on a fake clock, gives every
// token of a queueing load at the instant the discrete-event truth says.
// Arrival instants are distinct nanoseconds: a tie between an arrival and
// a step's end is measure zero in real time.
func TestLLMEngineMatchesTruth(t *testing.T) {
	s, clk := llmServer(t, testLaw)
	r := rand.New(rand.NewPCG(1, 2))
	var reqs []LLMRequest
	at := time.Duration(0)
	for range 300 {
		at += time.Duration(r.ExpFloat64()*float64(15*time.Millisecond)) + 1
		reqs = append(reqs, LLMRequest{At: at, Input: r.IntN(50), Output: 1 + r.IntN(6)})
	}
	truth, err := LLMTruth(testLaw, reqs)
	if err != nil {
		t.Fatal(err)
	}
	streams := make([]*llmStream, len(reqs))
	for i, q := range reqs {
		clk.Advance(epoch.Add(q.At).Sub(clk.Now()))
		st, err := s.Generate(context.Background(), &server.GenRequest{Model: "llm", Prompt: words(q.Input), MaxTokens: q.Output, IgnoreEOS: true})
		if err != nil {
			t.Fatal(err)
		}
		streams[i] = st.(*llmStream)
	}
	clk.Advance(time.Hour)
	for i, st := range streams {
		var got []time.Duration
		for tok := range st.s.out {
			got = append(got, tok.at.Sub(epoch))
		}
		if !reflect.DeepEqual(got, truth[i].Tokens) {
			t.Fatalf("request %d (%+v): tokens at %v, truth %v", i, reqs[i], got, truth[i].Tokens)
		}
	}
	if n := clk.pending(); n != 0 {
		t.Errorf("%d timers left armed by an idle model", n)
	}
}

// TestLLMStream: Next gives the tokens' text, ids and the last token's
// reason, and the input is counted in words.
func TestLLMStream(t *testing.T) {
	s, clk := llmServer(t, LLMSpec{EOSMin: 2, EOSMax: 2})
	ctx := context.Background()
	st, err := s.Generate(ctx, &server.GenRequest{Model: "llm", Prompt: "one two  three", MaxTokens: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.InputTokens() != 3 {
		t.Errorf("input tokens %d, want 3", st.InputTokens())
	}
	clk.Advance(time.Second)
	var text []string
	var last server.GenToken
	for {
		tok, ok, err := st.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		text, last = append(text, tok.Text), tok
	}
	if got := strings.Join(text, ""); got != "the model" || !last.Last || last.Reason != "stop" || last.ID != TokenID(1) {
		t.Errorf("answer %q, last %+v: want \"the model\" ending with stop (eos=2 before max_tokens 5)", got, last)
	}
	// ignore_eos: exactly max_tokens, reason length.
	st2, _ := s.Generate(ctx, &server.GenRequest{Model: "llm", Prompt: "x", MaxTokens: 5, IgnoreEOS: true})
	clk.Advance(time.Second)
	n := 0
	for {
		tok, ok, _ := st2.Next(ctx)
		if !ok {
			break
		}
		n++
		last = tok
	}
	if n != 5 || last.Reason != "length" {
		t.Errorf("ignore_eos: %d tokens ending %q, want 5 ending length", n, last.Reason)
	}
}

// TestLLMCancelFreesItsPlace: a cancelled request leaves the batch, and the
// one queued behind it starts at the next step.
func TestLLMCancelFreesItsPlace(t *testing.T) {
	s, clk := llmServer(t, LLMSpec{MaxSeqs: 1, StepBase: Duration(10 * time.Millisecond), PrefillPerToken: Duration(time.Nanosecond)})
	ctx := context.Background()
	a, _ := s.Generate(ctx, &server.GenRequest{Model: "llm", Prompt: "", MaxTokens: 100})
	b, _ := s.Generate(ctx, &server.GenRequest{Model: "llm", Prompt: "", MaxTokens: 1})
	clk.Advance(15 * time.Millisecond) // a's first token at 10
	a.Close()
	clk.Advance(15 * time.Millisecond) // a's step ends at 20 (a dropped), b's runs 20-30
	tok, ok, err := b.Next(ctx)
	if !ok || err != nil || !tok.Last {
		t.Fatalf("b: %+v %v %v: want its only token by 30ms", tok, ok, err)
	}
	clk.Advance(time.Second)
	if n := clk.pending(); n != 0 {
		t.Errorf("%d timers armed after every request ended", n)
	}
}

func TestLLMRefusals(t *testing.T) {
	s, _ := llmServer(t, LLMSpec{MaxTokensLimit: 10})
	ctx := context.Background()
	_, err := s.Generate(ctx, &server.GenRequest{Model: "llm", MaxTokens: 11})
	if !errors.Is(err, kserve.ErrInvalidArgument) || !strings.Contains(err.Error(), "max_tokens") {
		t.Errorf("max_tokens over the limit: %v", err)
	}
	if _, err := s.Generate(ctx, &server.GenRequest{Model: "nope"}); !errors.Is(err, kserve.ErrNotFound) {
		t.Errorf("unknown model: %v", err)
	}
	if _, err := s.Infer(ctx, &kserve.InferRequest{Model: "llm"}); err == nil || !strings.Contains(err.Error(), "decoupled") {
		t.Errorf("ModelInfer on an llm: %v", err)
	}
	cfg, err := s.ModelConfig(ctx, "llm", "")
	if err != nil || cfg.ModelTransactionPolicy == nil || !cfg.ModelTransactionPolicy.Decoupled {
		t.Errorf("config %+v %v: want decoupled", cfg, err)
	}
}

// TestLLMCloseFailsWaiting: Close ends queued and running requests with
// UNAVAILABLE rather than leaving their readers blocked.
func TestLLMCloseFailsWaiting(t *testing.T) {
	s, _ := llmServer(t, LLMSpec{MaxSeqs: 1})
	ctx := context.Background()
	a, _ := s.Generate(ctx, &server.GenRequest{Model: "llm", MaxTokens: 3})
	b, _ := s.Generate(ctx, &server.GenRequest{Model: "llm", MaxTokens: 3})
	s.Close()
	for _, st := range []server.GenStream{a, b} {
		if _, ok, err := st.Next(ctx); ok || !errors.Is(err, kserve.ErrUnavailable) {
			t.Errorf("after Close: ok %v err %v, want UNAVAILABLE", ok, err)
		}
	}
}

func TestParseLLMFlag(t *testing.T) {
	spec, err := ParseModelFlag("name=big,kind=llm,max_seqs=8,step=2ms,per_seq=50us,prefill=1us,max_tokens=64,eos=10:20,fault=error_mid,seed=3")
	if err != nil {
		t.Fatal(err)
	}
	want := LLMSpec{MaxSeqs: 8, StepBase: Duration(2 * time.Millisecond), StepPerSeq: Duration(50 * time.Microsecond),
		PrefillPerToken: Duration(time.Microsecond), DefaultMaxTokens: 64, EOSMin: 10, EOSMax: 20, Fault: "error_mid"}
	if spec.Name != "big" || spec.Seed != 3 || !reflect.DeepEqual(*spec.LLM, want) {
		t.Errorf("got %+v %+v", spec, *spec.LLM)
	}
	for flag, wantErr := range map[string]string{
		"name=x,kind=llm,fault=boom":                         "fault",
		"name=x,kind=llm,latency=none":                       "unknown key for an llm model",
		"kind=llm":                                           `"name" is required`,
		"name=x,kind=llm,eos=5:2":                            "eos",
		"name=x,kind=llm,max_seqs=0":                         "max_seqs",
		"name=x,kind=llm,step=-1ms":                          "step",
		"name=x,kind=llm,max_tokens=100,max_tokens_limit=10": "default_max_tokens",
	} {
		if _, err := ParseModelFlag(flag); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%s: error %v, want one naming %q", flag, err, wantErr)
		}
	}
}

// TestLLMSpecRefusesTensorKnobs: an llm model's file form names the field
// that does not apply.
func TestLLMSpecRefusesTensorKnobs(t *testing.T) {
	err := ModelSpec{Name: "x", LLM: &LLMSpec{}, MaxBatchSize: 4}.Validate()
	if err == nil || !strings.Contains(err.Error(), "max_batch_size") {
		t.Errorf("max_batch_size on an llm: %v", err)
	}
	specs, err := DecodeYAML([]byte("models:\n- name: chat\n  llm:\n    max_seqs: 4\n    step_base: 1ms\n"))
	if err != nil || specs[0].LLM == nil || specs[0].LLM.MaxSeqs != 4 {
		t.Fatalf("yaml: %+v %v", specs, err)
	}
}

// TestLLMCapacity: the closed form against the truth at saturation: a
// long queue of requests all there at once is served at the capacity.
func TestLLMCapacity(t *testing.T) {
	c, err := LLMCapacity(testLaw, 10, 4)
	if err != nil {
		t.Fatal(err)
	}
	// 2 sequences, 4 tokens each: 0.5 requests prefill per step; a step is
	// 10 + 2×1 + 0.5×10×0.1 = 12.5ms, so 0.5/12.5ms = 40 requests/s.
	if c < 39.999 || c > 40.001 {
		t.Errorf("capacity %v, want 40/s", c)
	}
	reqs := make([]LLMRequest, 400)
	for i := range reqs {
		reqs[i] = LLMRequest{Input: 10, Output: 4}
	}
	truth, err := LLMTruth(testLaw, reqs)
	if err != nil {
		t.Fatal(err)
	}
	end := truth[len(truth)-1].Tokens[3]
	if rate := float64(len(reqs)) / end.Seconds(); rate < 39.5 || rate > 40.5 {
		t.Errorf("truth serves %.2f requests/s at saturation, the closed form says 40", rate)
	}
}

// TestLLMLateHandlerJoinsItsStep: a request that reached the host before
// a step started but reached the engine after joins that step, as the
// truth has it, rather than waiting a whole step more.
func TestLLMLateHandlerJoinsItsStep(t *testing.T) {
	s, clk := llmServer(t, testLaw)
	ctx := context.Background()
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	a, _ := s.Generate(ctx, &server.GenRequest{Model: "llm", Prompt: words(10), MaxTokens: 2, IgnoreEOS: true})
	clk.Advance(ms(13)) // step 1 ran 0-12; step 2 (a alone) started at 12
	b, err := s.Generate(ctx, &server.GenRequest{Model: "llm", Prompt: words(20), MaxTokens: 1, IgnoreEOS: true, Arrival: epoch.Add(ms(11))})
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
	truth, err := LLMTruth(testLaw, []LLMRequest{{At: 0, Input: 10, Output: 2}, {At: ms(11), Input: 20, Output: 1}})
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range []server.GenStream{a, b} {
		var got []time.Duration
		for tok := range st.(*llmStream).s.out {
			got = append(got, tok.at.Sub(epoch))
		}
		if !reflect.DeepEqual(got, truth[i].Tokens) {
			t.Errorf("request %d: tokens at %v, truth %v", i, got, truth[i].Tokens)
		}
	}
}

// TestLLMStatistics: an answered request shows in the model's Triton
// statistics: its queueing before its first step and its time in steps.
func TestLLMStatistics(t *testing.T) {
	s, clk := llmServer(t, LLMSpec{MaxSeqs: 1, StepBase: Duration(10 * time.Millisecond), PrefillPerToken: Duration(time.Nanosecond)})
	ctx := context.Background()
	for range 2 {
		if _, err := s.Generate(ctx, &server.GenRequest{Model: "llm", MaxTokens: 2}); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(time.Second)
	st, err := s.ModelStatistics(ctx, "llm", "")
	if err != nil {
		t.Fatal(err)
	}
	is := st.ModelStats[0].InferenceStats
	// The first runs 0-20ms, the second waits 20ms then runs 20-40ms.
	ms := uint64(time.Millisecond)
	if st.ModelStats[0].InferenceCount != 2 || is.Success.Count != 2 || is.Success.NS != 60*ms || is.Queue.NS != 20*ms || is.ComputeInfer.NS != 40*ms {
		t.Errorf("statistics %+v", st.ModelStats[0])
	}
}
