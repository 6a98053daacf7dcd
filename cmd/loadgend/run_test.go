package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/server"
	"github.com/netloadgen/netloadgen/kserve/server/servertest"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/runner"
	"github.com/netloadgen/netloadgen/pkg/sim"
	"github.com/netloadgen/netloadgen/pkg/sutproxy"
	"github.com/netloadgen/netloadgen/pkg/sutproxy/sutproxytest"
	"github.com/netloadgen/netloadgen/triton"
)

// model2ms is the end-to-end tests' SUT: one instance, a constant 2 ms per
// execution whatever the batch, max_batch_size 8 and no server-side batching.
// Its capacity is exactly 500 requests/s: 500 queries/s of one sample, or
// 4000 samples/s in requests of 8.
const model2ms = "name=m,fn=echo,dtype=FP32,dims=16,max_batch=8,latency=constant:2ms,instances=1"

// transports are the network paths every scenario runs over: gRPC, and HTTP
// with tensors in the binary extension and as JSON.
var transports = []string{"http", "grpc", "http-json"}

func startProxy(t *testing.T, flags ...string) *sutproxy.Proxy {
	return sutproxytest.Start(t, flags...)
}

func targetOf(p *sutproxy.Proxy, transport string) string { return sutproxytest.Target(p, transport) }

// transportArgs are the flags that choose the transport's encoding.
func transportArgs(transport string) []string {
	if transport == "http-json" {
		return []string{"--json"}
	}
	return nil
}

// invocation is one in-process `loadgend run`.
type invocation struct {
	code           int
	stdout, stderr string
}

func runArgs(args ...string) invocation {
	var out, errb bytes.Buffer
	code := runCommand(args, &out, &errb)
	return invocation{code: code, stdout: out.String(), stderr: errb.String()}
}

func (inv invocation) String() string {
	return fmt.Sprintf("exit %d\nstdout: %s\nstderr: %s", inv.code, inv.stdout, inv.stderr)
}

