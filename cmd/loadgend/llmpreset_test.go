package main

// Issue 21's last acceptance point: the llama2-70b-interactive preset
// against sutproxy's simulated LLM over the network, at a rate the model
// holds and at twice its capacity, and both runs' detail logs against the
// keys the C++ LoadGen writes for a token run.

import (
	"bytes"
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

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/sim"
	"github.com/netloadgen/netloadgen/pkg/sutproxy/sutproxytest"
)

// interactiveLaw is the simulated LLM the preset is run against: 32
// sequences in a batch and 10 ms steps, so that with llmInput and
// llmOutput tokens its capacity is about 355 requests/s. At half of it a
// request waits about a step for its first token and then gets a token
// a step (p99 TTFT and TPOT ≈ 20 and 11 ms, far under the preset's 450 and
// 40 ms); at twice it the queue, and TTFT with it, grows by about a second
// a second, past 450 ms within a run of interactiveQueries queries, while
// TPOT stays a full batch's step (≈ 12.6 ms): the run fails on TTFT.
const interactiveLaw = "name=llama,kind=llm,max_seqs=32,step=10ms,per_seq=20us,prefill=10us"

// interactiveQueries is the runs' query count: LoadGen's early stopping at
// p99 needs 459 queries with none over a bound and 662 with one, so a held
// run stays VALID with one sample over (a stall of the busy machine).
const interactiveQueries = 700

// interactiveArgs are the preset run's flags at rate qps. The preset's
// bounds (TTFT 450 ms, TPOT 40 ms) and percentile (0.99) are kept; only
// what a test must shorten is overridden: the minimum duration (the
// preset's 600 s, here 0.5 s: both rates need longer for their queries),
// the minimum query count (the preset sets none: early stopping decides,
// and interactiveQueries is what it needs) and the sample count (the
// preset's equal issue rounds the query count up to a multiple of the
// performance sample count, by default 1024: 700 keeps the runs at 700
// queries).
func interactiveArgs(qps float64) []string {
	return []string{"--preset", "llama2-70b-interactive", "--scenario", "Server",
		"--target-qps", strconv.FormatFloat(qps, 'f', 1, 64),
		"--min-duration-ms", "500", "--min-query-count", strconv.Itoa(interactiveQueries),
		"--total-samples", strconv.Itoa(interactiveQueries), "--performance-samples", strconv.Itoa(interactiveQueries)}
}

// poissonArrivals are n requests of llmInput and llmOutput tokens arriving
// at rate qps (a fixed seed: the law check is deterministic).
func poissonArrivals(n int, qps float64) []sim.LLMRequest {
	r := rand.New(rand.NewPCG(21, 70))
	reqs := make([]sim.LLMRequest, n)
	var at float64
	for i := range reqs {
		at += r.ExpFloat64() / qps
		reqs[i] = sim.LLMRequest{At: time.Duration(at * float64(time.Second)), Input: llmInput, Output: llmOutput}
	}
	return reqs
}

// truthP99 is the law's p99 TTFT and TPOT for reqs, by sim.LLMTruth
// (LoadGen's index n·p).
func truthP99(t *testing.T, law sim.LLMSpec, reqs []sim.LLMRequest) (ttft, tpot time.Duration) {
	t.Helper()
	tim, err := sim.LLMTruth(law, reqs)
	if err != nil {
		t.Fatal(err)
	}
	ft, pt := make([]time.Duration, len(reqs)), make([]time.Duration, len(reqs))
	for i, x := range tim {
		ft[i], pt[i] = x.TTFT(reqs[i]), x.TPOT()
	}
	slices.Sort(ft)
	slices.Sort(pt)
	at := len(reqs) * 99 / 100
	return ft[at], pt[at]
}

// checkInteractiveLaw checks that the preset's bounds mean something for
// interactiveLaw at the two rates, by its discrete-event truth: the held
// rate far inside both bounds, the overload past the TTFT bound within a
// run's queries.
func checkInteractiveLaw(t *testing.T, law sim.LLMSpec, held, over float64) {
	t.Helper()
	ttft, tpot := truthP99(t, law, poissonArrivals(interactiveQueries, held))
	if ttft > 450*time.Millisecond/4 || tpot > 40*time.Millisecond/2 {
		t.Fatalf("the law at %.1f/s: truth p99 TTFT %v, TPOT %v: want well under the preset's 450 and 40 ms", held, ttft, tpot)
	}
	// The queue passes the TTFT bound well within the run's queries, its
	// TPOT does not.
	overTTFT, overTPOT := truthP99(t, law, poissonArrivals(interactiveQueries, over))
	if overTTFT < 450*time.Millisecond*3/2 || overTPOT > 40*time.Millisecond/2 {
		t.Fatalf("the law at %.1f/s: truth p99 TTFT %v, TPOT %v over %d queries: want a queue far past 450 ms, TPOT under 40 ms", over, overTTFT, overTPOT, interactiveQueries)
	}
	t.Logf("truth: held %.1f/s p99 TTFT %v TPOT %v; overload %.1f/s p99 TTFT %v TPOT %v (%d queries)",
		held, ttft, tpot, over, overTTFT, overTPOT, interactiveQueries)
}

