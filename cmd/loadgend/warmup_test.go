package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
)

// TestRunWarmup: --warmup-ms sends the scenario's load before the timed
// run: the server receives the warm-up's requests and the timed run's,
// while result.json counts only the timed ones and has the warmup block
// that counts the others; the summary says so in one line.
func TestRunWarmup(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	for _, tr := range transports[:2] {
		t.Run(tr, func(t *testing.T) {
			p := startProxy(t, model2ms)
			b := &tripBackend{Backend: p.Backend(), trip: func() {}}
			httpAddr, grpcAddr, _ := serveBackend(t, b)
			target := "http://" + httpAddr
			if tr == "grpc" {
				target = "grpc://" + grpcAddr
			}
			dir := t.TempDir()
			inv := runArgs("--target", target, "--model", "m", "--scenario", "Server", "--target-qps", "400",
				"--target-latency-ms", "100", "--min-duration-ms", "500", "--min-query-count", "100",
				"--warmup-ms", "300", "--out", dir)
			if inv.code != exitValid && inv.code != exitInvalid {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", inv.code, inv.stdout, inv.stderr)
			}
			res, err := runlog.Load(dir)
			if err != nil {
				t.Fatalf("result.json: %v", err)
			}
			w := res.Warmup
			if w == nil {
				t.Fatal("result.json has no warmup block")
			}
			got := b.n.Load()
			t.Logf("server saw %d requests; warm-up %+v; timed %d samples", got, *w, res.SamplesIssued)
			if w.DurationMs != 300 || w.SamplesIssued < 50 || w.SamplesCompleted != w.SamplesIssued || w.SamplesFailed != 0 {
				t.Errorf("warmup %+v: want 300 ms, some 120 samples sent, every one answered", *w)
			}
			if got != w.SamplesIssued+res.SamplesIssued {
				t.Errorf("the server received %d requests; want the warm-up's %d + the timed run's %d", got, w.SamplesIssued, res.SamplesIssued)
			}
			if res.SamplesCompleted != res.SamplesIssued || res.SampleLatency.Count != int(res.SamplesIssued) || res.ProtocolErrors != 0 || res.LateCompletions != 0 {
				t.Errorf("timed: %d issued, %d completed, %d latencies, %d protocol errors, %d late: the warm-up leaked into the timed counts",
					res.SamplesIssued, res.SamplesCompleted, res.SampleLatency.Count, res.ProtocolErrors, res.LateCompletions)
			}
			summary, err := os.ReadFile(filepath.Join(dir, "mlperf_log_summary.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(summary), "300 ms before the timed run, discarded:") {
				t.Errorf("the summary has no warmup line:\n%s", summary)
			}
		})
	}
}

// TestRunSignalDuringWarmup: a signal during the warm-up ends the run at
// once, cancelled, with nothing timed issued, its files written and the
// warm-up's unanswered samples failed; exit 130.
func TestRunSignalDuringWarmup(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	const drain = 500 * time.Millisecond
	p := startProxy(t, model2ms)
	arrived, hang := make(chan struct{}), make(chan struct{})
	httpAddr, _, _ := serveBackend(t, &failingBackend{Backend: p.Backend(), after: 0, tripped: arrived, hang: hang})
	t.Cleanup(func() { close(hang) })
	dir := t.TempDir()
	sigs, code, out, errb := signalledRun([]string{"--target", "http://" + httpAddr, "--model", "m", "--scenario", "Server",
		"--target-qps", "200", "--target-latency-ms", "50", "--min-duration-ms", "1000", "--min-query-count", "100",
		"--warmup-ms", "60000", "--drain-timeout-ms", "500", "--out", dir})
	waitBusy(t, arrived, code, out, errb)
	got := signalWithin(t, sigs, syscall.SIGINT, code, errb, drain)
	if got != exitInterrupted {
		t.Errorf("exit %d, want %d\nstderr: %s", got, exitInterrupted, errb)
	}
	res, err := runlog.Load(dir)
	if err != nil {
		t.Fatalf("result.json: %v", err)
	}
	if res.EndReason != loadgen.StopCancelled || res.Valid || res.QueriesIssued != 0 {
		t.Errorf("end %q, %s, %d timed queries: want a cancelled run with none", res.EndReason, res.Validity, res.QueriesIssued)
	}
	if w := res.Warmup; w == nil || w.SamplesIssued == 0 || w.SamplesFailed != w.SamplesIssued {
		t.Errorf("warmup %+v: want its unanswered samples failed", w)
	}
}
