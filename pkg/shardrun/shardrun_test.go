package shardrun_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/recordwire"
	"github.com/netloadgen/netloadgen/pkg/runspec"
	"github.com/netloadgen/netloadgen/pkg/shardrec"
	"github.com/netloadgen/netloadgen/pkg/shardrun"
	"github.com/netloadgen/netloadgen/pkg/sutproxy/sutproxytest"
	"github.com/netloadgen/netloadgen/pkg/worker"
)

const token = "tok-shardrun-secret"

// fake is a coordinator's side of a distributed run's traffic
// (api/distributed_run.go), as pkg/daemon serves it: ready answers 202
// until every shard is ready, then 200 with one start on each worker's
// clock; records go through a shardrec.Receiver into a merged run. Hooks
// replace an answer to play a hostile or stopping coordinator.
type fake struct {
	t       *testing.T
	runID   string
	workers []string
	spec    string
	offsets map[string]time.Duration // each worker's clock minus ours

	mu      sync.Mutex
	readies map[string]api.WorkerReady
	start   time.Time
	merged  *loadgen.Run
	rcv     *shardrec.Receiver

	readyCalls, chunks atomic.Int64
	// anySession takes any session (a real registration's), not sess-<name>.
	anySession bool
	// onReady and onRecords, when set, answer instead (handled true).
	onReady   func(w http.ResponseWriter, worker string, r api.WorkerReady) bool
	onRecords func(w http.ResponseWriter, r *http.Request) bool
}