// tokenSummaryLines are LoadGen's token lines in a Server run's summary
// (the token_server_small vector's, values aside).
var tokenSummaryLines = []string{
	"Completed tokens per second: ", "TTFT Early Stopping Result:", "TPOT Early Stopping Result:",
	"Completed tokens per second                 : ", "Min First Token latency (ns)                : ",
	"99.00 percentile first token latency (ns)   : ", "Mean Time per Output Token (ns)               : ",
	"99.00 percentile time to output token (ns)   : ", "ttft_latency (ns): 450000000", "tpot_latency (ns): 40000000",
}

// TestLlama2InteractivePresetVerdicts: `loadgend run --preset
// llama2-70b-interactive` against sutproxy's simulated LLM over the
// network is VALID at half the model's capacity and INVALID, with
// LoadGen's TTFT message word for word, at twice it; both detail logs carry
// every key LoadGen's token_server_small vector has, each value of the same
// JSON kind (what the official log parser reads).
func TestLlama2InteractivePresetVerdicts(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs take about 12 s")
	}
	spec, err := sim.ParseModelFlag(interactiveLaw)
	if err != nil {
		t.Fatal(err)
	}
	capacity, err := sim.LLMCapacity(*spec.LLM, llmInput, llmOutput)
	if err != nil {
		t.Fatal(err)
	}
	held, over := capacity/2, capacity*2
	checkInteractiveLaw(t, *spec.LLM, held, over)
	vector := readDetailLog(t, filepath.Join(srcDir, "testdata", "tokens", "token_server_small.mlperf_log_detail.txt"))
	p := sutproxytest.Start(t, interactiveLaw)
	for _, c := range []struct{ name, target, api string }{
		{"openai-chat", targetOf(p, "http"), "openai-chat"},
		{"kserve-stream", targetOf(p, "grpc"), "kserve-stream"},
	} {
		t.Run(c.name+" held", func(t *testing.T) {
			dir, inv := presetRun(t, c.target, c.api, held)
			if inv.code != exitValid {
				t.Fatalf("at %.1f/s (half the capacity %.1f/s): want VALID (exit %d), got %v", held, capacity, exitValid, inv)
			}
			res := completedRun(t, inv, dir)
			tl := res.TokenLatencies
			if tl == nil || !tl.Met() || tl.TTFTBoundNs != uint64(450*time.Millisecond) || tl.TPOTBoundNs != uint64(40*time.Millisecond) || tl.Percentile != 0.99 {
				t.Fatalf("token_latencies %+v: want met against the preset's 450 ms / 40 ms at p99", tl)
			}
			if res.QueriesIssued < interactiveQueries {
				t.Errorf("%d queries issued, want at least %d", res.QueriesIssued, interactiveQueries)
			}
			sum := readSummary(t, dir)
			for _, l := range append(tokenSummaryLines, "Result is : VALID", "  Early stopping satisfied: Yes", " * Run successful.") {
				if !strings.Contains(sum, l) {
					t.Errorf("summary lacks %q:\n%s", l, sum)
				}
			}
			checkDetailKinds(t, filepath.Join(dir, runlog.DetailFile), vector)
			t.Logf("%s at %.1f/s: p99 TTFT %v, TPOT %v, %d queries", c.name, held,
				time.Duration(tl.TTFTAtPercentileNs), time.Duration(tl.TPOTAtPercentileNs), res.QueriesIssued)
		})
		t.Run(c.name+" overloaded", func(t *testing.T) {
			dir, inv := presetRun(t, c.target, c.api, over)
			if inv.code != exitInvalid {
				t.Fatalf("at %.1f/s (twice the capacity %.1f/s): want INVALID (exit %d), got %v", over, capacity, exitInvalid, inv)
			}
			res := completedRun(t, inv, dir)
			sum := readSummary(t, dir)
			if !strings.Contains(sum, loadgen.RecTTFTNotMet) {
				t.Errorf("summary lacks LoadGen's %q:\n%s", loadgen.RecTTFTNotMet, sum)
			}
			// LoadGen's "NO", and an unsuccessful early-stopping block: TTFT's
			// (TPOT's instead if a stall of the busy machine put samples
			// over 40 ms: LoadGen then leaves TTFT's unjudged).
			for _, l := range append(tokenSummaryLines, "Result is : INVALID", "  Performance constraints satisfied : NO",
				"  Early stopping satisfied: NO", " Early Stopping Result:\n * Run unsuccessful.") {
				if !strings.Contains(sum, l) {
					t.Errorf("summary lacks %q:\n%s", l, sum)
				}
			}
			checkDetailKinds(t, filepath.Join(dir, runlog.DetailFile), vector)
			tl := res.TokenLatencies
			if tl == nil || tl.TTFTMet || tl.Met() {
				t.Fatalf("token_latencies %+v: want TTFT not met", tl)
			}
			// The early verdict (on by default) counts samples over each
			// token bound: the overload passes TTFT's allowance for the
			// planned queries long before they are all issued.
			ev := res.EarlyVerdict
			if ev == nil || !ev.Stopped || !strings.Contains(ev.Reason, "over the TTFT bound") || !strings.Contains(sum, "stopped early") {
				t.Errorf("early verdict %+v: want the run stopped early on the TTFT bound, and the summary saying so", ev)
			}
			t.Logf("%s at %.1f/s: p99 TTFT %v, TPOT %v, %d queries", c.name, over,
				time.Duration(tl.TTFTAtPercentileNs), time.Duration(tl.TPOTAtPercentileNs), res.QueriesIssued)
		})
	}
}

