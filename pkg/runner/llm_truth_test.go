package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/kserve/server"
	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/sim"
	"github.com/netloadgen/netloadgen/pkg/sutproxy/sutproxytest"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// llmTruthEnv turns TestLLMTruth's record into the comparison of issue
// 20's acceptance (bench/llm-truth.sh): longer runs, and the 5% and 0.2 ms
// bounds asserted.
const llmTruthEnv = "NETLOADGEN_LLM_TRUTH_BENCH"

// truthLaw is the simulated LLM TestLLMTruth loads (docs/sutproxy-models.md,
// "Simulated LLMs"): 64 sequences; a step of 20 ms + 50 µs per sequence +
// 20 µs per prefilled prompt token. With prompts of truthInput = 64 and
// answers of truthOutput = 16 tokens:
//
//	capacity = (64/16) / (20 + 64×0.05 + 4×64×0.02 ms) = 4 / 28.32 ms ≈ 141 requests/s
//	TTFT alone = 20 + 0.05 + 64×0.02 = 21.3 ms, plus the wait for the step
//	in progress (up to a step) and its share of others' prefills
//	TPOT ≈ a step: 20 ms + 50 µs per sequence decoding + prefills in it
//
// TTFT is tens of ms so that the fixed 0.1–0.6 ms between a query's
// scheduled time and the model's receipt of it (issue lateness, the
// write, the kernel, the server's wake-up) stays well inside 5%.
const truthLaw = "name=truth,kind=llm,max_seqs=64,step=20ms,per_seq=50us,prefill=20us"

const truthInput, truthOutput = 64, 16

// tokenBound is issue 20's bound between the measured TTFT and TPOT means
// and sutproxy's own emission times; the per-token offsets are held to it
// at their 99th percentile.
const tokenBound = 200 * time.Microsecond

// tokenLog is the client's side of the per-token comparison: every
// token-bearing response's arrival (the time the client gives the engine)
// by sample sequence number.
type tokenLog struct {
	mu  sync.Mutex
	at  map[uint64][]time.Time
	bad []string // Tokens calls of n != 1
}

// recordingClient wraps a run's generative client (Spec.wrapGen), logging
// every response's arrival before the engine hears of it.
type recordingClient struct {
	genai.Client
	log *tokenLog
}

func (c recordingClient) Generate(ctx context.Context, req *genai.Request, h genai.Handler) {
	c.Client.Generate(ctx, req, &recordingHandler{h: h, id: req.ID, log: c.log})
}

type recordingHandler struct {
	h   genai.Handler
	id  uint64
	log *tokenLog
}

func (r *recordingHandler) Tokens(at time.Time, n int) {
	r.log.mu.Lock()
	r.log.at[r.id] = append(r.log.at[r.id], at)
	if n != 1 {
		r.log.bad = append(r.log.bad, fmt.Sprintf("sample %d: a response of %d tokens", r.id, n))
	}
	r.log.mu.Unlock()
	r.h.Tokens(at, n)
}

func (r *recordingHandler) End(at time.Time, u genai.Usage, err error) { r.h.End(at, u, err) }

// exportedSample is one line of the engine's per-sample export
// (--samples-out, loadgen.WriteSamples).
type exportedSample struct {
	Sample      uint64 `json:"sample"`
	Scheduled   int64  `json:"scheduled"`
	FirstToken  *int64 `json:"first_token"`
	Tokens      int    `json:"tokens"`
	InputTokens int    `json:"input_tokens"`
	Status      string `json:"status"`
}

// truthFigures is one run's comparison.
type truthFigures struct {
	samples                int
	ttft, ttftTruth        time.Duration // means
	tpot, tpotTruth        time.Duration
	offP50, offP99, offMax time.Duration // client arrival − sutproxy emission, per token
	offMin                 time.Duration
	offP999                time.Duration
	tokens, over           int // tokens compared; those more than 0.2 ms from their emission
	// ttftEmit, tpotEmit: the means of the same samples by sutproxy's
	// emission record (first token's emission − scheduled; last − first
	// emission over n − 1).
	ttftEmit, tpotEmit time.Duration
	// lateMean, lateMax: the run's issue lateness (actual issue −
	// scheduled), part of TTFT's fixed error.
	lateMean, lateMax time.Duration
}

func (f truthFigures) ttftErr() float64 { return float64(f.ttft)/float64(f.ttftTruth) - 1 }
func (f truthFigures) tpotErr() float64 { return float64(f.tpot)/float64(f.tpotTruth) - 1 }