func newFake(t *testing.T, spec string, workers ...string) (*fake, *httptest.Server) {
	f := &fake{t: t, runID: "run-1", workers: workers, spec: spec, readies: map[string]api.WorkerReady{}, offsets: map[string]time.Duration{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/workers/{name}/runs/{id}/ready", f.ready)
	mux.HandleFunc("POST /v1/workers/{name}/runs/{id}/records", f.records)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return f, srv
}

// authorized wants the token and the worker's session, as the daemon does.
func (f *fake) authorized(w http.ResponseWriter, r *http.Request) bool {
	sess := r.Header.Get(api.WorkerSessionHeader)
	if r.Header.Get("Authorization") != "Bearer "+token || sess != "sess-"+r.PathValue("name") && !(f.anySession && sess != "") {
		writeJSON(w, http.StatusUnauthorized, api.ErrorBody{})
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *fake) ready(w http.ResponseWriter, r *http.Request) {
	f.readyCalls.Add(1)
	if !f.authorized(w, r) {
		return
	}
	name := r.PathValue("name")
	var body api.WorkerReady
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body); err != nil || r.PathValue("id") != f.runID {
		writeJSON(w, http.StatusBadRequest, api.ErrorBody{})
		return
	}
	if f.onReady != nil && f.onReady(w, name, body) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.readies[name] = body
	if body.Error != "" { // the run fails, naming the worker
		writeJSON(w, http.StatusConflict, api.ErrorBody{})
		return
	}
	if len(f.readies) < len(f.workers) {
		writeJSON(w, http.StatusAccepted, api.WorkerStart{RetryMs: 20})
		return
	}
	if f.merged == nil {
		f.mergeFrom(body)
		f.start = time.Now().Add(300 * time.Millisecond)
	}
	writeJSON(w, http.StatusOK, api.WorkerStart{StartNs: f.start.Add(f.offsets[name]).UnixNano()})
}

// mergeFrom builds the merged run from the spec and a ready's counts, as
// the coordinator does once every worker is ready.
func (f *fake) mergeFrom(ready api.WorkerReady) {
	var rs api.RunSpec
	if err := json.Unmarshal([]byte(f.spec), &rs); err != nil {
		f.t.Error(err)
		return
	}
	r, err := runspec.Build(rs, runspec.Env{})
	if err != nil {
		f.t.Error(err)
		return
	}
	m, err := loadgen.NewMergedRun(r.Spec.Settings, loadgen.QSLCounts{Total: ready.QSLTotalSampleCount, Performance: ready.QSLPerformanceSampleCount},
		len(f.workers), loadgen.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		f.t.Error(err)
		return
	}
	f.merged, f.rcv = m, shardrec.NewReceiver(m, f.runID, f.workers, recordwire.Limits{})
}

func (f *fake) records(w http.ResponseWriter, r *http.Request) {
	f.chunks.Add(1)
	if !f.authorized(w, r) {
		return
	}
	name := r.PathValue("name")
	if r.Header.Get("Content-Type") != api.RecordsMediaType {
		writeJSON(w, http.StatusUnsupportedMediaType, api.ErrorBody{})
		return
	}
	if f.onRecords != nil && f.onRecords(w, r) {
		return
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, api.MaxRecordsBody))
	f.mu.Lock()
	rcv := f.rcv
	f.mu.Unlock()
	if err != nil || rcv == nil {
		writeJSON(w, http.StatusBadRequest, api.ErrorBody{})
		return
	}
	if _, err := rcv.Receive(b); err != nil {
		f.t.Errorf("worker %s: chunk refused: %v", name, err)
		writeJSON(w, http.StatusBadRequest, api.ErrorBody{})
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// config is worker name's, linked to srv on its session.
func config(t *testing.T, srv *httptest.Server, name string) shardrun.Config {
	t.Helper()
	link, err := worker.NewLink(srv.URL, token, name, "sess-"+name)
	if err != nil {
		t.Fatal(err)
	}
	return shardrun.Config{Worker: name, Coordinator: link, Stream: shardrec.Options{Interval: 50 * time.Millisecond}}
}

func serverSpec(target string, qps, durMs int) string {
	return fmt.Sprintf(`{"target":%q,"model":"m","scenario":"Server","settings":{"target_qps":%d,"min_duration_ms":%d,"min_query_count":1,"target_latency_ms":100}}`,
		target, qps, durMs)
}

const model = "name=m,fn=echo,dims=16,max_batch=0,latency=constant:1ms,instances=8"

// TestShardsMerge: two workers carry out their shards of one run against a
// target; both report ready (with what they found, the same), get one
// start, and their streamed records merge into the whole trace, every
// sample answered, as the coordinator judges it.
func TestShardsMerge(t *testing.T) {
	p := sutproxytest.Start(t, model)
	spec := serverSpec("http://"+p.HTTPAddr(), 1000, 600)
	f, srv := newFake(t, spec, "w0", "w1")
	// w1's clock runs 250 ms ahead: its start is given on its own clock.
	f.offsets["w1"] = 250 * time.Millisecond
	errs := make(chan error, 2)
	for k, name := range f.workers {
		cfg := config(t, srv, name)
		cfg.Now = func() time.Time { return time.Now().Add(f.offsets[name]) }
		go func() {
			errs <- shardrun.Execute(t.Context(), cfg, api.WorkerAssignment{RunID: f.runID, Spec: json.RawMessage(spec), Shard: k, Shards: 2})
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("Execute: %v", err)
		}
	}
	if !f.rcv.Ended() {
		t.Fatal("a worker's last chunk never came")
	}
	r0, r1 := f.readies["w0"], f.readies["w1"]
	if r0 != r1 || r0.TraceQueries == 0 || r0.QSLTotalSampleCount == 0 || r0.Protocol != "http" || !strings.Contains(r0.SUTName, p.HTTPAddr()) {
		t.Errorf("readies differ or lack what was found: %+v, %+v", r0, r1)
	}
	res := f.merged.FinishMerged(f.rcv.End(loadgen.MergedEnd{Reason: loadgen.StopCompleted, SUTName: r0.SUTName}))
	if res.SamplesIssued != int64(r0.TraceQueries) || res.SamplesCompleted != res.SamplesIssued || res.SamplesFailed != 0 {
		t.Errorf("merged: issued %d, completed %d, failed %d; the trace has %d queries", res.SamplesIssued, res.SamplesCompleted, res.SamplesFailed, r0.TraceQueries)
	}
	if res.Validity != "VALID" {
		t.Errorf("merged validity %s: %v %v", res.Validity, res.InvalidReasons, res.Errors)
	}
}

// TestProbeFailurePostsReady: a worker that cannot reach the target posts
// ready with the error, naming the target, and sends no records.
func TestProbeFailurePostsReady(t *testing.T) {
	spec := serverSpec("http://127.0.0.1:1", 100, 100)
	f, srv := newFake(t, spec, "w0")
	err := shardrun.Execute(t.Context(), config(t, srv, "w0"), api.WorkerAssignment{RunID: f.runID, Spec: json.RawMessage(spec), Shards: 1})
	if err == nil {
		t.Fatal("Execute against a closed port: no error")
	}
	got := f.readies["w0"].Error
	if !strings.Contains(got, "127.0.0.1:1") || got != err.Error() {
		t.Errorf("ready's error %q, Execute's %q: want the same, naming the target", got, err)
	}
	if n := f.chunks.Load(); n != 0 {
		t.Errorf("%d record chunks sent by a shard that never started", n)
	}
}

// TestBadSpecPostsReady: a spec the worker cannot build is posted as
// ready's error, naming the field.
func TestBadSpecPostsReady(t *testing.T) {
	f, srv := newFake(t, "{}", "w0")
	for _, c := range []struct{ spec, want string }{
		{`{"model":"m"}`, "target"},
		{`{"target":"http://127.0.0.1:1","model":"m","bogus":1}`, "bogus"},
		{`not json`, "run spec"},
	} {
		err := shardrun.Execute(t.Context(), config(t, srv, "w0"), api.WorkerAssignment{RunID: f.runID, Spec: json.RawMessage(c.spec), Shards: 1})
		if !errors.Is(err, shardrun.ErrAssignment) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrAssignment naming %s", c.spec, err, c.want)
		}
		if got := f.readies["w0"].Error; got != err.Error() {
			t.Errorf("%s: ready's error %q", c.spec, got)
		}
	}
	err := shardrun.Execute(t.Context(), config(t, srv, "w0"), api.WorkerAssignment{RunID: f.runID, Spec: json.RawMessage(serverSpec("http://127.0.0.1:1", 1, 1)), Shard: 2, Shards: 2})
	if !errors.Is(err, shardrun.ErrAssignment) {
		t.Errorf("shard 2 of 2: %v", err)
	}
}

// TestConflictAtStart: a run the coordinator ended before the start (409
// to ready) ends the shard with worker.ErrRunEnded, nothing issued.
func TestConflictAtStart(t *testing.T) {
	p := sutproxytest.Start(t, model)
	spec := serverSpec("http://"+p.HTTPAddr(), 100, 100)
	f, srv := newFake(t, spec, "w0")
	f.onReady = func(w http.ResponseWriter, _ string, _ api.WorkerReady) bool {
		writeJSON(w, http.StatusConflict, api.ErrorBody{})
		return true
	}
	err := shardrun.Execute(t.Context(), config(t, srv, "w0"), api.WorkerAssignment{RunID: f.runID, Spec: json.RawMessage(spec), Shards: 1})
	if !errors.Is(err, worker.ErrRunEnded) {
		t.Errorf("Execute: %v, want worker.ErrRunEnded", err)
	}
	if n := f.readyCalls.Load(); n != 1 {
		t.Errorf("%d ready posts: the one 409 ends it (no error posted after)", n)
	}
	if n := f.chunks.Load(); n != 0 {
		t.Errorf("%d record chunks sent by a shard that never started", n)
	}
}

// TestConflictOnRecords: a 409 to a record chunk (the run ended: another
// worker was lost) stops the shard at once, long before its trace's end.
func TestConflictOnRecords(t *testing.T) {
	p := sutproxytest.Start(t, model)
	spec := serverSpec("http://"+p.HTTPAddr(), 200, 60_000)
	f, srv := newFake(t, spec, "w0")
	f.onRecords = func(w http.ResponseWriter, _ *http.Request) bool {
		writeJSON(w, http.StatusConflict, api.ErrorBody{})
		return true
	}
	err := shardrun.Execute(t.Context(), config(t, srv, "w0"), api.WorkerAssignment{RunID: f.runID, Spec: json.RawMessage(spec), Shards: 1})
	if !errors.Is(err, worker.ErrRunEnded) || !strings.Contains(err.Error(), "stopped") {
		t.Fatalf("Execute: %v, want the run stopped with worker.ErrRunEnded", err)
	}
	// One chunk refused, at most a few more racing the stop: not the
	// minute's worth a shard that went on would send.
	if n := f.chunks.Load(); n > 5 {
		t.Errorf("%d chunks sent after the 409", n)
	}
}

// TestStopByContext: the heartbeat's stop (the executor's ctx: another
// worker was lost, the run cancelled) ends the shard mid-run, as a local
// run's cancel does: it stops issuing, drains, and still sends its end, so
// that the coordinator accounts for every sample it issued (it waits for
// the ends of the workers it stopped).
func TestStopByContext(t *testing.T) {
	p := sutproxytest.Start(t, model)
	spec := serverSpec("http://"+p.HTTPAddr(), 200, 60_000)
	f, srv := newFake(t, spec, "w0")
	ctx, cancel := context.WithCancel(t.Context())
	var once sync.Once
	f.onRecords = func(http.ResponseWriter, *http.Request) bool {
		once.Do(cancel) // the first chunk: the run is going
		return false    // received as any chunk
	}
	if err := shardrun.Execute(ctx, config(t, srv, "w0"), api.WorkerAssignment{RunID: f.runID, Spec: json.RawMessage(spec), Shards: 1}); err != nil {
		t.Fatalf("Execute: %v, want the stopped shard's end delivered", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	end := f.rcv.Ends()[0]
	if end == nil {
		t.Fatal("no end after the stop")
	}
	// Stopped long before its minute; every sample it issued accounted.
	if end.StopReason != string(loadgen.StopCancelled) || end.Issued == 0 || end.Issued > 200 || end.Completed+end.Unanswered != end.Issued {
		t.Errorf("end %+v: want cancelled, a few samples issued, each answered or unanswered", end)
	}
}

// TestHostileReady: a coordinator whose answer to ready is not the
// protocol's (garbage, a redirect, an endless body, a start with no time or
// a year ahead, 202 for ever, no answer until stopped) ends the shard with
// an error saying so, before any load, and never hangs or panics it.
func TestHostileReady(t *testing.T) {
	p := sutproxytest.Start(t, model)
	spec := serverSpec("http://"+p.HTTPAddr(), 100, 100)
	year := time.Now().Add(365 * 24 * time.Hour).UnixNano()
	for _, c := range []struct {
		name   string
		answer func(w http.ResponseWriter, r *http.Request)
		want   string
	}{
		{"garbage", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200); _, _ = w.Write([]byte("<html>")) }, "not the JSON expected"},
		{"redirect", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://elsewhere/", http.StatusFound)
		}, "redirects"},
		{"endless", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(200)
			buf := make([]byte, 64<<10)
			for i := 0; i < 64; i++ { // 4 MiB, twice what a worker reads
				if _, err := w.Write(buf); err != nil {
					return
				}
			}
		}, "bytes"},
		{"no start", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, api.WorkerStart{}) }, "no start_ns"},
		{"a year ahead", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, api.WorkerStart{StartNs: year}) }, "ahead"},
		{"202 for ever", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, 202, api.WorkerStart{RetryMs: 1}) }, "no start from the coordinator"},
		{"teapot", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusTeapot, api.ErrorBody{}) }, "418"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, srv := newFake(t, spec, "w0")
			f.onReady = func(w http.ResponseWriter, _ string, _ api.WorkerReady) bool { c.answer(w, nil); return true }
			if c.name == "redirect" {
				f.onReady = func(w http.ResponseWriter, _ string, _ api.WorkerReady) bool {
					w.Header().Set("Location", "http://elsewhere/")
					w.WriteHeader(http.StatusFound)
					return true
				}
			}
			cfg := config(t, srv, "w0")
			cfg.MaxReadyWait = 200 * time.Millisecond
			err := shardrun.Execute(t.Context(), cfg, api.WorkerAssignment{RunID: f.runID, Spec: json.RawMessage(spec), Shards: 1})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Execute: %v, want an error saying %q", err, c.want)
			}
			if strings.Contains(fmt.Sprint(err), token) {
				t.Error("the token is in the error")
			}
			if n := f.chunks.Load(); n != 0 {
				t.Errorf("%d record chunks sent by a shard that never started", n)
			}
		})
	}
	t.Run("silent until stopped", func(t *testing.T) {
		f, srv := newFake(t, spec, "w0")
		ctx, cancel := context.WithCancel(t.Context())
		f.onReady = func(_ http.ResponseWriter, _ string, _ api.WorkerReady) bool {
			cancel() // the heartbeat's stop, while ready has no answer
			<-t.Context().Done()
			return true
		}
		defer srv.CloseClientConnections()
		err := shardrun.Execute(ctx, config(t, srv, "w0"), api.WorkerAssignment{RunID: f.runID, Spec: json.RawMessage(spec), Shards: 1})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Execute: %v, want context.Canceled", err)
		}
	})
}