// presetRun runs the preset at qps against target and returns its output
// directory and the invocation.
func presetRun(t *testing.T, target, api string, qps float64) (string, invocation) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "out")
	args := append([]string{"--target", target, "--model", "llama", "--api", api, "--out", dir,
		"--input-tokens", strconv.Itoa(llmInput), "--output-tokens", strconv.Itoa(llmOutput), "--drain-timeout-ms", "5000"},
		interactiveArgs(qps)...)
	return dir, runArgs(args...)
}

func readSummary(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, runlog.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// runDependentKeys are the vector's keys a run of ours legitimately lacks:
// error_runtime is logged per sample of fewer than two tokens (the vector
// has 5; every answer here has llmOutput).
var runDependentKeys = map[string]bool{"error_runtime": true}

// detailLog is a detail log as the official parser reads it (each line
// JSON after ":::MLLOG "): each key's value kind, and the keys in order of
// first appearance.
type detailLog struct {
	kinds map[string]string
	order []string
}

func readDetailLog(t *testing.T, path string) detailLog {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	log := detailLog{kinds: map[string]string{}}
	for i, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		js, ok := strings.CutPrefix(l, ":::MLLOG ")
		if !ok {
			t.Fatalf("%s line %d: no :::MLLOG marker: %q", path, i+1, l)
		}
		d := json.NewDecoder(bytes.NewReader([]byte(js)))
		d.UseNumber()
		var m struct {
			Key      string          `json:"key"`
			Value    any             `json:"value"`
			TimeMs   *float64        `json:"time_ms"`
			Metadata json.RawMessage `json:"metadata"`
		}
		if err := d.Decode(&m); err != nil || m.Key == "" || m.TimeMs == nil || len(m.Metadata) == 0 {
			t.Fatalf("%s line %d: want JSON with key, value, time_ms and metadata (%v): %q", path, i+1, err, l)
		}
		if _, seen := log.kinds[m.Key]; !seen {
			log.order = append(log.order, m.Key)
		}
		log.kinds[m.Key] = valueKind(m.Value)
	}
	return log
}

// valueKind is a JSON value's kind as Python's json reads it: a number
// with a point or an exponent is a float, else an int.
func valueKind(v any) string {
	switch x := v.(type) {
	case json.Number:
		if strings.ContainsAny(x.String(), ".eE") {
			return "float"
		}
		return "int"
	case string:
		return "string"
	case bool:
		return "bool"
	case nil:
		return "null"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// checkDetailKinds checks that the detail log at path has every key of the
// vector (runDependentKeys aside), in the vector's order (other keys may
// come between), each with a value of the same kind. A float of the vector
// may be written as an integer: LoadGen prints a double without a point
// when it is whole (the vector's own requested_accuracy_log_probability is
// 0), and Python reads either.
func checkDetailKinds(t *testing.T, path string, vector detailLog) {
	t.Helper()
	got := readDetailLog(t, path)
	pos := make(map[string]int, len(got.order))
	for i, k := range got.order {
		pos[k] = i
	}
	last, lastKey := -1, ""
	for _, k := range vector.order {
		if runDependentKeys[k] {
			continue
		}
		want := vector.kinds[k]
		g, ok := got.kinds[k]
		switch {
		case !ok:
			t.Errorf("%s lacks key %q (the vector's %s)", path, k, want)
			continue
		case g != want && !(want == "float" && g == "int"):
			t.Errorf("%s: key %q is a %s, the vector's a %s", path, k, g, want)
		}
		if pos[k] < last {
			t.Errorf("%s: key %q comes before %q, after it in the vector", path, k, lastKey)
		}
		last, lastKey = pos[k], k
	}
}
