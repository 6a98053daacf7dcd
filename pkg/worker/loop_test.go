package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/daemon"
	"github.com/netloadgen/netloadgen/pkg/worker"
)

const token = "s3cret-worker-token"

// coordinator starts an in-process loadgend on a free loopback port (or on
// addr) with a token.
func coordinator(t *testing.T, addr string, edit func(*daemon.Config)) *daemon.Service {
	t.Helper()
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	cfg := daemon.Config{Listen: addr, DataDir: t.TempDir(), MaxQPS: 1000, MaxDuration: time.Hour,
		MaxInflight: 64, LogLevel: "info", DrainTimeout: time.Second, APIToken: token}
	if edit != nil {
		edit(&cfg)
	}
	svc, err := daemon.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop(t, svc) })
	return svc
}

func stop(t *testing.T, svc *daemon.Service) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := svc.Shutdown(ctx); err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

// logBuf collects a worker's log, to check the token never reaches it.
type logBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// runWorker runs a worker until the test ends; its Run's error arrives on
// the channel.
func runWorker(t *testing.T, cfg worker.Config) (<-chan error, context.CancelFunc, *logBuf) {
	t.Helper()
	logs := &logBuf{}
	if cfg.Token == "" {
		cfg.Token = token
	}
	cfg.Log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	w, err := worker.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		done <- w.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-exited
		if strings.Contains(logs.String(), token) {
			t.Error("the token is in the worker's log")
		}
	})
	return done, cancel, logs
}

