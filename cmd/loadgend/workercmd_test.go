package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/daemon"
	"github.com/netloadgen/netloadgen/pkg/shardrun"
)

func TestWorkerFlagsRefused(t *testing.T) {
	t.Setenv("LOADGEND_COORDINATOR", "")
	t.Setenv("LOADGEND_LISTEN", "127.0.0.1:0")
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--name", "w"}, nil, "--coordinator: worker configuration: no coordinator URL"},
		{[]string{"--coordinator", "ftp://x", "--name", "w"}, nil, "--coordinator: worker configuration: coordinator URL \"ftp://x\": want http:// or https://"},
		{[]string{"--coordinator", "http://u:pw@x:1", "--name", "w"}, nil, "user info"},
		{[]string{"--coordinator", "http://x:1", "--name", "Bad_Name"}, nil, "--name: "},
		{[]string{"--coordinator", "http://x:1", "--nme", "w"}, nil, "--name"},
		{[]string{"--coordinator", "http://x:1", "--name", "w", "extra"}, nil, `takes no arguments, got "extra"`},
		{[]string{"--coordinator", "http://x:1", "--name", "w"}, map[string]string{"LOADGEND_LISTEN": "nope"}, `LOADGEND_LISTEN "nope"`},
		{[]string{"--coordinator", "http://x:1", "--name", "w"}, map[string]string{"LOADGEND_LOG_LEVEL": "loud"}, `LOADGEND_LOG_LEVEL "loud"`},
		{[]string{"--coordinator", "http://x:1", "--name", "w"}, map[string]string{"LOADGEND_TEST_CLOCK_SHIFT": "soon"}, `LOADGEND_TEST_CLOCK_SHIFT "soon"`},
	} {
		for k, v := range tc.env {
			t.Setenv(k, v)
		}
		inv := runCmd(workerCommand, tc.args...)
		if inv.code != exitError || !strings.Contains(inv.stderr, tc.want) || strings.Contains(inv.stderr, "pw@") {
			t.Errorf("%v: %v, want exit 2 with %q", tc.args, inv, tc.want)
		}
		for k := range tc.env {
			t.Setenv(k, "")
		}
	}
	if inv := runCmd(workerCommand, "--help"); inv.code != exitValid || !strings.Contains(inv.stdout, "--coordinator URL") || !strings.Contains(inv.stdout, "LOADGEND_TEST_CLOCK_SHIFT") {
		t.Errorf("--help: %v", inv)
	}
}

// TestWorkerOnce: `loadgend worker --once`, configured as a Kubernetes Job
// would (coordinator and token from the environment), registers, is
// measured with its test clock shift, takes one run and exits 0.
func TestWorkerOnce(t *testing.T) {
	const token = "worker-once-token-5c1d"
	svc, err := daemon.New(daemon.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), MaxQPS: 100, MaxDuration: time.Hour,
		MaxInflight: 8, LogLevel: "info", APIToken: token}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = svc.Shutdown(ctx)
	})
	t.Setenv("LOADGEND_COORDINATOR", "http://"+svc.Addr())
	t.Setenv("LOADGEND_API_TOKEN", token)
	t.Setenv("LOADGEND_LISTEN", "127.0.0.1:0")
	t.Setenv("LOADGEND_TEST_CLOCK_SHIFT", "250ms")
	done := make(chan invocation, 1)
	go func() { done <- runCmd(workerCommand, "--name", "job-1", "--once") }()
	crew, err := svc.Workers().Pick(context.Background(), daemon.PickRequest{RunID: "r-once", N: 1, Wait: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	est, err := crew.SyncClocks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := (est["job-1"].Offset - 250*time.Millisecond).Abs(); d > 500*time.Microsecond {
		t.Errorf("offset %v ± %v, want 250ms within 0.5ms", est["job-1"].Offset, est["job-1"].Uncertainty)
	}
	if err := crew.Assign("job-1", api.WorkerAssignment{RunID: "r-once", Spec: json.RawMessage(`{}`), Shards: 1}); err != nil {
		t.Fatal(err)
	}
	inv := <-done
	if inv.code != exitValid {
		t.Fatalf("worker --once: %v", inv)
	}
	if strings.Contains(inv.stderr, token) {
		t.Error("the token is in the worker's log")
	}
	// The executor is pkg/shardrun's: a spec without a target is refused
	// before anything is sent, naming the field.
	if fin := <-crew.Finished(); fin.RunID != "r-once" || !strings.Contains(fin.Error, shardrun.ErrAssignment.Error()) || !strings.Contains(fin.Error, "target") {
		t.Errorf("finished %+v", fin)
	}
}
