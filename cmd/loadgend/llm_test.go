package main

// End to end against sutproxy's simulated LLMs: every generative API over
// its transport, through the CLI, the probe, the clients, the engine and
// the run's files.

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/internal/testcert"
	"github.com/netloadgen/netloadgen/kserve/server"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/sutproxy/sutproxytest"
)

// llmInput and llmOutput are the runs' prompt and answer lengths: short, so
// that an answer of the built-in llm (5 ms a step) takes about 45 ms.
const llmInput, llmOutput = 16, 8

// llmEOS is the built-in llm's law with an end of its own: an answer
// stops after 2 to 4 tokens unless the request asks it to ignore its end
// of sequence, as the runs do (ignore_eos, min_tokens).
const llmEOS = "name=llm,kind=llm,eos=2:4"

// llmServer is a short Server run: 40 queries at 50/s, a bound an answer
// of llmOutput tokens meets with room.
var llmServer = []string{"--scenario", "Server", "--target-qps", "50", "--target-latency-ms", "1000",
	"--latency-percentile", "0.9", "--min-duration-ms", "500", "--min-query-count", "25"}

// llmOffline is a short Offline run: one query of 64 prompts.
var llmOffline = []string{"--scenario", "Offline", "--target-qps", "100", "--min-duration-ms", "100", "--min-query-count", "64"}

// llmSingleStream and llmMultiStream are short runs of the closed-loop
// scenarios: 16 queries, one prompt each and 8 each (too few for early
// stopping's verdict, which is not what they check).
var (
	llmSingleStream = []string{"--scenario", "SingleStream", "--min-duration-ms", "100", "--min-query-count", "16"}
	llmMultiStream  = []string{"--scenario", "MultiStream", "--min-duration-ms", "100", "--min-query-count", "16"}
)

// llmRun runs `loadgend run` against a generative model with llmInput and
// llmOutput tokens and --samples-out; it returns the result, the API the
// summary names and the samples file.
func llmRun(t *testing.T, target, model, api string, args ...string) (*loadgen.Result, string, string) {
	t.Helper()
	res, api, samples, _ := llmRunLog(t, target, model, api, args...)
	return res, api, samples
}

// llmRunLog is llmRun, with the run's log (level info) as well.
func llmRunLog(t *testing.T, target, model, api string, args ...string) (*loadgen.Result, string, string, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "out")
	samples := filepath.Join(t.TempDir(), "samples.jsonl")
	all := []string{"--target", target, "--model", model, "--out", dir, "--samples-out", samples, "--log-level", "info",
		"--input-tokens", strconv.Itoa(llmInput), "--output-tokens", strconv.Itoa(llmOutput), "--drain-timeout-ms", "2000"}
	if api != "" {
		all = append(all, "--api", api)
	}
	inv := runArgs(append(all, args...)...)
	res := completedRun(t, inv, dir)
	summary, err := os.ReadFile(filepath.Join(dir, runlog.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	got := ""
	if m := regexp.MustCompile(`(?m)^  api : (\S+)$`).FindSubmatch(summary); m != nil {
		got = string(m[1])
	}
	return res, got, samples, inv.stderr
}

// sampleLine is one line of --samples-out.
type sampleLine struct {
	Sample     int64  `json:"sample"`
	Scheduled  int64  `json:"scheduled"`
	FirstToken *int64 `json:"first_token"`
	LastToken  *int64 `json:"last_token"`
	Tokens     int    `json:"tokens"`
	Input      int    `json:"input_tokens"`
	Status     string `json:"status"`
}

func readSamples(t *testing.T, path string) []sampleLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("no samples file: %v", err)
	}
	defer f.Close()
	var out []sampleLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l sampleLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("samples line %d: %v: %s", len(out), err, sc.Bytes())
		}
		out = append(out, l)
	}
	return out
}