// TestWorkerMetrics: the shard's live metrics are on the worker's own
// /metrics, labelled worker="<name>", and the run ends there as done.
func TestWorkerMetrics(t *testing.T) {
	p := sutproxytest.Start(t, model)
	spec := serverSpec("http://"+p.HTTPAddr(), 200, 200)
	f, srv := newFake(t, spec, "w0")
	w, err := worker.New(worker.Config{Coordinator: srv.URL, Name: "w0", Execute: func(context.Context, api.WorkerAssignment) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config(t, srv, "w0")
	cfg.Metrics = w.Metrics()
	if err := shardrun.Execute(t.Context(), cfg, api.WorkerAssignment{RunID: f.runID, Spec: json.RawMessage(spec), Shards: 1}); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	w.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body := rec.Body.String()
	want := fmt.Sprintf(`loadgend_samples_completed_total{worker="w0"} %d`, f.readies["w0"].TraceQueries)
	for _, s := range []string{want, `loadgend_runs_total{state="done",worker="w0"} 1`} {
		if !strings.Contains(body, s) {
			t.Errorf("the worker's /metrics lacks %s", s)
		}
	}
	if t.Failed() {
		t.Log(body)
	}
}

// TestConflictOnTheLastChunk: a 409 to the chunk with the shard's end (the
// coordinator ended the run meanwhile) is not resent: the shard ends with
// worker.ErrRunEnded at once.
func TestConflictOnTheLastChunk(t *testing.T) {
	p := sutproxytest.Start(t, model)
	spec := serverSpec("http://"+p.HTTPAddr(), 200, 200)
	f, srv := newFake(t, spec, "w0")
	var lasts atomic.Int64
	var scratch recordwire.Chunk
	var mu sync.Mutex
	f.onRecords = func(w http.ResponseWriter, r *http.Request) bool {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if recordwire.DecodeInto(&scratch, b, recordwire.Limits{}) == nil && scratch.End != nil {
			lasts.Add(1)
			writeJSON(w, http.StatusConflict, api.ErrorBody{})
			return true
		}
		w.WriteHeader(http.StatusNoContent)
		return true
	}
	cfg := config(t, srv, "w0")
	cfg.FinishTimeout = 2 * time.Second // 40 resends at the 50 ms interval, were it resent
	err := shardrun.Execute(t.Context(), cfg, api.WorkerAssignment{RunID: f.runID, Spec: json.RawMessage(spec), Shards: 1})
	if !errors.Is(err, worker.ErrRunEnded) {
		t.Errorf("Execute: %v, want worker.ErrRunEnded", err)
	}
	if n := lasts.Load(); n != 1 {
		t.Errorf("the last chunk was sent %d times, want once", n)
	}
}

// TestReadyRetriesAnOutage: a coordinator that answers ready 503 for a
// while (restarting behind its Service) is posted to again, and the shard
// runs once it answers.
func TestReadyRetriesAnOutage(t *testing.T) {
	p := sutproxytest.Start(t, model)
	spec := serverSpec("http://"+p.HTTPAddr(), 200, 100)
	f, srv := newFake(t, spec, "w0")
	var outage atomic.Int64
	f.onReady = func(w http.ResponseWriter, _ string, _ api.WorkerReady) bool {
		if outage.Add(1) > 2 {
			return false // the fake's own answer from the third post on
		}
		writeJSON(w, http.StatusServiceUnavailable, api.ErrorBody{})
		return true
	}
	if err := shardrun.Execute(t.Context(), config(t, srv, "w0"), api.WorkerAssignment{RunID: f.runID, Spec: json.RawMessage(spec), Shards: 1}); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if n := f.readyCalls.Load(); n != 3 {
		t.Errorf("%d ready posts, want 3 (two 503s, then the start)", n)
	}
	if !f.rcv.Ended() {
		t.Error("the shard's last chunk never came")
	}
}
