package main

import (
	"errors"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
)

// TestRunRealSignal is TestRunSignalEndsWithinDrain with real signals: the
// loadgend binary, built here, runs against a loopback server that never
// answers or is far over capacity, and gets SIGINT or SIGTERM from the
// kernel once the server has requests. It exits 130 (143) within the drain
// timeout + 1 s, its files written, the run cancelled and what never
// answered failed; during a warm-up as well.
func TestRunRealSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs it")
	}
	bin := filepath.Join(t.TempDir(), "loadgend")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = srcDir // the tests run in a directory of their own (TestMain)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	const drain = 500 * time.Millisecond
	cases := []struct {
		name   string
		silent bool // the SUT never answers; else it is far over capacity
		warmup bool // the signal comes during a warm-up
		sig    syscall.Signal
		want   int
	}{
		{name: "never answers, SIGINT", silent: true, sig: syscall.SIGINT, want: exitInterrupted},
		{name: "never answers, SIGTERM", silent: true, sig: syscall.SIGTERM, want: exitTerminated},
		{name: "over capacity, SIGINT", sig: syscall.SIGINT, want: exitInterrupted},
		{name: "over capacity, SIGTERM", sig: syscall.SIGTERM, want: exitTerminated},
		{name: "never answers, warm-up, SIGINT", silent: true, warmup: true, sig: syscall.SIGINT, want: exitInterrupted},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			httpAddr, arrived := busyServer(t, tc.silent)
			dir := t.TempDir()
			args := []string{"run", "--target", "http://" + httpAddr, "--model", "m", "--scenario", "Server",
				"--target-qps", "5000", "--target-latency-ms", "50", "--min-duration-ms", "3000", "--min-query-count", "100",
				"--drain-timeout-ms", "500", "--out", dir}
			if tc.warmup {
				args = append(args, "--warmup-ms", "60000")
			}
			cmd := exec.Command(bin, args...)
			var out, errb syncBuffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			t.Cleanup(func() {
				if cmd.ProcessState == nil {
					_ = cmd.Process.Kill()
					<-exited
				}
			})
			select {
			case <-arrived:
			case err := <-exited:
				t.Fatalf("loadgend exited (%v) before the server had a request\nstderr: %s", err, &errb)
			case <-time.After(30 * time.Second):
				t.Fatalf("the server got no request in 30 s\nstderr: %s", &errb)
			}
			sent := time.Now()
			if err := syscall.Kill(cmd.Process.Pid, tc.sig); err != nil {
				t.Fatal(err)
			}
			var err error
			select {
			case err = <-exited:
			case <-time.After(drain + 10*time.Second):
				t.Fatalf("loadgend still runs %v after %v\nstderr: %s", time.Since(sent), tc.sig, &errb)
			}
			took := time.Since(sent)
			t.Logf("exited %v after %v", took, tc.sig)
			if took > drain+time.Second {
				t.Errorf("loadgend exited %v after %v; want at most the drain timeout %v + 1s", took, tc.sig, drain)
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != tc.want {
				t.Errorf("exit %v, want status %d\nstdout: %s\nstderr: %s", err, tc.want, &out, &errb)
			}
			res, lerr := runlog.Load(dir)
			if lerr != nil {
				t.Fatalf("result.json: %v", lerr)
			}
			t.Logf("%d queries issued, %d samples completed, %d failed, %d unanswered", res.QueriesIssued, res.SamplesCompleted, res.SamplesFailed, res.Unanswered)
			if res.EndReason != loadgen.StopCancelled || res.Valid {
				t.Errorf("end %q, %s: want a cancelled, INVALID run", res.EndReason, res.Validity)
			}
			if tc.warmup {
				if w := res.Warmup; res.QueriesIssued != 0 || w == nil || w.SamplesIssued == 0 || w.SamplesFailed != w.SamplesIssued {
					t.Errorf("%d timed queries, warmup %+v: want none timed, the warm-up's unanswered failed", res.QueriesIssued, w)
				}
				return
			}
			if res.Unanswered == 0 || res.SamplesFailed < res.Unanswered {
				t.Errorf("%d unanswered, %d failed: what never answered must fail", res.Unanswered, res.SamplesFailed)
			}
		})
	}
}

// busyServer serves model m on loopback, either never answering or at 50
// queries a second of capacity (the runs ask for 5000); arrived closes once
// it is busy.
func busyServer(t *testing.T, silent bool) (string, <-chan struct{}) {
	arrived := make(chan struct{})
	if silent {
		p := startProxy(t, model2ms)
		hang := make(chan struct{})
		addr, _, _ := serveBackend(t, &failingBackend{Backend: p.Backend(), after: 0, tripped: arrived, hang: hang})
		t.Cleanup(func() { close(hang) }) // runs before the servers stop
		return addr, arrived
	}
	p := startProxy(t, "name=m,fn=echo,dtype=FP32,dims=16,max_batch=0,latency=constant:20ms,instances=1")
	var once sync.Once
	addr, _, _ := serveBackend(t, &tripBackend{Backend: p.Backend(), after: 300, trip: func() { once.Do(func() { close(arrived) }) }})
	return addr, arrived
}
