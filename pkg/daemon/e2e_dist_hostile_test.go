package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/recordwire"
	"github.com/netloadgen/netloadgen/pkg/runspec"
	"github.com/netloadgen/netloadgen/pkg/version"
)

// manualWorker drives the worker routes by hand, as a hostile or broken
// worker could: the test says what it sends.
type manualWorker struct {
	c             e2eClient
	name, session string
}

// registerManual registers name and beats for it until the test ends.
func registerManual(t *testing.T, c e2eClient, name string) *manualWorker {
	t.Helper()
	code, body := c.do(t, "POST", "/v1/workers", `{"name":"`+name+`","version":"`+version.String()+`"}`)
	var reg api.WorkerRegistered
	if code != http.StatusCreated || json.Unmarshal(body, &reg) != nil {
		t.Fatalf("register %s: %d %s", name, code, body)
	}
	m := &manualWorker{c: c, name: name, session: reg.Session}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Duration(reg.HeartbeatIntervalMs) * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				_, _ = m.send(ctx, "/heartbeat", "", nil)
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return m
}

func (m *manualWorker) send(ctx context.Context, path, ctype string, body []byte) (int, []byte) {
	req, err := http.NewRequestWithContext(ctx, "POST", m.c.base+"/v1/workers/"+m.name+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil
	}
	req.Header.Set("Authorization", "Bearer "+m.c.token)
	req.Header.Set(api.WorkerSessionHeader, m.session)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, b.Bytes()
}

func (m *manualWorker) post(t *testing.T, path, ctype string, body []byte) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	code, b := m.send(ctx, path, ctype, body)
	return code, string(b)
}

// work polls until an assignment with a spec comes, measuring the clock
// when told.
func (m *manualWorker) work(t *testing.T) api.WorkerAssignment {
	t.Helper()
	for range 20 {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", m.c.base+"/v1/workers/"+m.name+"/work?wait_ms=1000", nil)
		req.Header.Set("Authorization", "Bearer "+m.c.token)
		req.Header.Set(api.WorkerSessionHeader, m.session)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var a api.WorkerAssignment
		err = json.NewDecoder(resp.Body).Decode(&a)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || err != nil {
			continue
		}
		if a.SyncClock {
			m.syncClock(t)
		}
		if len(a.Spec) > 0 {
			return a
		}
	}
	t.Fatal("no assignment")
	return api.WorkerAssignment{}
}

func (m *manualWorker) syncClock(t *testing.T) {
	t.Helper()
	var prevT3 int64
	for seq := 0; seq <= 10; seq++ {
		req := api.WorkerClockRequest{Seq: seq, T0Ns: time.Now().UnixNano(), PrevT3Ns: prevT3, Final: seq == 10}
		b, _ := json.Marshal(req)
		code, body := m.post(t, "/clock", "application/json", b)
		prevT3 = time.Now().UnixNano()
		if code != http.StatusOK {
			t.Fatalf("clock %d: %d %s", seq, code, body)
		}
	}
}