func pick(t *testing.T, svc *daemon.Service, run string, n int) *daemon.Crew {
	t.Helper()
	crew, err := svc.Workers().Pick(context.Background(), daemon.PickRequest{RunID: run, N: n, Wait: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return crew
}

var spec = json.RawMessage(`{"target":"http://127.0.0.1:1","model":"m"}`)

// TestOnceRunsOneAssignment: a --once worker registers, takes one run,
// reports its end and returns nil.
func TestOnceRunsOneAssignment(t *testing.T) {
	svc := coordinator(t, "", func(c *daemon.Config) { c.WorkerTimeout = 500 * time.Millisecond })
	got := make(chan api.WorkerAssignment, 2)
	done, _, _ := runWorker(t, worker.Config{Coordinator: "http://" + svc.Addr(), Name: "once", Once: true,
		Execute: func(_ context.Context, a api.WorkerAssignment) error { got <- a; return errors.New("target refused") }})
	crew := pick(t, svc, "run-1", 1)
	want := api.WorkerAssignment{RunID: "run-1", Spec: spec, Shard: 0, Shards: 1, StartNs: 123}
	if err := crew.Assign("once", want); err != nil {
		t.Fatal(err)
	}
	a := <-got
	var gotSpec, wantSpec any
	_ = json.Unmarshal(a.Spec, &gotSpec)
	_ = json.Unmarshal(spec, &wantSpec)
	if a.RunID != "run-1" || a.StartNs != 123 || !reflect.DeepEqual(gotSpec, wantSpec) {
		t.Errorf("executed %+v", a)
	}
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	fin := <-crew.Finished()
	if fin.Name != "once" || fin.RunID != "run-1" || fin.Error != "target refused" {
		t.Errorf("finished %+v", fin)
	}
	// Gone without a word: lost after the timeout, which the crew hears.
	lost := <-crew.Lost()
	if lost.Name != "once" {
		t.Errorf("lost %+v", lost)
	}
}

// TestClockShift: a worker whose clock is 250 ms ahead is measured within
// 0.5 ms of it (issue 29), at registration and when told to.
func TestClockShift(t *testing.T) {
	svc := coordinator(t, "", nil)
	const shift = 250 * time.Millisecond
	runWorker(t, worker.Config{Coordinator: "http://" + svc.Addr(), Name: "shifted",
		Now:     func() time.Time { return time.Now().Add(shift) },
		Execute: func(context.Context, api.WorkerAssignment) error { return nil }})
	crew := pick(t, svc, "run-c", 1)
	defer crew.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	est, err := crew.SyncClocks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e := est["shifted"]
	if d := (e.Offset - shift).Abs(); d > 500*time.Microsecond {
		t.Errorf("offset %v, %v from the shift (uncertainty %v)", e.Offset, d, e.Uncertainty)
	}
	if e.Exchanges < 8 || e.Uncertainty <= 0 {
		t.Errorf("estimate %+v", e)
	}
	if err := crew.CheckClocks(est, time.Second); err != nil {
		t.Errorf("check: %v", err)
	}
	t.Logf("offset %v ± %v", e.Offset, e.Uncertainty)
}

// TestVersionRefused: a worker of another version stops with both versions.
func TestVersionRefused(t *testing.T) {
	svc := coordinator(t, "", nil)
	done, _, _ := runWorker(t, worker.Config{Coordinator: "http://" + svc.Addr(), Name: "old", Version: "v0.0.1",
		Execute: func(context.Context, api.WorkerAssignment) error { return nil }})
	err := <-done
	if !errors.Is(err, worker.ErrRefused) || !strings.Contains(err.Error(), "v0.0.1") || !strings.Contains(err.Error(), "coordinator is version") {
		t.Errorf("Run: %v", err)
	}
}

// TestWrongToken: refused for good, without the token in the error.
func TestWrongToken(t *testing.T) {
	svc := coordinator(t, "", nil)
	done, _, _ := runWorker(t, worker.Config{Coordinator: "http://" + svc.Addr(), Name: "w", Token: "wrong-token-value",
		Execute: func(context.Context, api.WorkerAssignment) error { return nil }})
	err := <-done
	if !errors.Is(err, worker.ErrRefused) || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "wrong-token-value") {
		t.Errorf("Run: %v", err)
	}
}

// TestReregistersAfterRestart: the coordinator restarts on its address;
// the worker registers with the new one.
func TestReregistersAfterRestart(t *testing.T) {
	first := coordinator(t, "", nil)
	addr := first.Addr()
	runWorker(t, worker.Config{Coordinator: "http://" + addr, Name: "phoenix",
		Execute: func(context.Context, api.WorkerAssignment) error { return nil }})
	pick(t, first, "a", 1).Release()
	stop(t, first)
	second := coordinator(t, addr, nil)
	pick(t, second, "b", 1).Release()
}

// TestStopsOnCancel: cancelling the worker's context ends Run with nil, and
// the coordinator loses it after its timeout.
func TestStopsOnCancel(t *testing.T) {
	svc := coordinator(t, "", func(c *daemon.Config) { c.WorkerTimeout = 300 * time.Millisecond })
	done, cancel, _ := runWorker(t, worker.Config{Coordinator: "http://" + svc.Addr(), Name: "quitter",
		Execute: func(context.Context, api.WorkerAssignment) error { return nil }})
	crew := pick(t, svc, "r", 1)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	if l := <-crew.Lost(); l.Name != "quitter" {
		t.Errorf("lost %+v", l)
	}
}

// TestMetricsAndHealth: the worker's own /metrics carry worker="name".
func TestMetricsAndHealth(t *testing.T) {
	w, err := worker.New(worker.Config{Coordinator: "http://127.0.0.1:1", Name: "m-1",
		Execute: func(context.Context, api.WorkerAssignment) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: w.Handler()}
	go srv.Serve(ln)
	defer srv.Close()
	get := func(path string) string {
		resp, err := http.Get("http://" + ln.Addr().String() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	m := get("/metrics")
	// The worker's own, and the daemon's run metrics, labelled.
	for _, want := range []string{`loadgend_worker_registered{worker="m-1"} 0`, `loadgend_achieved_samples_per_second{worker="m-1"} 0`} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s:\n%s", want, m)
		}
	}
	if h := get("/healthz"); !strings.Contains(h, "ok") {
		t.Errorf("healthz: %s", h)
	}
}

func TestConfigRefused(t *testing.T) {
	exec := func(context.Context, api.WorkerAssignment) error { return nil }
	for _, tc := range []struct {
		cfg  worker.Config
		want string
	}{
		{worker.Config{Name: "w", Execute: exec}, "no coordinator URL"},
		{worker.Config{Coordinator: "ftp://x", Name: "w", Execute: exec}, "want http:// or https://"},
		{worker.Config{Coordinator: "http://", Name: "w", Execute: exec}, "has no host"},
		{worker.Config{Coordinator: "http://u:p@x", Name: "w", Execute: exec}, "user info"},
		{worker.Config{Coordinator: "http://x?a=1", Name: "w", Execute: exec}, "query"},
		{worker.Config{Coordinator: "http://x", Name: "Bad_Name", Execute: exec}, "name:"},
		{worker.Config{Coordinator: "http://x", Name: "w"}, "no executor"},
	} {
		_, err := worker.New(tc.cfg)
		if !errors.Is(err, worker.ErrConfig) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), ":p@") {
			t.Errorf("%+v: %v, want %q", tc.cfg.Coordinator, err, tc.want)
		}
	}
}

// TestCrewStopEndsTheAssignment: Crew.Stop reaches a worker mid-run through
// its heartbeat's answer; its executor's context ends and it reports the
// end.
func TestCrewStopEndsTheAssignment(t *testing.T) {
	svc := coordinator(t, "", func(c *daemon.Config) { c.WorkerTimeout = 400 * time.Millisecond })
	started := make(chan struct{})
	runWorker(t, worker.Config{Coordinator: "http://" + svc.Addr(), Name: "stoppable",
		Execute: func(ctx context.Context, a api.WorkerAssignment) error {
			close(started)
			<-ctx.Done()
			return ctx.Err()
		}})
	crew := pick(t, svc, "long", 1)
	if err := crew.Assign("stoppable", api.WorkerAssignment{RunID: "long", Spec: spec, Shards: 1}); err != nil {
		t.Fatal(err)
	}
	<-started
	crew.Stop()
	fin := <-crew.Finished()
	if fin.Name != "stoppable" || !strings.Contains(fin.Error, "context canceled") {
		t.Errorf("finished %+v", fin)
	}
	crew.Release()
	// Idle again: a new pick takes it.
	pick(t, svc, "next", 1).Release()
}