// TestLLMTruth runs Server runs (Poisson arrivals) at 50% and 90% of the
// capacity of a simulated LLM with a known law (truthLaw), over HTTP SSE
// (openai-chat) and gRPC (kserve-stream), and compares what the run
// measured with the discrete-event truth (sim.LLMTruth) of the run's own
// scheduled arrivals and prompt lengths (its per-sample export), and every
// token's arrival at the client with sutproxy's record of when it sent
// that token (matched by the request id the client sent: X-Request-Id,
// the gRPC request's id).
//
// Always: every sample answered, every token of every sample matched to
// sutproxy's emission of it, and the figures logged. With
// NETLOADGEN_LLM_TRUTH_BENCH=1 (bench/llm-truth.sh; an idle machine: these
// are timing claims) the runs are longer and issue 20's bounds asserted:
// mean TTFT and TPOT within 5% of the truth and within 0.2 ms of the
// same means by sutproxy's emission record, and 99% of the tokens within
// 0.2 ms of their emission (sutproxy records a token just before the
// socket write of the bytes completing it: kserve/server.EmitConn).
func TestLLMTruth(t *testing.T) {
	bench := os.Getenv(llmTruthEnv) != ""
	spec, err := sim.ParseModelFlag(truthLaw)
	if err != nil {
		t.Fatal(err)
	}
	capacity, err := sim.LLMCapacity(*spec.LLM, truthInput, truthOutput)
	if err != nil {
		t.Fatal(err)
	}
	minDur := uint64(1000)
	if bench {
		minDur = 8000
	}
	for _, api := range []genai.API{genai.APIOpenAIChat, genai.APIKServeStream} {
		for _, share := range []float64{0.5, 0.9} {
			t.Run(fmt.Sprintf("%s/%.0f%%", api, 100*share), func(t *testing.T) {
				f := truthRun(t, *spec.LLM, api, share*capacity, minDur)
				t.Logf("FIGURE %3.0f%% %-14s %4d samples  TTFT %6.2f ms vs truth %6.2f (%+5.2f%%), emissions %+6.1f µs  TPOT %6.2f ms vs truth %6.2f (%+5.2f%%), emissions %+6.1f µs  offset µs p50 %5.1f p99 %6.1f p99.9 %7.1f max %7.1f min %6.1f, %d of %d tokens beyond 0.2 ms; issue lateness µs mean %.1f max %.1f",
					100*share, api, f.samples, ms(f.ttft), ms(f.ttftTruth), 100*f.ttftErr(), us(f.ttft-f.ttftEmit), ms(f.tpot), ms(f.tpotTruth), 100*f.tpotErr(), us(f.tpot-f.tpotEmit),
					us(f.offP50), us(f.offP99), us(f.offP999), us(f.offMax), us(f.offMin), f.over, f.tokens, us(f.lateMean), us(f.lateMax))
				if !bench {
					return
				}
				if e := f.ttftErr(); e > 0.05 || e < -0.05 {
					t.Errorf("mean TTFT %v is %+.2f%% from the truth %v", f.ttft, 100*e, f.ttftTruth)
				}
				if e := f.tpotErr(); e > 0.05 || e < -0.05 {
					t.Errorf("mean TPOT %v is %+.2f%% from the truth %v", f.tpot, 100*e, f.tpotTruth)
				}
				// Issue 20: the measured means within 0.2 ms of the same
				// means by sutproxy's emission record.
				if d := f.ttft - f.ttftEmit; d > tokenBound || d < -tokenBound {
					t.Errorf("mean TTFT %v is %v from the emission record's %v", f.ttft, d, f.ttftEmit)
				}
				if d := f.tpot - f.tpotEmit; d > tokenBound || d < -tokenBound {
					t.Errorf("mean TPOT %v is %v from the emission record's %v", f.tpot, d, f.tpotEmit)
				}
				// Token by token, 99% within the bound. Not every token:
				// when the client's reader is behind (both ends share 2
				// cores here), the kernel merges the segments queued on
				// the socket, and the merged one carries the last
				// segment's stamp (tcp_try_coalesce), so a token read
				// behind later ones gets their arrival (bench/RESULTS.md,
				// 2026-11-25).
				if f.offP99 > tokenBound || f.offMin < -tokenBound {
					t.Errorf("token arrivals from sutproxy's emissions: p99 %v, min %v; want within %v (%d of %d beyond it, max %v)", f.offP99, f.offMin, tokenBound, f.over, f.tokens, f.offMax)
				}
			})
		}
	}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
func us(d time.Duration) float64 { return float64(d) / 1e3 }

// truthRun is one Server run at rate against a fresh recording sutproxy
// serving truthLaw, and its comparison with the truth and the emissions.
func truthRun(t *testing.T, law sim.LLMSpec, api genai.API, rate float64, minDurMs uint64) truthFigures {
	p, emissions := sutproxytest.StartRecording(t, truthLaw)
	transport := "http"
	if api.GRPC() {
		transport = "grpc"
	}
	s, err := loadgen.NewSettings(loadgen.RulesetLoadGen6, trace.Server, "")
	if err != nil {
		t.Fatal(err)
	}
	s.ServerTargetQPS, s.MinDurationMs, s.MinQueryCount = rate, minDurMs, 1
	s.ServerTargetLatencyNs = 10e9 // no verdict is judged here
	prompts, err := genai.NewSynthetic(genai.SyntheticOptions{Total: 1024, Input: genai.Fixed(truthInput), Output: genai.Fixed(truthOutput), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	tokens := &tokenLog{at: map[uint64][]time.Time{}}
	var idOf func(uint64) string
	spec := Spec{Target: sutproxytest.Target(p, transport), Model: "truth", API: api, Settings: s, Prompts: prompts,
		TotalSamples: 1024, PerformanceSamples: 1024,
		wrapGen: func(c genai.Client) genai.Client {
			idOf = func(id uint64) string { return strconv.FormatUint(id, 10) } // gRPC: the request's id
			if hc, ok := c.(interface{ RequestID(uint64) string }); ok {
				idOf = hc.RequestID // OpenAI: X-Request-Id
			}
			return recordingClient{Client: c, log: tokens}
		}}
	var run *loadgen.Run
	out, err := Run(t.Context(), spec, Options{Started: func(r *loadgen.Run) { run = r }})
	if err != nil {
		t.Fatal(err)
	}
	if res := out.Result; res.SamplesFailed != 0 || res.SamplesCompleted == 0 || res.Tokens == nil {
		t.Fatalf("completed %d, failed %d (errors %v), tokens %v", res.SamplesCompleted, res.SamplesFailed, res.Errors, res.Tokens)
	}
	samples := exportedSamples(t, run)
	if len(tokens.bad) > 0 {
		t.Fatalf("responses of several tokens, want one each (sutproxy streams one per token): %v", tokens.bad)
	}
	f := compareTruth(t, law, samples, emissions.ByID(), tokens.at, idOf)
	f.ttft, f.tpot = time.Duration(out.Result.Tokens.TTFT.Mean), time.Duration(out.Result.Tokens.TPOT.Mean)
	f.lateMean, f.lateMax = time.Duration(out.Result.IssueLateness.MeanNs), time.Duration(out.Result.IssueLateness.MaxNs)
	return f
}

// exportedSamples is the run's per-sample export, parsed.
func exportedSamples(t *testing.T, run *loadgen.Run) []exportedSample {
	t.Helper()
	var buf bytes.Buffer
	if err := run.WriteSamples(&buf); err != nil {
		t.Fatal(err)
	}
	var out []exportedSample
	dec := json.NewDecoder(&buf)
	for dec.More() {
		var s exportedSample
		if err := dec.Decode(&s); err != nil {
			t.Fatal(err)
		}
		if s.Status != loadgen.SampleOK || s.FirstToken == nil || s.Tokens != truthOutput || s.InputTokens != truthInput {
			t.Fatalf("sample %+v: want ok with %d tokens of %d input tokens", s, truthOutput, truthInput)
		}
		out = append(out, s)
	}
	return out
}

// compareTruth computes the truth of the samples' scheduled arrivals and
// each token's offset from its emission; the measured means are the
// run's result's.
func compareTruth(t *testing.T, law sim.LLMSpec, samples []exportedSample, emitted map[string][]server.Emission,
	arrived map[uint64][]time.Time, idOf func(uint64) string) truthFigures {
	t.Helper()
	reqs := make([]sim.LLMRequest, len(samples))
	var offsets []time.Duration
	var f truthFigures
	var start time.Time // the run's clock's zero: a first token's arrival less its offset in the export
	for i, s := range samples {
		em := emitted[idOf(s.Sample)]
		at := arrived[s.Sample]
		if len(em) != s.Tokens || len(at) != s.Tokens {
			t.Fatalf("sample %d (id %q): sutproxy sent %d tokens, the client saw %d, the engine counted %d", s.Sample, idOf(s.Sample), len(em), len(at), s.Tokens)
		}
		if start.IsZero() {
			start = at[0].Add(-time.Duration(*s.FirstToken))
		}
		f.ttftEmit += em[0].At.Sub(start) - time.Duration(s.Scheduled)
		f.tpotEmit += em[len(em)-1].At.Sub(em[0].At) / time.Duration(max(len(em)-1, 1))
		for k, e := range em {
			if e.Index != k {
				t.Fatalf("sample %d: emission %d is token %d", s.Sample, k, e.Index)
			}
			offsets = append(offsets, at[k].Sub(e.At))
		}
		// The model's own count of the prompt (sutproxy counts its words:
		// genai.CountTokens) and of the answer.
		reqs[i] = sim.LLMRequest{At: time.Duration(s.Scheduled), Input: s.InputTokens, Output: len(em)}
	}
	if len(emitted) != len(samples) {
		t.Fatalf("sutproxy answered %d requests, the run issued %d samples", len(emitted), len(samples))
	}
	truth, err := sim.LLMTruth(law, reqs)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range reqs {
		f.ttftTruth += truth[i].TTFT(r)
		f.tpotTruth += truth[i].TPOT()
	}
	f.samples = len(reqs)
	f.ttftTruth /= time.Duration(len(reqs))
	f.tpotTruth /= time.Duration(len(reqs))
	f.ttftEmit /= time.Duration(len(reqs))
	f.tpotEmit /= time.Duration(len(reqs))
	slices.Sort(offsets)
	f.offMin, f.offMax = offsets[0], offsets[len(offsets)-1]
	f.offP50, f.offP99, f.offP999 = offsets[len(offsets)/2], offsets[len(offsets)*99/100], offsets[len(offsets)*999/1000]
	f.tokens = len(offsets)
	for _, o := range offsets {
		if o > tokenBound || o < -tokenBound {
			f.over++
		}
	}
	return f
}
