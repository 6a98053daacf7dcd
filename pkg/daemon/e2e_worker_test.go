package daemon_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/daemon"
)

// TestWorkerProcessKilled: the built `loadgend worker`, its clock shifted
// back 250 ms by the test-only variable, registers with an in-process
// daemon, is measured within 0.5 ms of the shift, and once killed (-9) is
// lost, its crew told, within the worker timeout and a sweep.
func TestWorkerProcessKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts loadgend")
	}
	const token = "e2e-worker-token-77aa"
	const timeout = 500 * time.Millisecond
	svc, c := e2eService(t, func(cfg *daemon.Config) { cfg.APIToken = token; cfg.WorkerTimeout = timeout })
	cmd := exec.Command(loadgendBinary(t), "worker", "--coordinator", "http://"+svc.Addr(), "--name", "proc-1")
	cmd.Env = childEnv([]string{"LOADGEND_API_TOKEN=" + token, "LOADGEND_LISTEN=127.0.0.1:0", "LOADGEND_TEST_CLOCK_SHIFT=-250ms"})
	logs := &logLines{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if strings.Contains(logs.String(), token) {
			t.Error("the token is in the worker's log")
		}
		if t.Failed() {
			t.Logf("worker log:\n%s", logs.String())
		}
	})
	crew, err := svc.Workers().Pick(context.Background(), daemon.PickRequest{RunID: "r-kill", N: 1, Wait: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	est, err := crew.SyncClocks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if e := est["proc-1"]; (e.Offset + 250*time.Millisecond).Abs() > 500*time.Microsecond {
		t.Errorf("offset %v ± %v, want -250ms within 0.5ms", e.Offset, e.Uncertainty)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	select {
	case l := <-crew.Lost():
		if l.Name != "proc-1" || l.RunID != "r-kill" {
			t.Errorf("lost %+v", l)
		}
		// The timeout counts from the last heartbeat, at most an interval
		// (a quarter of it) before the kill; the sweep adds up to 100 ms. The
		// bound is the issue's: the heartbeat timeout plus 2 s.
		if took := time.Since(killed); took > timeout+2*time.Second {
			t.Errorf("lost %v after the kill, timeout %v", took, timeout)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the killed worker was not lost within 10 s")
	}
	code, body := c.do(t, "GET", "/v1/workers", "")
	var list api.WorkerList
	if code != 200 || json.Unmarshal(body, &list) != nil || len(list.Workers) != 1 || list.Workers[0].State != api.WorkerLost {
		t.Errorf("list: %d %s", code, body)
	}
}