// completedRun checks what every run that reached a verdict must leave behind
// and returns its result: all its files (samples.txt among them), a summary whose "Result is :" line
// agrees with the exit status, and result.json agreeing with both.
func completedRun(t *testing.T, inv invocation, dir string) *loadgen.Result {
	t.Helper()
	if inv.code != exitValid && inv.code != exitInvalid {
		t.Fatalf("want a verdict (exit 0 or 1), got %v", inv)
	}
	for _, f := range []string{runlog.SummaryFile, runlog.DetailFile, runlog.AccuracyFile, runlog.ResultFile, runlog.HlogFile,
		runlog.TimeseriesCSVFile, runlog.TimeseriesJSONFile, runlog.SamplesFile, runlog.SpectrumFile} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if st.Size() == 0 && f != runlog.AccuracyFile {
			t.Errorf("%s is empty", f)
		}
	}
	summary, err := os.ReadFile(filepath.Join(dir, runlog.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^Result is : (VALID|INVALID)$`).FindSubmatch(summary)
	if m == nil {
		t.Fatalf("no \"Result is :\" line in the summary:\n%s", summary)
	}
	want := map[int]string{exitValid: "VALID", exitInvalid: "INVALID"}[inv.code]
	if string(m[1]) != want {
		t.Errorf("summary says %s, exit status %d", m[1], inv.code)
	}
	res, err := runlog.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if res.Validity != want || res.Valid != (inv.code == exitValid) {
		t.Errorf("result.json says %s (valid %v), exit status %d", res.Validity, res.Valid, inv.code)
	}
	if !strings.HasPrefix(inv.stdout, res.Scenario+" (") || !strings.Contains(inv.stdout, ": "+want) {
		t.Errorf("stdout does not summarise a %s %s run: %q", res.Scenario, want, inv.stdout)
	}
	return res
}

func modelStats(t *testing.T, b server.Backend, model string) triton.ModelStatistics {
	t.Helper()
	st, err := b.ModelStatistics(context.Background(), model, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.ModelStats) != 1 {
		t.Fatalf("statistics of %q: %d entries", model, len(st.ModelStats))
	}
	return st.ModelStats[0]
}

func batchCounts(s triton.ModelStatistics) map[uint64]uint64 {
	out := map[uint64]uint64{}
	for _, b := range s.BatchStats {
		out[b.BatchSize] = b.ComputeInfer.Count
	}
	return out
}

func hasReason(res *loadgen.Result, substr string) bool {
	for _, r := range res.InvalidReasons {
		if strings.Contains(r, substr) {
			return true
		}
	}
	return false
}

// TestRunVerdictsAgreeWithCapacity runs each scenario over both transports
// against model2ms, whose capacity is known, and checks the verdict, the
// reason and, where the scenario shapes requests, what the server executed.
func TestRunVerdictsAgreeWithCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs take about 15 s")
	}
	cases := []struct {
		name  string
		args  []string
		valid bool
		check func(t *testing.T, res *loadgen.Result, st triton.ModelStatistics)
	}{
		{
			// 40% of capacity: queueing adds well under a millisecond; the
			// p90 bound of 50 ms is met with room for a loaded machine.
			name: "Server/under-capacity",
			args: []string{"--scenario", "Server", "--target-qps", "200", "--target-latency-ms", "50",
				"--latency-percentile", "0.9", "--min-duration-ms", "1000", "--min-query-count", "150"},
			valid: true,
			check: func(t *testing.T, res *loadgen.Result, st triton.ModelStatistics) {
				if res.SamplesFailed != 0 || res.SamplesCompleted != res.SamplesIssued {
					t.Errorf("%d of %d samples completed, %d failed", res.SamplesCompleted, res.SamplesIssued, res.SamplesFailed)
				}
				if st.ExecutionCount != uint64(res.SamplesIssued) || st.InferenceCount != uint64(res.SamplesIssued) {
					t.Errorf("server executed %d requests of %d samples; the run issued %d one-sample queries",
						st.ExecutionCount, st.InferenceCount, res.SamplesIssued)
				}
			},
		},
		{
			// Three times capacity: the queue grows by 1000 queries/s, so
			// most queries wait hundreds of milliseconds.
			name: "Server/over-capacity",
			args: []string{"--scenario", "Server", "--target-qps", "1500", "--target-latency-ms", "50",
				"--latency-percentile", "0.9", "--min-duration-ms", "300", "--min-query-count", "100"},
			valid: false,
			check: func(t *testing.T, res *loadgen.Result, _ triton.ModelStatistics) {
				if !hasReason(res, "percentile latency") {
					t.Errorf("no latency reason among %q", res.InvalidReasons)
				}
				if res.PerfConstraintsMet || res.SamplesFailed != 0 {
					t.Errorf("perf constraints met %v, %d failed samples: want a latency failure alone", res.PerfConstraintsMet, res.SamplesFailed)
				}
				if res.CompletedSamplesPerSec > 550 {
					t.Errorf("completed %.0f samples/s, above the model's capacity of 500/s", res.CompletedSamplesPerSec)
				}
			},
		},
		{
			name: "SingleStream",
			args: []string{"--scenario", "SingleStream", "--expected-latency-ns", "2000000",
				"--latency-percentile", "0.9", "--min-duration-ms", "400", "--min-query-count", "70"},
			valid: true,
			check: func(t *testing.T, res *loadgen.Result, st triton.ModelStatistics) {
				p50, ok := res.SampleLatency.At(0.5)
				p90, _ := res.SampleLatency.At(0.9)
				if !ok || p50 < 2e6 || p50 > 5e6 {
					t.Errorf("p50 %d ns: want the model's 2 ms plus at most 3 ms of network and timers", p50)
				}
				t.Logf("p50 %.3f ms, p90 %.3f ms over %d queries", float64(p50)/1e6, float64(p90)/1e6, res.QueriesIssued)
				if st.ExecutionCount != uint64(res.QueriesIssued) {
					t.Errorf("server executed %d requests for %d queries", st.ExecutionCount, res.QueriesIssued)
				}
			},
		},
		{
			// Four samples per query go as one request of batch 4.
			name: "MultiStream/loadgen6",
			args: []string{"--scenario", "MultiStream", "--samples-per-query", "4", "--expected-latency-ns", "2000000",
				"--latency-percentile", "0.9", "--min-duration-ms", "300", "--min-query-count", "70"},
			valid: true,
			check: func(t *testing.T, res *loadgen.Result, st triton.ModelStatistics) {
				q := uint64(res.QueriesIssued)
				if res.SamplesIssued != 4*res.QueriesIssued {
					t.Errorf("%d samples in %d queries", res.SamplesIssued, res.QueriesIssued)
				}
				if st.ExecutionCount != q || st.InferenceCount != 4*q {
					t.Errorf("server: %d executions, %d inferences; want %d and %d", st.ExecutionCount, st.InferenceCount, q, 4*q)
				}
				if got := batchCounts(st); len(got) != 1 || got[4] != q {
					t.Errorf("batch sizes executed %v, want {4: %d}", got, q)
				}
			},
		},
		{
			name: "MultiStream/v0.5-interval-above-latency",
			args: []string{"--scenario", "MultiStream", "--ruleset", "v0.5", "--samples-per-query", "4",
				"--interval-ms", "10", "--min-duration-ms", "500", "--min-query-count", "40"},
			valid: true,
			check: func(t *testing.T, res *loadgen.Result, st triton.ModelStatistics) {
				if res.MultiStreamV05 == nil || res.MultiStreamV05.QueriesWithSkips > res.QueriesIssued/10 {
					t.Errorf("interval ticks: %+v", res.MultiStreamV05)
				}
				if got := batchCounts(st); got[4] != uint64(res.QueriesIssued) {
					t.Errorf("batch sizes executed %v, want {4: %d}", got, res.QueriesIssued)
				}
			},
		},
		{
			// A 1 ms interval is shorter than one 2 ms execution: every
			// query overruns its interval.
			name: "MultiStream/v0.5-interval-below-latency",
			args: []string{"--scenario", "MultiStream", "--ruleset", "v0.5", "--samples-per-query", "4",
				"--interval-ms", "1", "--min-duration-ms", "300", "--min-query-count", "40"},
			valid: false,
			check: func(t *testing.T, res *loadgen.Result, _ triton.ModelStatistics) {
				if !hasReason(res, "skipped") {
					t.Errorf("no skipped-interval reason among %q", res.InvalidReasons)
				}
			},
		},
		{
			// n = 1.1 × 0.3 s × 5000/s = 1650 samples; at 4000 samples/s
			// they take ≥ 412 ms, past the minimum duration.
			name: "Offline/expected-above-capacity",
			args: []string{"--scenario", "Offline", "--batch-size", "8", "--max-inflight", "4", "--target-qps", "5000",
				"--min-duration-ms", "300", "--min-query-count", "1"},
			valid: true,
			check: func(t *testing.T, res *loadgen.Result, st triton.ModelStatistics) {
				n := uint64(res.SamplesIssued)
				if n != 1650 || res.SamplesCompleted != res.SamplesIssued {
					t.Errorf("%d samples issued, %d completed; want 1650", n, res.SamplesCompleted)
				}
				if st.InferenceCount != n || st.ExecutionCount != (n+7)/8 {
					t.Errorf("server: %d executions, %d inferences; want %d and %d", st.ExecutionCount, st.InferenceCount, (n+7)/8, n)
				}
				want := map[uint64]uint64{8: n / 8}
				if n%8 != 0 {
					want[n%8] = 1
				}
				if got := batchCounts(st); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("batch sizes executed %v, want %v", got, want)
				}
			},
		},
		{
			// Expecting a quarter of the capacity, the one query of 330
			// samples takes about 42 batches × 2 ms = 83 ms: far short of
			// 300 ms even on a slow machine.
			name: "Offline/expected-below-capacity",
			args: []string{"--scenario", "Offline", "--batch-size", "8", "--max-inflight", "4", "--target-qps", "1000",
				"--min-duration-ms", "300", "--min-query-count", "1"},
			valid: false,
			check: func(t *testing.T, res *loadgen.Result, _ triton.ModelStatistics) {
				if res.MinDurationMet || !hasReason(res, "min duration") {
					t.Errorf("min duration met %v, reasons %q", res.MinDurationMet, res.InvalidReasons)
				}
			},
		},
	}
	for _, tr := range transports {
		for _, c := range cases {
			t.Run(tr+"/"+c.name, func(t *testing.T) {
				p := startProxy(t, model2ms)
				dir := t.TempDir()
				args := append([]string{"--target", targetOf(p, tr), "--model", "m", "--out", dir}, transportArgs(tr)...)
				args = append(args, c.args...)
				inv := runArgs(args...)
				res := completedRun(t, inv, dir)
				if res.Valid != c.valid {
					t.Fatalf("valid %v, want %v; reasons %q\n%v", res.Valid, c.valid, res.InvalidReasons, inv)
				}
				c.check(t, res, modelStats(t, p.Backend(), "m"))
			})
		}
	}
}

// TestRunTargetErrors: a run that cannot start exits 2 with one line naming
// what is wrong, and writes nothing.
func TestRunTargetErrors(t *testing.T) {
	p := startProxy(t, model2ms, "name=single,max_batch=0,latency=constant:1ms")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	cases := []struct {
		name, target, model, want string
		extra                     []string
	}{
		{"http/unknown-model", targetOf(p, "http"), "nosuch", `no model "nosuch"`, nil},
		{"grpc/unknown-model", targetOf(p, "grpc"), "nosuch", `no model "nosuch"`, nil},
		// The nearest of the models the server lists (its repository index,
		// over HTTP), or how to find them.
		{"http/misspelt-model", targetOf(p, "http"), "singel", `no model "singel": did you mean single? (it has `, nil},
		{"grpc/misspelt-model", targetOf(p, "grpc"), "singel", `no model "singel" (its models are listed on its HTTP port: POST /v2/repository/index)`, nil},
		{"http/dead-port", "http://" + dead, "m", "http://" + dead + " is not reachable", nil},
		{"grpc/dead-port", "grpc://" + dead, "m", "grpc://" + dead + " is not reachable", nil},
		// Each transport's port speaks the other protocol.
		// Each says what to type instead, without the bytes it got.
		{"http-to-grpc-port", "http://" + p.GRPCAddr(), "m", "http://" + p.GRPCAddr() + " does not answer as a KServe v2 HTTP server: it speaks gRPC: use grpc://" + p.GRPCAddr(), nil},
		{"grpc-to-http-port", "grpc://" + p.HTTPAddr(), "m", "grpc://" + p.HTTPAddr() + " does not answer as a KServe v2 gRPC server: it speaks HTTP/1.1: use http://" + p.HTTPAddr(), nil},
		{"http/batch-size-without-batching", targetOf(p, "http"), "single", `model "single" has no batch dimension`, []string{"--batch-size", "4"}},
		{"grpc/batch-size-without-batching", targetOf(p, "grpc"), "single", `model "single" has no batch dimension`, []string{"--batch-size", "4"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			inv := runArgs(append([]string{"--target", c.target, "--model", c.model, "--scenario", "SingleStream",
				"--min-duration-ms", "100", "--min-query-count", "10", "--out", dir}, c.extra...)...)
			if inv.code != exitError {
				t.Fatalf("want exit 2: %v", inv)
			}
			line := strings.TrimSuffix(inv.stderr, "\n")
			t.Log(line)
			if strings.Contains(line, `\x00`) || strings.Contains(line, "contents") {
				t.Errorf("stderr %q: raw bytes", line)
			}
			if strings.Contains(line, "\n") || !strings.HasPrefix(line, "loadgend run: ") || !strings.Contains(line, c.want) {
				t.Errorf("stderr %q: want one line containing %q", inv.stderr, c.want)
			}
			if inv.stdout != "" {
				t.Errorf("stdout %q", inv.stdout)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("%s exists after a run that never started (%v)", dir, err)
			}
		})
	}
}

// failingBackend serves the simulated models until `after` requests have
// been answered, then fails every request, as a server whose accelerator
// fails mid-run; tripped is closed at the first failure. With hang set, the
// later requests never answer until hang is closed (a wedged server).
type failingBackend struct {
	server.Backend
	after   int64
	n       atomic.Int64
	tripped chan struct{}
	once    atomic.Bool
	hang    chan struct{}
}

func (f *failingBackend) Infer(ctx context.Context, req *kserve.InferRequest) (*kserve.InferResponse, error) {
	if f.n.Add(1) <= f.after {
		return f.Backend.Infer(ctx, req)
	}
	if f.once.CompareAndSwap(false, true) {
		close(f.tripped)
	}
	if f.hang != nil {
		<-f.hang
	}
	return nil, kserve.Errorf(codes.Unavailable, "accelerator lost")
}

// serveBackend serves b on both transports on loopback and returns their
// addresses and a function that stops both servers at once.
func serveBackend(t *testing.T, b server.Backend) (httpAddr, grpcAddr string, stop func()) {
	t.Helper()
	return servertest.Serve(t, b)
}

// TestRunSUTFailsMidRun: when the server starts failing requests, or goes
// away, during a run, the run still reaches a verdict (INVALID, the failed
// samples counted) and writes its files.
func TestRunSUTFailsMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs take about 3 s")
	}
	spec, err := sim.ParseModelFlag(model2ms)
	if err != nil {
		t.Fatal(err)
	}
	const after = 40
	for _, tr := range transports[:2] {
		for _, mode := range []string{"errors", "server-stops", "server-hangs"} {
			t.Run(tr+"/"+mode, func(t *testing.T) {
				s, err := sim.New([]sim.ModelSpec{spec})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				fb := &failingBackend{Backend: s, after: after, tripped: make(chan struct{})}
				httpAddr, grpcAddr, stop := serveBackend(t, fb)
				// The full length: the failures are counted over the whole
				// run, not up to an early verdict.
				args := []string{"--no-early-verdict"}
				if mode == "server-hangs" {
					// Registered after serveBackend, so it runs first: the
					// servers can then stop.
					fb.hang = make(chan struct{})
					t.Cleanup(func() { close(fb.hang) })
					args = append(args, "--drain-timeout-ms", "300")
				}
				if mode == "server-stops" {
					go func() {
						select {
						case <-fb.tripped:
							stop()
						case <-t.Context().Done():
						}
					}()
				}
				target := "http://" + httpAddr
				if tr == "grpc" {
					target = "grpc://" + grpcAddr
				}
				dir := t.TempDir()
				inv := runArgs(append(args, "--target", target, "--model", "m", "--scenario", "Server", "--target-qps", "200",
					"--target-latency-ms", "50", "--latency-percentile", "0.9", "--min-duration-ms", "500",
					"--min-query-count", "100", "--out", dir)...)
				res := completedRun(t, inv, dir)
				if res.Valid || inv.code != exitInvalid {
					t.Fatalf("a run with failed requests is VALID: %v", inv)
				}
				if !hasReason(res, "samples failed") || res.NoFailedSamples {
					t.Errorf("no failed-samples reason among %q", res.InvalidReasons)
				}
				if res.SamplesCompleted+res.SamplesFailed != res.SamplesIssued {
					t.Errorf("%d completed + %d failed != %d issued", res.SamplesCompleted, res.SamplesFailed, res.SamplesIssued)
				}
				switch mode {
				case "errors":
					// Every request reaches the server, which answered the
					// first `after` and failed the rest.
					if res.SamplesCompleted != after || res.SamplesFailed != res.SamplesIssued-after {
						t.Errorf("%d completed, %d failed of %d; want %d completed", res.SamplesCompleted, res.SamplesFailed, res.SamplesIssued, after)
					}
				case "server-stops":
					if res.SamplesCompleted > after || res.SamplesFailed < res.SamplesIssued-after {
						t.Errorf("%d completed, %d failed of %d after the server stopped at request %d",
							res.SamplesCompleted, res.SamplesFailed, res.SamplesIssued, after+1)
					}
				case "server-hangs":
					// The drain timeout ends the run and fails what never
					// answered (some may fail as cancelled when the drain
					// ends, rather than count as unanswered).
					if !res.DrainTimedOut || res.Unanswered == 0 || res.SamplesCompleted != after || res.SamplesFailed != res.SamplesIssued-after {
						t.Errorf("drain timed out %v; %d unanswered, %d completed, %d failed of %d; want %d completed and the rest failed",
							res.DrainTimedOut, res.Unanswered, res.SamplesCompleted, res.SamplesFailed, res.SamplesIssued, after)
					}
				}
				if len(res.Errors) == 0 {
					t.Error("no error messages recorded")
				}
			})
		}
	}
}

// TestRunBadFlags: each bad flag exits 2 with one line naming it, before
// any connection is made (the target is a dead port).
func TestRunBadFlags(t *testing.T) {
	dir := t.TempDir()
	conf := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	badSyntax := conf("syntax.conf", "*.Server.target_qps 100\n")
	badValue := conf("value.conf", "*.Server.target_qps = fast\n")
	base := []string{"--target", "http://127.0.0.1:9", "--model", "m"}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"missing target", []string{"--model", "m"}, "--target"},
		{"bad scheme", []string{"--target", "ftp://127.0.0.1:9", "--model", "m"}, "--target"},
		{"empty port", []string{"--target", "http://127.0.0.1:", "--model", "m"}, "--target"},
		{"grpc path", []string{"--target", "grpc://127.0.0.1:9/v2", "--model", "m"}, "--target"},
		{"credentials", []string{"--target", "http://user:s3cret@127.0.0.1:9", "--model", "m"}, "--target: \"http://REDACTED@127.0.0.1:9\": a target takes no credentials"},
		{"port 0", []string{"--target", "http://127.0.0.1:0", "--model", "m"}, "--target"},
		{"port 99999", []string{"--target", "grpc://127.0.0.1:99999", "--model", "m"}, "--target"},
		{"query", []string{"--target", "http://127.0.0.1:9/v2?x=1", "--model", "m"}, "--target"},
		{"fragment", []string{"--target", "http://127.0.0.1:9#x", "--model", "m"}, "--target"},
		{"missing model", []string{"--target", "http://127.0.0.1:9"}, "--model"},
		{"model not UTF-8", []string{"--target", "http://127.0.0.1:9", "--model", "res\xffnet"}, "--model: \"res\\xffnet\" is not valid UTF-8"},
		{"model version not UTF-8", append(base, "--model-version", "\xc3"), "--model-version"},
		{"sut name not UTF-8", append(base, "--sut-name", "rig\xfe"), "--sut-name"},
		{"bad scenario", append(base, "--scenario", "Streaming"), "--scenario"},
		{"bad ruleset", append(base, "--ruleset", "v9"), "--ruleset"},
		{"bad mode", append(base, "--mode", "soak"), "--mode"},
		{"latency in a search", append(base, "--mode", "find-peak", "--latency"), "--latency prints one run's spectrum: use it with --mode performance"},
		{"samples-out in a search", append(base, "--mode", "sweep", "--rates", "10", "--samples-out", "s.jsonl"), "--samples-out exports one run's samples: use it with --mode performance"},
		{"slo unknown bound", append(base, "--slo", "ttfb=1s"), `--slo: "ttfb" is not ttft, tpot, e2e or latency`},
		{"slo bad duration", append(base, "--slo", "tpot=fast"), `--slo: tpot="fast": want a positive duration`},
		{"zero qps", append(base, "--target-qps", "0"), "--target-qps"},
		{"negative qps", append(base, "--target-qps", "-5"), "--target-qps"},
		{"nan qps", append(base, "--target-qps", "NaN"), "--target-qps"},
		{"percentile 100", append(base, "--latency-percentile", "100"), "--latency-percentile"},
		{"percentile zero", append(base, "--latency-percentile", "0"), "--latency-percentile"},
		{"percentile negative", append(base, "--latency-percentile", "-0.9"), "--latency-percentile"},
		{"unknown preset", append(base, "--preset", "bert"), "--preset"},
		{"unknown flag", append(base, "--qps", "10"), "-qps"},
		{"unparsable number", append(base, "--min-duration-ms", "1s"), "-min-duration-ms"},
		{"missing user.conf", append(base, "--user-conf", filepath.Join(dir, "none.conf")), "--user-conf"},
		{"user.conf syntax", append(base, "--user-conf", badSyntax), "--user-conf"},
		{"user.conf value", append(base, "--user-conf", badValue), "--user-conf"},
		{"zero samples per query", append(base, "--samples-per-query", "0"), "--samples-per-query"},
		{"negative batch size", append(base, "--batch-size", "-1"), "--batch-size"},
		{"negative max inflight", append(base, "--max-inflight", "-2"), "--max-inflight"},
		{"negative conns", append(base, "--conns", "-3"), "--conns"},
		{"negative max response bytes", append(base, "--max-response-bytes", "-1"), "--max-response-bytes: -1: want 0 (the default, 64 MiB) to 1073741824 (1 GiB) bytes"},
		{"max response bytes over 1 GiB", append(base, "--max-response-bytes", "1073741825"), "--max-response-bytes"},
		{"server metrics not http", append(base, "--server-metrics", "ftp://h/m"), "--server-metrics: a URL is not http(s)://host[:port]/path"},
		{"server metrics with credentials", append(base, "--server-metrics", "http://u:pw@h/m"), "--server-metrics: a URL has credentials"},
		{"server metrics interval too short", append(base, "--server-metrics-interval", "50ms"), "--server-metrics-interval: 50: want 0 (the default, 1000) or 100 to 3600000 ms"},
		{"server metrics interval not whole ms", append(base, "--server-metrics-interval", "100500us"), "--server-metrics-interval"},
		{"negative server metrics series", append(base, "--server-metrics-max-series", "-1"), "--server-metrics-max-series"},
		{"server metrics body over 1 GiB", append(base, "--server-metrics-max-bytes", "1073741825"), "--server-metrics-max-bytes"},
		{"server metrics both ways", append(base, "--server-metrics", "http://h/m", "--no-server-metrics"), "--no-server-metrics"},
		{"negative issue slack", append(base, "--issue-slack", "-1us"), "--issue-slack"},
		{"issue slack too large", append(base, "--issue-slack", "1s"), "--issue-slack"},
		{"request timeout without a unit", append(base, "--request-timeout", "2000"), `invalid value "2000" for flag -request-timeout: a duration like 2s or 500ms is expected (a bare number has no unit)`},
		{"issue slack without a unit", append(base, "--issue-slack", "50"), `invalid value "50" for flag -issue-slack: a duration like 2s or 500ms is expected (a bare number has no unit)`},
		{"request timeout not a duration", append(base, "--request-timeout", "soon"), `invalid value "soon" for flag -request-timeout: a duration like 2s or 500ms is expected`},
		{"zero total samples", append(base, "--total-samples", "0"), "--total-samples"},
		{"bad log level", append(base, "--log-level", "loud"), "--log-level"},
		{"zero interval", append(base, "--interval-ms", "0"), "--interval-ms"},
		{"data directory without samples", append(base, "--data", dir), "--data"},
		{"data missing", append(base, "--data", filepath.Join(dir, "none")), "--data"},
		{"data of an unknown kind", append(base, "--data", badSyntax), "--data"},
		{"total samples with data", append(base, "--data", conf("d.json", "{}"), "--total-samples", "5"), "--total-samples"},
		{"bad input law", append(base, "--input-tokens", "uniform:9:1"), "--input-tokens: length law: \"uniform:9:1\": HI 1 is below LO 9"},
		{"bad output law", append(base, "--output-tokens", "0"), "--output-tokens"},
		{"bad shared prefix", append(base, "--shared-prefix", "4"), "--shared-prefix"},
		{"a bad prompt line", append(base, "--data", conf("p.jsonl", "{\"prompt\": \"a\"}\n{\"prompt\": 3}\n")), "--data: prompt data: " + filepath.Join(dir, "p.jsonl") + ":2:"},
		{"input law with a prompt data set", append(base, "--data", conf("q.jsonl", "{\"prompt\": \"a\"}"), "--input-tokens", "5"), "--input-tokens"},
		{"stray argument", append(base, "extra"), `"extra"`},
		// 1.1 × 3600 s × 100000 QPS: one query the engine cannot hold.
		{"offline query too large", append(base, "--scenario", "Offline", "--target-qps", "100000", "--min-duration-ms", "3600000"),
			"--min-duration-ms: 3600000 ms at 100000 QPS make a trace of about 396000000 samples (1 query of 396000000), over the engine's limit of 268435456 samples"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inv := runArgs(c.args...)
			if inv.code != exitError {
				t.Fatalf("want exit 2: %v", inv)
			}
			line := strings.TrimSuffix(inv.stderr, "\n")
			t.Log(line)
			if strings.Contains(line, "\n") || !strings.Contains(line, c.want) {
				t.Errorf("stderr %q: want one line naming %s", inv.stderr, c.want)
			}
			if strings.Contains(inv.stderr, "s3cret") {
				t.Errorf("stderr %q echoes the password", inv.stderr)
			}
			if inv.stdout != "" {
				t.Errorf("stdout %q", inv.stdout)
			}
		})
	}
}

// tripBackend passes every call through and calls trip once, when the
// after-th inference arrives.
type tripBackend struct {
	server.Backend
	after int64
	n     atomic.Int64
	trip  func()
}

func (b *tripBackend) Infer(ctx context.Context, req *kserve.InferRequest) (*kserve.InferResponse, error) {
	if b.n.Add(1) == b.after {
		b.trip()
	}
	return b.Backend.Infer(ctx, req)
}

// TestRunCancelledMidRun: an interrupt (the context ending) during the timed
// run still gives a Result and the files, marked as ended early.
func TestRunCancelledMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	p := startProxy(t, model2ms)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	const after = 30
	httpAddr, _, _ := serveBackend(t, &tripBackend{Backend: p.Backend(), after: after, trip: cancel})
	args := []string{"--target", "http://" + httpAddr, "--model", "m", "--scenario", "Server", "--target-qps", "200",
		"--target-latency-ms", "50", "--min-duration-ms", "5000", "--min-query-count", "100"}
	req, err := parseRunFlags(args, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	spec := req.spec
	spec.OutDir = t.TempDir()
	out, err := runner.Run(ctx, spec, runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res := out.Result
	if res.EndReason != loadgen.StopCancelled || res.Valid || res.MinDurationMet {
		t.Errorf("end %q, valid %v, min duration met %v: want a cancelled, INVALID run", res.EndReason, res.Valid, res.MinDurationMet)
	}
	// Issuing stops at the cancel; what was in flight still answers.
	if res.QueriesIssued < after || res.QueriesIssued > 100 || res.SamplesFailed != 0 {
		t.Errorf("%d queries issued, %d samples failed; want about %d issued and none failed", res.QueriesIssued, res.SamplesFailed, after)
	}
	loaded, err := runlog.Load(spec.OutDir)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.EndReason != loadgen.StopCancelled || loaded.QueriesIssued != res.QueriesIssued {
		t.Errorf("result.json: end %q, %d queries; the run returned %q, %d", loaded.EndReason, loaded.QueriesIssued, res.EndReason, res.QueriesIssued)
	}
}

// noConfigBackend hides the model-configuration extension, as KServe and
// Seldon servers do: the model's batch limit is then unknown.
type noConfigBackend struct{ server.Backend }

func (b noConfigBackend) ServerMetadata(ctx context.Context) kserve.ServerMetadata {
	md := b.Backend.ServerMetadata(ctx)
	md.Extensions = nil
	return md
}

// TestRunBatchLimitUnknown: without a model configuration, a leading -1 is
// taken as the batch dimension, and Offline's query is cut into modest
// batches rather than sent as one request.
func TestRunBatchLimitUnknown(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	for _, tr := range transports[:2] {
		t.Run(tr, func(t *testing.T) {
			p := startProxy(t, model2ms)
			httpAddr, grpcAddr, _ := serveBackend(t, noConfigBackend{p.Backend()})
			target := "http://" + httpAddr
			if tr == "grpc" {
				target = "grpc://" + grpcAddr
			}
			dir := t.TempDir()
			inv := runArgs("--target", target, "--model", "m", "--scenario", "Offline", "--target-qps", "1000",
				"--min-duration-ms", "50", "--min-query-count", "1", "--out", dir)
			res := completedRun(t, inv, dir)
			n := uint64(res.SamplesIssued)
			st := modelStats(t, p.Backend(), "m")
			if n != 55 || st.InferenceCount != n {
				t.Fatalf("%d samples issued, server inferred %d; want 55\n%v", n, st.InferenceCount, inv)
			}
			if got, want := batchCounts(st), map[uint64]uint64{8: 6, 7: 1}; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("batch sizes executed %v, want %v", got, want)
			}
		})
	}
}
