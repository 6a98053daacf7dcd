package shardrun_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/daemon"
	"github.com/netloadgen/netloadgen/pkg/shardrec"
	"github.com/netloadgen/netloadgen/pkg/shardrun"
	"github.com/netloadgen/netloadgen/pkg/sutproxy/sutproxytest"
	"github.com/netloadgen/netloadgen/pkg/worker"
)

// TestThroughTheWorkerLoop: a `loadgend worker`'s loop (pkg/worker)
// registered with a real daemon carries out its assignment with this
// executor, over its Link on the session it registered: ready and records
// reach the coordinator's run routes (a fake's, in front of the daemon,
// until the daemon serves them), the shard's records are whole, and the
// worker reports the assignment done.
func TestThroughTheWorkerLoop(t *testing.T) {
	svc, err := daemon.New(daemon.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), MaxQPS: 1000, MaxDuration: time.Hour,
		MaxInflight: 64, LogLevel: "error", DrainTimeout: time.Second, APIToken: token}, nil)
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
	p := sutproxytest.Start(t, model)
	spec := serverSpec("http://"+p.HTTPAddr(), 200, 200)
	f, _ := newFake(t, spec, "w0")
	f.anySession = true
	daemonURL, _ := url.Parse("http://" + svc.Addr())
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/workers/{name}/runs/{id}/ready", f.ready)
	mux.HandleFunc("POST /v1/workers/{name}/runs/{id}/records", f.records)
	// SetURL also sets the Host the daemon checks (LOADGEND_ALLOWED_HOSTS).
	mux.Handle("/", &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(daemonURL) }})
	front := httptest.NewServer(mux)
	t.Cleanup(front.Close)

	var w *worker.Worker
	w, err = worker.New(worker.Config{Coordinator: front.URL, Token: token, Name: "w0", Once: true,
		Execute: func(ctx context.Context, a api.WorkerAssignment) error {
			return shardrun.Execute(ctx, shardrun.Config{Worker: "w0", Coordinator: w.Link(), Metrics: w.Metrics(),
				Stream: shardrec.Options{Interval: 50 * time.Millisecond}}, a)
		}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- w.Run(t.Context()) }()
	crew, err := svc.Workers().Pick(t.Context(), daemon.PickRequest{RunID: f.runID, N: 1, Wait: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := crew.Assign("w0", api.WorkerAssignment{RunID: f.runID, Spec: json.RawMessage(spec), Shard: 0, Shards: 1}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("worker: %v", err)
	}
	if fin := <-crew.Finished(); fin.Name != "w0" || fin.Error != "" {
		t.Errorf("finished %+v", fin)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rcv == nil || !f.rcv.Ended() {
		t.Fatal("the shard's records never ended")
	}
	if got := f.readies["w0"]; got.TraceQueries == 0 || got.Error != "" {
		t.Errorf("ready %+v", got)
	}
}