// checkAnswered checks a run whose every sample was answered in full:
// result.json's tokens (every answer as long as asked: ignore_eos), TTFT
// before the end for a streamed answer and at it for a whole one, and a
// samples line per sample, each answered.
func checkAnswered(t *testing.T, res *loadgen.Result, samples string, streamed bool, source string) {
	t.Helper()
	if res.SamplesIssued == 0 || res.SamplesFailed != 0 || res.SamplesCompleted != res.SamplesIssued {
		t.Fatalf("%d samples issued, %d completed, %d failed: %+v", res.SamplesIssued, res.SamplesCompleted, res.SamplesFailed, res.Failures)
	}
	tk := res.Tokens
	if tk == nil {
		t.Fatal("result.json has no tokens")
	}
	n := res.SamplesIssued
	if tk.Samples != n || tk.OutputTokens != n*llmOutput || tk.InputTokens != n*llmInput {
		t.Errorf("tokens: %d samples, %d output, %d input tokens; want %d, %d, %d", tk.Samples, tk.OutputTokens, tk.InputTokens, n, n*llmOutput, n*llmInput)
	}
	if tk.TokenCountSource != source {
		t.Errorf("token_count_source %q, want %q", tk.TokenCountSource, source)
	}
	if tk.OutputTokensPerSecond <= 0 || tk.E2E.Mean <= 0 {
		t.Errorf("output tokens/s %v, E2E mean %v", tk.OutputTokensPerSecond, tk.E2E.Mean)
	}
	// Streamed, the first token comes before the end on the whole; a
	// sample whose tokens all arrived in one read (the simulated server or
	// the client descheduled for longer than its answer, on a loaded
	// host) has them at one time, so no one sample is required to differ.
	if streamed && (tk.TTFT.Mean >= tk.E2E.Mean || tk.TPOT.Mean <= 0) {
		t.Errorf("streamed: TTFT mean %v max %v, E2E mean %v max %v, TPOT mean %v: want TTFT before the end",
			tk.TTFT.Mean, tk.TTFT.Max, tk.E2E.Mean, tk.E2E.Max, tk.TPOT.Mean)
	}
	if !streamed && tk.TTFT.Mean != tk.E2E.Mean {
		t.Errorf("one answer: TTFT mean %v, E2E mean %v: want the same", tk.TTFT.Mean, tk.E2E.Mean)
	}
	lines := readSamples(t, samples)
	if int64(len(lines)) != n {
		t.Errorf("%d samples lines, %d samples issued", len(lines), n)
	}
	apart := 0 // samples whose last token came after their first
	for i, l := range lines {
		if l.Status != "ok" || l.Tokens != llmOutput || l.Input != llmInput || l.FirstToken == nil || l.LastToken == nil ||
			*l.FirstToken <= l.Scheduled || *l.LastToken < *l.FirstToken || (!streamed && *l.LastToken != *l.FirstToken) {
			t.Errorf("samples line %d: %+v", i, l)
			break
		}
		if *l.LastToken > *l.FirstToken {
			apart++
		}
	}
	if streamed && len(lines) > 0 && apart == 0 {
		t.Errorf("streamed: every one of %d samples has its first token at its last: the first token's time is not the first token's", len(lines))
	}
}

