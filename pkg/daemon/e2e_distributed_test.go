package daemon_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/daemon"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/shardrun"
	"github.com/netloadgen/netloadgen/pkg/worker"
)

const distToken = "dist-e2e-token-5a1c"

// distService is a coordinator for distributed runs: a token, and the
// given worker timeout.
func distService(t *testing.T, workerTimeout time.Duration) (*daemon.Service, e2eClient) {
	t.Helper()
	return e2eService(t, func(cfg *daemon.Config) {
		cfg.APIToken = distToken
		cfg.WorkerTimeout = workerTimeout
		cfg.DrainTimeout = 2 * time.Second
	})
}

// startWorker runs an in-process worker (pkg/worker's loop with the
// executor loadgend worker uses, pkg/shardrun) against coordinator; it stops
// at the test's end.
func startWorker(t *testing.T, coordinator, name string) {
	t.Helper()
	var w *worker.Worker
	cfg := worker.Config{Coordinator: coordinator, Token: distToken, Name: name, PollWait: time.Second,
		Log: slog.New(slog.DiscardHandler)}
	cfg.Execute = func(ctx context.Context, a api.WorkerAssignment) error {
		return shardrun.Execute(ctx, shardrun.Config{Worker: name, Coordinator: w.Link(), Now: time.Now, Log: cfg.Log}, a)
	}
	var err error
	if w, err = worker.New(cfg); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = w.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// waitIdle waits until the coordinator lists names idle (registered and
// measured).
func waitIdle(t *testing.T, svc *daemon.Service, names ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	// A pick of them all, released at once: Pick waits on the registry's
	// changes, not on a timer.
	crew, err := svc.Workers().Pick(ctx, daemon.PickRequest{RunID: "wait-idle", N: len(names), Wait: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if got := crew.Names(); !slices.Equal(got, names) {
		t.Fatalf("idle workers %v, want %v", got, names)
	}
	crew.Release()
}

// distSpec is a Server run of the identity model over workers.
func distSpec(target string, workers, qps, durationMs int, extra string) string {
	return fmt.Sprintf(`{"target":%q,"model":"identity","scenario":"Server","workers":%d,"keep_samples":true%s,
		"settings":{"target_qps":%d,"min_duration_ms":%d,"min_query_count":1,"target_latency_ms":100,"latency_percentile":0.9}}`,
		target, workers, extra, qps, durationMs)
}

func distResult(t *testing.T, c e2eClient, id string) *loadgen.Result {
	t.Helper()
	code, b := c.do(t, "GET", "/v1/runs/"+id+"/result", "")
	var res loadgen.Result
	if code != http.StatusOK || json.Unmarshal(b, &res) != nil {
		t.Fatalf("result: %d %s", code, b)
	}
	return &res
}

// TestDistributedRun: two workers carry out one Server run; it ends VALID
// with one set of files, result.json's workers[] filled, samples.jsonl's
// lines naming the worker of each sample in shard order, and the workers
// idle again.
func TestDistributedRun(t *testing.T) {
	sut := e2eSUT(t)
	svc, c := distService(t, time.Second)
	startWorker(t, c.base, "w-a")
	startWorker(t, c.base, "w-b")
	waitIdle(t, svc, "w-a", "w-b")
	id := c.submit(t, distSpec(sut, 2, 300, 1000, ""))
	st := c.waitEnded(t, id, 60*time.Second)
	if st.State != api.StateDone {
		t.Fatalf("state %s: %s", st.State, st.Error)
	}
	res := distResult(t, c, id)
	if !res.Valid || res.SamplesIssued < 100 || res.SamplesCompleted != res.SamplesIssued {
		t.Errorf("validity %s (%v), issued %d, completed %d", res.Validity, res.InvalidReasons, res.SamplesIssued, res.SamplesCompleted)
	}
	if len(res.Workers) != 2 {
		t.Fatalf("workers %+v", res.Workers)
	}
	var sum int64
	for k, w := range res.Workers {
		if w.Name != []string{"w-a", "w-b"}[k] || w.Shard != k || w.SamplesIssued == 0 || w.SamplesCompleted != w.SamplesIssued || w.Lost ||
			w.ClockUncertaintyNs <= 0 || w.ClockUncertaintyNs > int64(time.Millisecond) {
			t.Errorf("worker %d: %+v", k, w)
		}
		sum += w.SamplesIssued
	}
	if sum != res.SamplesIssued {
		t.Errorf("the workers issued %d samples, the run %d", sum, res.SamplesIssued)
	}
	for _, f := range []string{"mlperf_log_summary.txt", "mlperf_log_detail.txt", "result.json", runlog.SamplesJSONLFile} {
		if !slices.Contains(st.Files, f) {
			t.Errorf("files %v lack %s", st.Files, f)
		}
	}
	code, body := c.do(t, "GET", "/v1/runs/"+id+"/samples.jsonl", "")
	if code != http.StatusOK {
		t.Fatalf("samples.jsonl: %d", code)
	}
	n := int64(0)
	for sc := bufio.NewScanner(bytes.NewReader(body)); sc.Scan(); n++ {
		var l struct {
			Sample int64
			Worker string
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.Sample != n || l.Worker != []string{"w-a", "w-b"}[n%2] {
			t.Fatalf("line %d: %s (%v)", n, sc.Bytes(), err)
		}
	}
	if n != res.SamplesIssued {
		t.Errorf("%d lines, %d samples", n, res.SamplesIssued)
	}
	// The coordinator's live metrics counted every worker's samples.
	code, body = c.do(t, "GET", "/metrics", "")
	if want := fmt.Sprintf("loadgend_samples_issued_total %d\n", res.SamplesIssued); code != http.StatusOK || !strings.Contains(string(body), want) {
		t.Errorf("/metrics lacks %q", want)
	}
	waitIdle(t, svc, "w-a", "w-b")
}

// TestDistributedClocksTooUncertain: a run refuses to start when a
// worker's clock is known less well than max_clock_uncertainty_ms,
// naming the worker and its uncertainty.
func TestDistributedClocksTooUncertain(t *testing.T) {
	svc, c := distService(t, time.Second)
	startWorker(t, c.base, "w-a")
	waitIdle(t, svc, "w-a")
	id := c.submit(t, distSpec("http://127.0.0.1:9", 1, 100, 500, `,"max_clock_uncertainty_ms":0.000001`))
	st := c.waitEnded(t, id, 30*time.Second)
	if st.State != api.StateFailed || !strings.Contains(st.Error, "worker w-a: offset") || !strings.Contains(st.Error, "max_clock_uncertainty_ms") {
		t.Fatalf("state %s, error %q", st.State, st.Error)
	}
	waitIdle(t, svc, "w-a")
}

// TestDistributedReadyError: workers that cannot reach the target fail the
// run at their probe, before any load, naming a worker.
func TestDistributedReadyError(t *testing.T) {
	svc, c := distService(t, time.Second)
	startWorker(t, c.base, "w-a")
	startWorker(t, c.base, "w-b")
	waitIdle(t, svc, "w-a", "w-b")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now: connection refused
	id := c.submit(t, distSpec(dead, 2, 100, 500, ""))
	st := c.waitEnded(t, id, 60*time.Second)
	if st.State != api.StateFailed || !strings.Contains(st.Error, "could not prepare") ||
		!(strings.Contains(st.Error, "worker w-a") || strings.Contains(st.Error, "worker w-b")) {
		t.Fatalf("state %s, error %q", st.State, st.Error)
	}
	waitIdle(t, svc, "w-a", "w-b")
}

// cutProxy forwards HTTP to a coordinator until cut: then its connections
// and its listener close, as a partition or a kill -9 looks from the
// coordinator.
type cutProxy struct{ srv *httptest.Server }

func startCutProxy(t *testing.T, to string) *cutProxy {
	t.Helper()
	u, err := url.Parse(to)
	if err != nil {
		t.Fatal(err)
	}
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(u) }}
	p := &cutProxy{srv: httptest.NewServer(rp)}
	t.Cleanup(p.Cut)
	return p
}

func (p *cutProxy) URL() string { return p.srv.URL }

func (p *cutProxy) Cut() {
	p.srv.CloseClientConnections()
	p.srv.Close()
}

// TestDistributedWorkerLost: one of three workers is cut off mid-run; the
// run ends INVALID naming it within the drain timeout plus the worker
// timeout plus 2 s, every file written, and the daemon takes the next run.
func TestDistributedWorkerLost(t *testing.T) {
	sut := e2eSUT(t)
	const timeout = 500 * time.Millisecond
	svc, c := distService(t, timeout)
	startWorker(t, c.base, "w-a")
	startWorker(t, c.base, "w-b")
	proxy := startCutProxy(t, c.base)
	startWorker(t, proxy.URL(), "w-c")
	waitIdle(t, svc, "w-a", "w-b", "w-c")
	id := c.submit(t, distSpec(sut, 3, 300, 20_000, `,"worker_timeout_ms":500`))
	c.waitProgress(t, id, 30*time.Second, func(p api.Progress) bool { return p.Issued > 150 })
	proxy.Cut()
	cut := time.Now()
	st := c.waitEnded(t, id, 30*time.Second)
	if took, bound := time.Since(cut), 2*time.Second+timeout+2*time.Second; took > bound {
		t.Errorf("the run ended %v after the cut, over %v", took, bound)
	} else {
		t.Logf("the run ended %v after the cut (bound %v)", took.Round(time.Millisecond), bound)
	}
	if st.State != api.StateDone {
		t.Fatalf("state %s: %s", st.State, st.Error)
	}
	res := distResult(t, c, id)
	if res.Valid || len(res.InvalidReasons) == 0 || !strings.HasPrefix(res.InvalidReasons[0], "worker w-c lost at ") ||
		!strings.Contains(res.InvalidReasons[0], "samples unaccounted") || res.EndReason != loadgen.StopWorkerLost {
		t.Fatalf("validity %s, end %s, reasons %q", res.Validity, res.EndReason, res.InvalidReasons)
	}
	// The two left were stopped: not lost (whether their ends came
	// depends on the worker's executor).
	if len(res.Workers) != 3 || !res.Workers[2].Lost || res.Workers[0].Lost || res.Workers[1].Lost {
		t.Errorf("workers %+v", res.Workers)
	}
	for _, f := range []string{"mlperf_log_summary.txt", "mlperf_log_detail.txt", "result.json"} {
		if !slices.Contains(st.Files, f) {
			t.Errorf("files %v lack %s", st.Files, f)
		}
	}
	// The next run: on the two left.
	next := c.submit(t, distSpec(sut, 2, 100, 300, ""))
	if st := c.waitEnded(t, next, 60*time.Second); st.State != api.StateDone {
		t.Fatalf("the next run: %s %s", st.State, st.Error)
	}
}

// TestDistributedCancel: a distributed run cancelled mid-run stops its
// workers, ends cancelled with its files written, and frees the workers.
func TestDistributedCancel(t *testing.T) {
	sut := e2eSUT(t)
	svc, c := distService(t, time.Second)
	startWorker(t, c.base, "w-a")
	startWorker(t, c.base, "w-b")
	waitIdle(t, svc, "w-a", "w-b")
	id := c.submit(t, distSpec(sut, 2, 200, 60_000, ""))
	p := c.waitProgress(t, id, 30*time.Second, func(p api.Progress) bool { return p.Issued > 50 })
	if p.ElapsedS <= 0 || p.ElapsedS > 60 || p.PlannedQueries == 0 {
		t.Errorf("progress %+v: the merged run's elapsed time counts from its workers' start", p)
	}
	if code, b := c.do(t, "POST", "/v1/runs/"+id+"/cancel", ""); code != http.StatusAccepted && code != http.StatusOK {
		t.Fatalf("cancel: %d %s", code, b)
	}
	st := c.waitEnded(t, id, 30*time.Second)
	if st.State != api.StateCancelled || !slices.Contains(st.Files, "result.json") {
		t.Fatalf("state %s, files %v, error %q", st.State, st.Files, st.Error)
	}
	res := distResult(t, c, id)
	if res.EndReason != loadgen.StopCancelled || len(res.Workers) != 2 || res.SamplesIssued < 50 || res.Workers[0].Lost || res.Workers[1].Lost {
		t.Errorf("end %s, workers %+v, issued %d", res.EndReason, res.Workers, res.SamplesIssued)
	}
	waitIdle(t, svc, "w-a", "w-b")
}