// traceLen is the length of the trace a's spec builds, as a worker finds it.
func traceLen(t *testing.T, a api.WorkerAssignment) int {
	t.Helper()
	spec, err := api.DecodeRunSpec(bytes.NewReader(a.Spec), api.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := runspec.Build(spec, runspec.Env{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := loadgen.NewMergedRun(r.Spec.Settings, loadgen.QSLCounts{Total: 1024, Performance: 256}, a.Shards)
	if err != nil {
		t.Fatal(err)
	}
	return m.Trace().Len()
}

// TestDistributedHostileWorker: a worker's ready and records are refused,
// with a status and a message saying why, when they are not the run's in
// progress or its own, or do not decode; a worker whose trace disagrees
// fails the run naming it; one whose chunk is refused is lost, and the run
// ends INVALID naming it. Nothing of it crashes the coordinator.
func TestDistributedHostileWorker(t *testing.T) {
	_, c := distService(t, time.Second)
	mw := registerManual(t, c, "m-0")
	evil := registerManual(t, c, "zz-evil")
	for _, tc := range []struct {
		name, path, ctype, body string
		code                    int
		want                    string
	}{
		{"ready, no run", "/runs/r-nope/ready", "application/json", `{"qsl_total_sample_count":1,"qsl_performance_sample_count":1,"trace_queries":1}`, 409, "run_ended"},
		{"ready, unknown field", "/runs/r-nope/ready", "application/json", `{"trace_queries":1,"role":"admin"}`, 400, "role"},
		{"ready, no counts", "/runs/r-nope/ready", "application/json", `{}`, 400, "qsl_total_sample_count"},
		{"ready, not JSON", "/runs/r-nope/ready", "application/json", `<html>`, 400, "invalid_request"},
		{"records, no run", "/runs/r-nope/records", api.RecordsMediaType, "garbage", 409, "run_ended"},
		{"records as JSON", "/runs/r-nope/records", "application/json", `{}`, 415, api.RecordsMediaType},
		{"records untyped", "/runs/r-nope/records", "", "x", 415, "unsupported_media_type"},
	} {
		if code, body := evil.post(t, tc.path, tc.ctype, []byte(tc.body)); code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %s, want %d with %s", tc.name, code, body, tc.code, tc.want)
		}
	}
	stale := *evil
	stale.session = "not-a-session"
	if code, body := stale.post(t, "/runs/r-nope/ready", "application/json", []byte(`{"error":"x"}`)); code != http.StatusNotFound {
		t.Errorf("ready of another session: %d %s", code, body)
	}

	// A run whose one worker reports another trace: it fails naming it.
	id := c.submit(t, distSpec("http://127.0.0.1:9", 1, 100, 500, ""))
	a := mw.work(t)
	if a.RunID != id || a.Shards != 1 || a.Shard != 0 {
		t.Fatalf("assignment %+v for run %s", a, id)
	}
	if code, body := evil.post(t, "/runs/"+id+"/ready", "application/json", []byte(`{"qsl_total_sample_count":1,"qsl_performance_sample_count":1,"trace_queries":1}`)); code != http.StatusConflict || !strings.Contains(body, "not in run") {
		t.Errorf("a ready for a run the worker is not in: %d %s", code, body)
	}
	code, body := mw.post(t, "/runs/"+id+"/ready", "application/json", []byte(`{"qsl_total_sample_count":1024,"qsl_performance_sample_count":256,"trace_queries":3}`))
	if code != http.StatusConflict {
		t.Errorf("ready with another trace: %d %s", code, body)
	}
	st := c.waitEnded(t, id, 30*time.Second)
	if st.State != api.StateFailed || !strings.Contains(st.Error, "worker m-0 built a trace of 3 queries") {
		t.Fatalf("state %s, error %q", st.State, st.Error)
	}

	// A run whose worker sends garbage once started: refused (400), the
	// worker lost, the run INVALID naming it.
	id = c.submit(t, distSpec("http://127.0.0.1:9", 1, 100, 500, `,"worker_timeout_ms":5000`))
	a = mw.work(t)
	ready, _ := json.Marshal(api.WorkerReady{QSLTotalSampleCount: 1024, QSLPerformanceSampleCount: 256, TraceQueries: traceLen(t, a), SUTName: "manual"})
	var start api.WorkerStart
	for range 20 {
		code, body = mw.post(t, "/runs/"+id+"/ready", "application/json", ready)
		if code == http.StatusOK && json.Unmarshal([]byte(body), &start) == nil && start.StartNs > 0 {
			break
		}
		if code != http.StatusAccepted {
			t.Fatalf("ready: %d %s", code, body)
		}
	}
	if ahead := time.Duration(start.StartNs - time.Now().UnixNano()); ahead < 100*time.Millisecond || ahead > 5*time.Second {
		t.Errorf("start %v ahead", ahead)
	}
	// Another run's chunk, well formed, from a worker not in the run:
	// refused before it is read.
	other := recordwire.Append(nil, &recordwire.Chunk{RunID: "another-run", Worker: "m-0", Shards: 1})
	if code, body := evil.post(t, "/runs/"+id+"/records", api.RecordsMediaType, other); code != http.StatusConflict {
		t.Errorf("records of a worker not in the run: %d %s", code, body)
	}
	// Over the bound: read first, it would be 413; refused unread, 409.
	if code, body := evil.post(t, "/runs/"+id+"/records", api.RecordsMediaType, make([]byte, api.MaxRecordsBody+1)); code != http.StatusConflict {
		t.Errorf("%d bytes of records from a worker not in the run: %d %s, want 409 before the body is read", api.MaxRecordsBody+1, code, body)
	}
	// The worker's own: refused, and the worker with it (the run ends:
	// a later chunk is the ended run's, or refused as the worker's).
	if code, body := mw.post(t, "/runs/"+id+"/records", api.RecordsMediaType, other); code != http.StatusBadRequest || !strings.Contains(body, `another-run`) {
		t.Errorf("another run's chunk: %d %s, want 400 naming its run", code, body)
	}
	if code, body := mw.post(t, "/runs/"+id+"/records", api.RecordsMediaType, []byte("<html>502</html>")); code != http.StatusBadRequest && code != http.StatusConflict {
		t.Errorf("garbage after a refused chunk: %d %s", code, body)
	}
	st = c.waitEnded(t, id, 30*time.Second)
	if st.State != api.StateDone {
		t.Fatalf("state %s: %s", st.State, st.Error)
	}
	res := distResult(t, c, id)
	if res.Valid || len(res.InvalidReasons) == 0 || !strings.HasPrefix(res.InvalidReasons[0], "worker m-0 lost at ") {
		t.Errorf("validity %s, reasons %q", res.Validity, res.InvalidReasons)
	}
	if code, body := mw.post(t, "/runs/"+id+"/records", api.RecordsMediaType, other); code != http.StatusConflict {
		t.Errorf("records after the run: %d %s", code, body)
	}
}
