package main

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
)

// syncBuffer is a bytes.Buffer that a run abandoned by a second signal may
// still write to while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// signalledRun starts `loadgend run` with args and signals from the
// returned channel; the run's exit status arrives on the other.
func signalledRun(args []string) (chan<- os.Signal, <-chan int, *syncBuffer, *syncBuffer) {
	sigs := make(chan os.Signal, 2)
	code := make(chan int, 1)
	var out, errb syncBuffer
	go func() { code <- runWithSignals(args, sigs, &out, &errb) }()
	return sigs, code, &out, &errb
}

// TestRunSignalEndsWithinDrain: a signal at any moment of a run stops the
// issuing at once and ends the run within the drain timeout + 1 s, with a
// SUT that never answers and with one far over capacity; the run ends
// cancelled, what never answered failed, its files written, and the exit
// status says which signal stopped it (130 SIGINT, 143 SIGTERM).
func TestRunSignalEndsWithinDrain(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	const drain = 500 * time.Millisecond
	cases := []struct {
		name   string
		silent bool // the SUT never answers; else it is far over capacity
		sig    os.Signal
		want   int
	}{
		{name: "never answers, SIGINT", silent: true, sig: syscall.SIGINT, want: exitInterrupted},
		{name: "over capacity, SIGINT", sig: syscall.SIGINT, want: exitInterrupted},
		{name: "over capacity, SIGTERM", sig: syscall.SIGTERM, want: exitTerminated},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			arrived := make(chan struct{}) // closed when the SUT is busy
			var httpAddr string
			if tc.silent {
				p := startProxy(t, model2ms)
				hang := make(chan struct{})
				httpAddr, _, _ = serveBackend(t, &failingBackend{Backend: p.Backend(), after: 0, tripped: arrived, hang: hang})
				t.Cleanup(func() { close(hang) }) // runs before the servers stop
			} else {
				// 50 queries a second of capacity, asked for 5000.
				p := startProxy(t, "name=m,fn=echo,dtype=FP32,dims=16,max_batch=0,latency=constant:20ms,instances=1")
				var once sync.Once
				httpAddr, _, _ = serveBackend(t, &tripBackend{Backend: p.Backend(), after: 300, trip: func() { once.Do(func() { close(arrived) }) }})
			}
			dir := t.TempDir()
			sigs, code, out, errb := signalledRun([]string{"--target", "http://" + httpAddr, "--model", "m", "--scenario", "Server",
				"--target-qps", "5000", "--target-latency-ms", "50", "--min-duration-ms", "3000", "--min-query-count", "100",
				"--drain-timeout-ms", "500", "--out", dir})
			waitBusy(t, arrived, code, out, errb)
			got := signalWithin(t, sigs, tc.sig, code, errb, drain)
			if got != tc.want {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", got, tc.want, out, errb)
			}
			if !strings.Contains(errb.String(), "issuing stopped; draining for at most 500ms") {
				t.Errorf("stderr does not say the run is draining: %s", errb)
			}
			res, err := runlog.Load(dir)
			if err != nil {
				t.Fatalf("result.json: %v", err)
			}
			t.Logf("%d queries issued, %d samples completed, %d failed, %d unanswered", res.QueriesIssued, res.SamplesCompleted, res.SamplesFailed, res.Unanswered)
			if res.EndReason != loadgen.StopCancelled || res.Valid {
				t.Errorf("end %q, %s: want a cancelled, INVALID run", res.EndReason, res.Validity)
			}
			if res.QueriesIssued >= 15000 {
				t.Errorf("%d queries issued: the signal did not stop the issuing", res.QueriesIssued)
			}
			if res.Unanswered == 0 || res.SamplesFailed < res.Unanswered {
				t.Errorf("%d unanswered, %d failed: what never answered must fail", res.Unanswered, res.SamplesFailed)
			}
		})
	}
}

// TestRunSecondSignalExitsAtOnce: a second Ctrl-C does not wait for the
// drain; it says so and exits 130.
func TestRunSecondSignalExitsAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	p := startProxy(t, model2ms)
	arrived, hang := make(chan struct{}), make(chan struct{})
	httpAddr, _, _ := serveBackend(t, &failingBackend{Backend: p.Backend(), after: 0, tripped: arrived, hang: hang})
	t.Cleanup(func() { close(hang) })
	sigs, code, out, errb := signalledRun([]string{"--target", "http://" + httpAddr, "--model", "m", "--scenario", "Server",
		"--target-qps", "200", "--target-latency-ms", "50", "--min-duration-ms", "3000", "--min-query-count", "100",
		"--drain-timeout-ms", "3000"})
	waitBusy(t, arrived, code, out, errb)
	sent := time.Now()
	sigs <- syscall.SIGINT
	sigs <- syscall.SIGINT
	var got int
	select {
	case got = <-code:
	case <-time.After(2 * time.Second):
		t.Fatalf("a second Ctrl-C did not exit at once\nstderr: %s", errb)
	}
	t.Logf("exited %v after the signals", time.Since(sent))
	if got != exitInterrupted {
		t.Errorf("exit %d, want %d", got, exitInterrupted)
	}
	if !strings.Contains(errb.String(), "again: exiting now") {
		t.Errorf("stderr does not say it exits at once: %s", errb)
	}
}

// waitBusy returns once the SUT has a request (arrived); the run ending
// first, or no request in 30 s, fails the test.
// signalWithin sends sig to a signalledRun and returns its exit code,
// failing the test unless it ends within the drain timeout + 1 s (and
// fatally if it still runs 10 s past the drain).
func signalWithin(t *testing.T, sigs chan<- os.Signal, sig os.Signal, code <-chan int, errb *syncBuffer, drain time.Duration) int {
	t.Helper()
	sent := time.Now()
	sigs <- sig
	var got int
	select {
	case got = <-code:
	case <-time.After(drain + 10*time.Second):
		t.Fatalf("the run still goes %v after the signal\nstderr: %s", time.Since(sent), errb)
	}
	took := time.Since(sent)
	t.Logf("ended %v after the signal", took)
	if took > drain+time.Second {
		t.Errorf("the run ended %v after the signal; want at most the drain timeout %v + 1s", took, drain)
	}
	return got
}

func waitBusy(t *testing.T, arrived <-chan struct{}, code <-chan int, out, errb *syncBuffer) {
	t.Helper()
	select {
	case <-arrived:
	case c := <-code:
		t.Fatalf("the run ended (exit %d) before the SUT was busy\nstdout: %s\nstderr: %s", c, out, errb)
	case <-time.After(30 * time.Second):
		t.Fatal("the SUT got no request in 30 s")
	}
}