// TestRunLLM runs each generative API against sutproxy's simulated llm, in
// the Server scenario (and the other three, over one API or two), the API
// given or found by the probe, and over TLS: every sample answered, the
// tokens counted as asked.
func TestRunLLM(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs take about 10 s")
	}
	p := sutproxytest.Start(t, llmEOS)
	ca := testcert.NewCA(t, "test-ca")
	srv := ca.Server(t, "server", "localhost", "127.0.0.1")
	tp := sutproxytest.StartTLS(t, srv.CertFile, srv.KeyFile, "", llmEOS)
	_, httpsPort, _ := net.SplitHostPort(tp.HTTPAddr())
	_, grpcsPort, _ := net.SplitHostPort(tp.GRPCAddr())
	httpT, grpcT := targetOf(p, "http"), targetOf(p, "grpc")
	tlsArgs := []string{"--tls-ca", ca.File}
	cases := []struct {
		name, target, api string
		want              string // the API the run used
		args              []string
		streamed          bool
	}{
		{name: "openai-chat", target: httpT, api: "openai-chat", args: llmServer, streamed: true},
		{name: "openai-completions", target: httpT, api: "openai-completions", args: llmServer, streamed: true},
		{name: "openai-chat under a path prefix", target: httpT + "/openai", api: "openai-chat", args: llmServer, streamed: true},
		{name: "generate", target: httpT, api: "generate", args: llmServer},
		{name: "generate-stream", target: httpT, api: "generate-stream", args: llmServer, streamed: true},
		{name: "kserve-stream", target: grpcT, api: "kserve-stream", args: llmServer, streamed: true},
		{name: "kserve-stream on grpc-go", target: grpcT, api: "kserve-stream", args: append([]string{"--grpc-client", "grpc"}, llmServer...), streamed: true},
		// sutproxy is a KServe server listing the generate extension, and
		// lists its LLMs at /v1/models too: the KServe probe comes first.
		{name: "found over HTTP", target: httpT, want: "generate-stream", args: llmServer, streamed: true},
		{name: "found over gRPC", target: grpcT, want: "kserve-stream", args: llmServer, streamed: true},
		{name: "found over gRPC, Offline", target: grpcT, want: "kserve-stream", args: llmOffline, streamed: true},
		{name: "openai-chat, Offline", target: httpT, api: "openai-chat", args: llmOffline, streamed: true},
		// The other two scenarios take generative samples as well.
		{name: "kserve-stream, SingleStream", target: grpcT, api: "kserve-stream", args: llmSingleStream, streamed: true},
		{name: "openai-chat, MultiStream", target: httpT, api: "openai-chat", args: llmMultiStream, streamed: true},
		{name: "kserve-stream, MultiStream", target: grpcT, api: "kserve-stream", args: llmMultiStream, streamed: true},
		{name: "https openai-chat", target: "https://localhost:" + httpsPort, api: "openai-chat", args: append(tlsArgs, llmServer...), streamed: true},
		{name: "grpcs found", target: "grpcs://localhost:" + grpcsPort, want: "kserve-stream", args: append(tlsArgs, llmServer...), streamed: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, api, samples, log := llmRunLog(t, c.target, "llm", c.api, c.args...)
			// The run's log names the gRPC client: grpcloop's Generator
			// for grpc:// unless --grpc-client grpc; grpc-go for grpcs://.
			loop := strings.HasPrefix(c.target, "grpc://") && !slices.Contains(c.args, "grpc")
			if want := "grpc_loop=" + strconv.FormatBool(loop); !strings.Contains(log, want) {
				t.Errorf("run log %q: want %s", log, want)
			}
			want := c.want
			if want == "" {
				want = c.api
			}
			if api != want || res.API != want {
				t.Errorf("the summary says api %q, result.json %q; want %q", api, res.API, want)
			}
			checkAnswered(t, res, samples, c.streamed, "server")
		})
	}
}

// TestRunLLMMalformed: each of sutproxy's malformed answers, over each
// protocol it breaks, fails its samples with a named outcome and the run
// ends on its own (never hangs); a server refusing stream_options is asked
// again without and answers every sample.
func TestRunLLMMalformed(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs take about 5 s")
	}
	faults := []string{"bad_framing", "error_mid", "no_final", "unknown_id", "no_stream_options"}
	var flags []string
	for _, f := range faults {
		flags = append(flags, "name="+f+",kind=llm,fault="+f)
	}
	p := sutproxytest.Start(t, flags...)
	httpT, grpcT := targetOf(p, "http"), targetOf(p, "grpc")
	cases := []struct {
		fault, api, outcome string
	}{
		{"bad_framing", "openai-chat", "malformed"},
		{"bad_framing", "generate-stream", "malformed"},
		{"bad_framing", "generate", "malformed"},
		{"bad_framing", "kserve-stream", "malformed"},
		{"error_mid", "openai-completions", "malformed"},
		{"error_mid", "generate-stream", "malformed"},
		{"error_mid", "generate", "error"},
		{"error_mid", "kserve-stream", "malformed"},
		{"no_final", "openai-chat", "malformed"},
		{"no_final", "generate-stream", "connection_closed"},
		{"no_final", "generate", "connection_closed"},
		{"no_final", "kserve-stream", "malformed"},
		{"unknown_id", "kserve-stream", "malformed"},
	}
	for _, c := range cases {
		t.Run(c.fault+"/"+c.api, func(t *testing.T) {
			target := httpT
			if c.api == "kserve-stream" {
				target = grpcT
			}
			start := time.Now()
			res, _, samples, log := llmRunLog(t, target, c.fault, c.api, llmServer...)
			took := time.Since(start)
			if c.api == "kserve-stream" && !strings.Contains(log, "grpc_loop=true") {
				t.Errorf("run log %q: want grpc_loop=true (grpcloop's Generator)", log)
			}
			if took > 10*time.Second {
				t.Errorf("the run took %v: a malformed answer held it", took)
			}
			if res.SamplesFailed == 0 || len(res.Failures) != 1 || res.Failures[0].Outcome != c.outcome || res.Failures[0].Count != res.SamplesFailed {
				t.Fatalf("%d samples failed, failures %+v: want every one %s", res.SamplesFailed, res.Failures, c.outcome)
			}
			if res.Valid {
				t.Error("a run with failed samples is VALID")
			}
			failed := 0
			for _, l := range readSamples(t, samples) {
				if l.Status == c.outcome {
					failed++
				}
			}
			if int64(failed) != res.SamplesFailed {
				t.Errorf("%d samples lines say %s, %d samples failed", failed, c.outcome, res.SamplesFailed)
			}
		})
	}
	for _, api := range []string{"openai-chat", "openai-completions"} {
		t.Run("no_stream_options/"+api, func(t *testing.T) {
			res, _, samples := llmRun(t, httpT, "no_stream_options", api, llmServer...)
			// Without stream_options there is no usage: one token per
			// streamed response.
			checkAnswered(t, res, samples, true, loadgen.TokensFromResponses)
		})
	}
}

