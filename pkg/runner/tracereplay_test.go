package runner

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/shape"
	"github.com/netloadgen/netloadgen/pkg/sutproxy"
	"github.com/netloadgen/netloadgen/pkg/sutproxy/sutproxytest"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// replayLLM is the simulated LLM the replays run against: fast steps and
// room for every request at once, so that a replay is quick (a prefill
// of 0 would be the default 10 µs a token: 9 s of prefill a second here).
const replayLLM = "name=replay,kind=llm,max_seqs=1024,step=1ms,per_seq=1us,prefill=1ns"

// traceLine is one request of a generated trace, as the test expects it.
type traceLine struct {
	at      time.Duration // its offset from the run's start
	in, out int
	ids     []int
}

// mooncakeTrace writes n requests in Mooncake's JSONL layout over about
// span: lengths up to 1,800 tokens, hash ids one per 512-token block, the
// first from a pool of 8 (shared "system prompts"), the second from a
// pool of 40, the rest the request's own.
func mooncakeTrace(t testing.TB, n int, span time.Duration) (string, []traceLine) {
	g := rand.New(rand.NewPCG(31, 1))
	ms := make([]int, n)
	for i := range ms {
		ms[i] = g.IntN(int(span / time.Millisecond))
	}
	slices.Sort(ms)
	var b strings.Builder
	lines := make([]traceLine, n)
	for i := range lines {
		l := traceLine{at: time.Duration(ms[i]) * time.Millisecond, in: 1 + g.IntN(1800), out: 1 + g.IntN(6)}
		for j := range (l.in + 511) / 512 {
			switch j {
			case 0:
				l.ids = append(l.ids, g.IntN(8))
			case 1:
				l.ids = append(l.ids, 100+g.IntN(40))
			default:
				l.ids = append(l.ids, 1000+4*i+j)
			}
		}
		idText := idsJSON(l.ids)
		fmt.Fprintf(&b, `{"timestamp": %d, "input_length": %d, "output_length": %d, "hash_ids": %s}`+"\n", ms[i], l.in, l.out, idText)
		lines[i] = l
	}
	path := filepath.Join(t.TempDir(), "mooncake.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, lines
}

func idsJSON(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(id)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// azureTrace writes n requests in the Azure LLM inference traces' CSV
// layout (dates with seven fractional digits), over about span.
func azureTrace(t testing.TB, n int, span time.Duration) (string, []traceLine) {
	g := rand.New(rand.NewPCG(31, 2))
	ticks := make([]int64, n) // 100 ns
	for i := range ticks {
		ticks[i] = g.Int64N(int64(span / 100))
	}
	slices.Sort(ticks)
	base := time.Date(2023, 11, 16, 18, 15, 46, 680590000, time.UTC)
	var b strings.Builder
	b.WriteString("TIMESTAMP,ContextTokens,GeneratedTokens\n")
	lines := make([]traceLine, n)
	for i := range lines {
		at := base.Add(time.Duration(ticks[i]) * 100)
		l := traceLine{at: time.Duration(ticks[i]-ticks[0]) * 100, in: 1 + g.IntN(1500), out: 1 + g.IntN(6)}
		fmt.Fprintf(&b, "%s,%d,%d\r\n", at.Format("2006-01-02 15:04:05.0000000"), l.in, l.out)
		lines[i] = l
	}
	path := filepath.Join(t.TempDir(), "azure.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, lines
}

// replayRun replays the trace at path ("": a plain Poisson run) against
// a fresh receiving sutproxy over api; it returns the run's per-sample
// export (by sample sequence number, which is the trace's request index),
// sutproxy's record by request id (nil against an external sutproxy), and
// the function from a sample to its request id.
func replayRun(t *testing.T, path string, api genai.API) (*loadgen.Result, []exportedTraceSample, map[string]sutproxytest.Request, func(uint64) string) {
	t.Helper()
	transport := "http"
	if api.GRPC() {
		transport = "grpc"
	}
	// bench/trace-replay.sh's sutproxy, in a process of its own as deployed
	// (the lateness is then the generator's own: in process, the server's
	// garbage is collected on the generator's heap), or one in process
	// with its record of what it was sent.
	target, received := os.Getenv(traceReplayEnv+"_"+strings.ToUpper(transport)), (*sutproxytest.Received)(nil)
	if target == "" {
		var p *sutproxy.Proxy
		p, received = sutproxytest.StartReceiving(t, replayLLM)
		target = sutproxytest.Target(p, transport)
	} else {
		target = transport + "://" + target
	}
	s, err := loadgen.NewSettings(loadgen.RulesetLoadGen6, trace.Server, "")
	if err != nil {
		t.Fatal(err)
	}
	s.ServerTargetQPS, s.ServerTargetLatencyNs = 1000, 60e9
	input, output := genai.Fixed(4), genai.Fixed(1)
	if path == "" {
		// The baseline: a plain Poisson run at the traces' mean rate and
		// lengths, for 2 s.
		s.MinDurationMs, s.MinQueryCount = 2000, 1
		input, output = genai.Dist{Law: genai.LawUniform, A: 1, B: 1800}, genai.Dist{Law: genai.LawUniform, A: 1, B: 6}
	} else {
		sh, err := shape.OpenTrace(path, shape.TraceOptions{Model: "replay"})
		if err != nil {
			t.Fatal(err)
		}
		s.Shape = sh
	}
	prompts, err := genai.NewSynthetic(genai.SyntheticOptions{Total: 64, Input: input, Output: output, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	idOf := func(id uint64) string { return strconv.FormatUint(id, 10) } // gRPC: the request's id
	spec := Spec{Target: target, Model: "replay", API: api, Settings: s, Prompts: prompts,
		TotalSamples: 64, PerformanceSamples: 64, DataSeed: 5,
		wrapGen: func(c genai.Client) genai.Client {
			if hc, ok := c.(interface{ RequestID(uint64) string }); ok {
				idOf = hc.RequestID // OpenAI: X-Request-Id
			}
			return c
		}}
	var run *loadgen.Run
	out, err := Run(t.Context(), spec, Options{Started: func(r *loadgen.Run) { run = r }})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]sutproxytest.Request
	if received != nil {
		got = received.ByID()
	}
	return out.Result, exportedTrace(t, run), got, idOf
}

// exportedTraceSample is a line of the per-sample export.
type exportedTraceSample struct {
	Sample      uint64 `json:"sample"`
	Scheduled   int64  `json:"scheduled"`
	InputTokens int    `json:"input_tokens"`
	Tokens      int    `json:"tokens"`
	Status      string `json:"status"`
}

func exportedTrace(t *testing.T, run *loadgen.Run) []exportedTraceSample {
	t.Helper()
	var buf strings.Builder
	if err := run.WriteSamples(&buf); err != nil {
		t.Fatal(err)
	}
	var out []exportedTraceSample
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var s exportedTraceSample
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// checkReplay: every request of the trace issued once, at its offset
// exactly (the schedule; the lateness is bench/trace-replay.sh's), its
// prompt as long as asked and max_tokens as the trace says (sutproxy's
// record), and requests sharing a hash id sharing that block's text.
func checkReplay(t *testing.T, lines []traceLine, res *loadgen.Result, samples []exportedTraceSample, got map[string]sutproxytest.Request, idOf func(uint64) string) {
	t.Helper()
	if n := int64(len(lines)); res.SamplesIssued != n || res.SamplesCompleted != n || res.SamplesFailed != 0 {
		t.Fatalf("issued %d, completed %d, failed %d (%v); want the trace's %d", res.SamplesIssued, res.SamplesCompleted, res.SamplesFailed, res.Errors, len(lines))
	}
	if len(samples) != len(lines) || (got != nil && len(got) != len(lines)) {
		t.Fatalf("%d samples exported, %d requests received; want %d", len(samples), len(got), len(lines))
	}
	blocks := map[int]string{} // a hash id's whole block, as first received
	for _, s := range samples {
		l := lines[s.Sample]
		r, ok := got[idOf(s.Sample)]
		switch {
		case got == nil: // an external sutproxy: no record of what it was sent
			if time.Duration(s.Scheduled) != l.at || s.Status != loadgen.SampleOK || s.InputTokens != l.in || s.Tokens != l.out {
				t.Fatalf("sample %d: %+v; want ok at %v, %d input and %d output tokens", s.Sample, s, l.at, l.in, l.out)
			}
			continue
		case !ok:
			t.Fatalf("sample %d: sutproxy received no request %q", s.Sample, idOf(s.Sample))
		case time.Duration(s.Scheduled) != l.at:
			t.Fatalf("sample %d: scheduled at %v, the trace says %v", s.Sample, time.Duration(s.Scheduled), l.at)
		case s.Status != loadgen.SampleOK || s.InputTokens != l.in || s.Tokens != l.out:
			t.Fatalf("sample %d: %+v; want ok, %d input and %d output tokens", s.Sample, s, l.in, l.out)
		case r.InputTokens() != l.in || r.MaxTokens != l.out:
			t.Fatalf("request %d: sutproxy got %d prompt tokens, max_tokens %d; the trace says %d, %d", s.Sample, r.InputTokens(), r.MaxTokens, l.in, l.out)
		}
		words := strings.Fields(r.Prompt)
		for j, id := range l.ids {
			b := strings.Join(words[j*512:min(len(words), (j+1)*512)], " ")
			whole, seen := blocks[id]
			switch {
			case !seen && min(len(words), (j+1)*512)-j*512 == 512:
				blocks[id] = b
			case seen && !strings.HasPrefix(whole, b):
				t.Fatalf("request %d: block %d (hash id %d) is not the block other requests with that id had", s.Sample, j, id)
			}
		}
	}
	// Different ids, different blocks.
	texts := map[string]int{}
	for id, b := range blocks {
		if other, dup := texts[b]; dup {
			t.Fatalf("hash ids %d and %d have the same text", id, other)
		}
		texts[b] = id
	}
	if got != nil && len(lines[0].ids) > 0 && len(blocks) < 40 {
		t.Fatalf("only %d whole blocks compared", len(blocks))
	}
}

// logLateness logs a run's issue lateness and returns its p99.
func logLateness(t *testing.T, name string, res *loadgen.Result) time.Duration {
	late := res.IssueLateness
	p99, _ := late.At(0.99)
	t.Logf("FIGURE %-30s %d requests over %.2f s: issue lateness µs mean %.1f p99 %.1f max %.1f",
		name, res.SamplesIssued, float64(res.FinalQueryIssuedTimeNs)/1e9, float64(late.MeanNs)/1e3, float64(p99)/1e3, float64(late.MaxNs)/1e3)
	return p99
}

// traceReplayEnv turns TestTraceReplay's lateness figures into issue 31's
// bound (bench/trace-replay.sh, an idle machine: a timing claim): issue
// lateness p99 under 1 ms.
const traceReplayEnv = "NETLOADGEN_TRACE_REPLAY_BENCH"

// Issue 31's acceptance, the replay: a 2,000-request Mooncake-format
// trace over the OpenAI API and an Azure-format CSV over gRPC
// ModelStreamInfer, against sutproxy's LLM (checkReplay); the issue
// lateness logged, and held under 1 ms at p99 with traceReplayEnv set.
func TestTraceReplay(t *testing.T) {
	for _, c := range []struct {
		name  string
		write func(testing.TB, int, time.Duration) (string, []traceLine)
		n     int
		api   genai.API
	}{
		{"mooncake/openai-completions", mooncakeTrace, 2000, genai.APIOpenAICompletions},
		{"azure/kserve-stream", azureTrace, 2000, genai.APIKServeStream},
	} {
		t.Run(c.name, func(t *testing.T) {
			bench := os.Getenv(traceReplayEnv) != ""
			if bench {
				// The same path's lateness without a trace, first, for a
				// ratio on a shared machine.
				res, _, _, _ := replayRun(t, "", c.api)
				logLateness(t, "Poisson 1000/s "+string(c.api), res)
			}
			path, lines := c.write(t, c.n, 2*time.Second)
			res, samples, got, idOf := replayRun(t, path, c.api)
			checkReplay(t, lines, res, samples, got, idOf)
			if p99 := logLateness(t, c.name, res); bench && p99 >= time.Millisecond {
				t.Errorf("issue lateness p99 %v, want under 1 ms", p99)
			}
		})
	}
}

// A trace replayed against a model that is not generative: its
// timestamps alone drive the schedule (the lengths are not the tensor
// SUT's), every request at its offset.
func TestTraceReplayTensorModel(t *testing.T) {
	p := sutproxytest.Start(t) // the built-in models
	path, lines := azureTrace(t, 300, time.Second)
	sh, err := shape.OpenTrace(path, shape.TraceOptions{Model: "identity"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := loadgen.NewSettings(loadgen.RulesetLoadGen6, trace.Server, "")
	if err != nil {
		t.Fatal(err)
	}
	s.ServerTargetQPS, s.ServerTargetLatencyNs, s.Shape = 300, 60e9, sh
	var run *loadgen.Run
	out, err := Run(t.Context(), Spec{Target: sutproxytest.Target(p, "http"), Model: "identity", Settings: s, TotalSamples: 16, PerformanceSamples: 16,
		KeepSamples: true}, Options{Started: func(r *loadgen.Run) { run = r }})
	if err != nil {
		t.Fatal(err)
	}
	if res := out.Result; res.SamplesIssued != int64(len(lines)) || res.SamplesCompleted != int64(len(lines)) {
		t.Fatalf("issued %d, completed %d (%v); want the trace's %d", res.SamplesIssued, res.SamplesCompleted, res.Errors, len(lines))
	}
	for _, x := range exportedTrace(t, run) {
		if time.Duration(x.Scheduled) != lines[x.Sample].at || x.Status != loadgen.SampleOK {
			t.Fatalf("sample %d: %+v; want ok at %v", x.Sample, x, lines[x.Sample].at)
		}
	}
}