// stallingLLM serves a backend's generative models, each answer stalling
// after its first token until the test ends: an LLM whose next step never
// comes.
type stallingLLM struct {
	server.Backend
	gen     server.Generator
	stalled chan struct{} // closed at the first stall
	once    sync.Once
	release chan struct{} // closed when the test ends
}

func (s *stallingLLM) GenerativeModels(ctx context.Context) []string {
	return s.gen.GenerativeModels(ctx)
}
func (s *stallingLLM) Generative(ctx context.Context, model string) bool {
	return s.gen.Generative(ctx, model)
}

func (s *stallingLLM) Generate(ctx context.Context, req *server.GenRequest) (server.GenStream, error) {
	st, err := s.gen.Generate(ctx, req)
	if err != nil {
		return nil, err
	}
	return &stallingStream{GenStream: st, llm: s}, nil
}

type stallingStream struct {
	server.GenStream
	llm  *stallingLLM
	sent int
}

func (s *stallingStream) Next(ctx context.Context) (server.GenToken, bool, error) {
	if s.sent == 0 {
		s.sent++
		return s.GenStream.Next(ctx)
	}
	s.llm.once.Do(func() { close(s.llm.stalled) })
	select {
	case <-ctx.Done():
		return server.GenToken{}, false, ctx.Err()
	case <-s.llm.release:
		return server.GenToken{}, false, context.Canceled
	}
}

// TestRunLLMStalledSignal: Ctrl-C during a run against an LLM that stopped
// emitting mid-answer ends the run within the drain timeout + 1 s, over
// HTTP SSE and over ModelStreamInfer; no sample completes.
func TestRunLLMStalledSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	const drain = 500 * time.Millisecond
	for _, api := range []string{"openai-chat", "kserve-stream"} {
		t.Run(api, func(t *testing.T) {
			p := sutproxytest.Start(t)
			gen, ok := p.Backend().(server.Generator)
			if !ok {
				t.Fatal("sutproxy's backend serves no generative model")
			}
			s := &stallingLLM{Backend: p.Backend(), gen: gen, stalled: make(chan struct{}), release: make(chan struct{})}
			httpAddr, grpcAddr, _ := serveBackend(t, s)
			t.Cleanup(func() { close(s.release) }) // runs before the servers stop
			target := "http://" + httpAddr
			if api == "kserve-stream" {
				target = "grpc://" + grpcAddr
			}
			dir := t.TempDir()
			sigs, code, out, errb := signalledRun([]string{"--target", target, "--model", "llm", "--api", api, "--scenario", "Server",
				"--target-qps", "20", "--target-latency-ms", "1000", "--min-duration-ms", "5000", "--min-query-count", "100",
				"--input-tokens", "16", "--output-tokens", "64", "--drain-timeout-ms", "500", "--out", dir})
			waitBusy(t, s.stalled, code, out, errb)
			got := signalWithin(t, sigs, syscall.SIGINT, code, errb, drain)
			if got != exitInterrupted {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", got, exitInterrupted, out, errb)
			}
			res, err := runlog.Load(dir)
			if err != nil {
				t.Fatalf("result.json: %v", err)
			}
			if res.EndReason != loadgen.StopCancelled || res.Valid || res.SamplesCompleted != 0 || res.SamplesFailed == 0 {
				t.Errorf("end %q, %s, %d completed, %d failed: want a cancelled INVALID run, nothing completed", res.EndReason, res.Validity, res.SamplesCompleted, res.SamplesFailed)
			}
		})
	}
}
