//go:build linux

package sut

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/httpclient"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// inferServer is a KServe v2 HTTP endpoint on 127.0.0.1 that decodes each
// request and records its batch size and how many were in flight at once.
type inferServer struct {
	url    string
	status int // answer with this status instead of 200 when set
	// dropEvery, when set (under mu), makes every dropEvery-th request
	// read (from 1) end with its connection closed, unanswered.
	dropEvery int
	requests  int
	dropped   int

	mu       sync.Mutex
	batches  []int64
	inflight int
	maxSeen  int
}

func startInferServer(t *testing.T) *inferServer { return startInferServerStatus(t, 0) }

func startInferServerStatus(t *testing.T, status int) *inferServer {
	t.Helper()
	s := &inferServer{status: status}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: s}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	s.url = "http://" + ln.Addr().String()
	return s
}

func (s *inferServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.inflight++
	s.maxSeen = max(s.maxSeen, s.inflight)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inflight--
		s.mu.Unlock()
	}()
	body, _ := io.ReadAll(r.Body)
	if s.drop() {
		if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
			c.Close()
		}
		return
	}
	jl, _ := strconv.Atoi(r.Header.Get(kserve.HeaderInferenceContentLength))
	req, err := kserve.DecodeInferRequest(body, jl)
	if err != nil {
		http.Error(w, `{"error":"`+err.Error()+`"}`, http.StatusBadRequest)
		return
	}
	// Let other requests arrive, so a cap on them is visible.
	time.Sleep(time.Millisecond)
	s.mu.Lock()
	s.batches = append(s.batches, req.Inputs[0].Shape[0])
	s.mu.Unlock()
	if s.status != 0 {
		w.WriteHeader(s.status)
		io.WriteString(w, `{"error":"busy"}`)
		return
	}
	resp := `{"model_name":"m","outputs":[]}`
	w.Header().Set(kserve.HeaderInferenceContentLength, strconv.Itoa(len(resp)))
	io.WriteString(w, resp)
}

// drop counts a request read and says whether to drop its connection.
func (s *inferServer) drop() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	if s.dropEvery > 0 && s.requests%s.dropEvery == 0 {
		s.dropped++
		return true
	}
	return false
}

func (s *inferServer) counts() (requests, dropped int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests, s.dropped
}

func (s *inferServer) seen() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int64(nil), s.batches...)
}

func newLoopSUT(t *testing.T, s *inferServer, o Options, conns int) *Loop {
	t.Helper()
	enc, err := httpclient.New(s.url)
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewLoop(enc, library(t, true), o, LoopOptions{Addr: s.url[len("http://"):], MaxConns: conns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// pollAll polls until c has every sample, bounded by ten seconds.
func pollAll(t *testing.T, l *Loop, c *collector) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for {
		select {
		case <-c.all:
			return
		default:
		}
		if ctx.Err() != nil {
			t.Fatalf("%d of %d samples answered after 10 s", c.count, c.want)
		}
		l.PollUntil(ctx, time.Now().Add(time.Second))
	}
}

func TestLoopBatchedQueryIsOneRequest(t *testing.T) {
	s := startInferServer(t)
	l := newLoopSUT(t, s, Options{Model: "m", MaxBatch: 8, WholeQueries: true}, 4)
	c := newCollector(3)
	l.IssueQuery(t.Context(), loadgen.Query{ID: 3, Samples: []int{5, 6, 7}}, c.done)
	pollAll(t, l, c)
	if got := s.seen(); fmt.Sprint(got) != "[3]" {
		t.Fatalf("batches %v, want one request of 3", got)
	}
	if len(c.got) != 1 || c.got[0].Query != 3 || c.got[0].First != 0 || c.got[0].Count != 3 || c.got[0].Err != nil {
		t.Errorf("completions %+v, want one covering the query", c.got)
	}
}

func TestLoopOfflineSplitRespectsInflightCap(t *testing.T) {
	s := startInferServer(t)
	l := newLoopSUT(t, s, Options{Model: "m", MaxBatch: 8, BatchSize: 4, MaxInflight: 3}, 16)
	samples := make([]int, 50)
	for i := range samples {
		samples[i] = i % 64
	}
	c := newCollector(50)
	l.IssueQuery(t.Context(), loadgen.Query{Samples: samples}, c.done)
	pollAll(t, l, c)
	s.mu.Lock()
	maxSeen := s.maxSeen
	s.mu.Unlock()
	if maxSeen > 3 {
		t.Errorf("%d requests in flight at once, cap is 3", maxSeen)
	}
	if got := s.seen(); len(got) != 13 {
		t.Errorf("%d requests, want 13 (12 of 4, one of 2)", len(got))
	}
	sort.Slice(c.got, func(i, j int) bool { return c.got[i].First < c.got[j].First })
	next := 0
	for _, g := range c.got {
		if g.First != next || g.Count > 4 || g.Err != nil {
			t.Fatalf("completions %+v do not tile the query in batches of at most 4", c.got)
		}
		next += g.Count
	}
}

func TestLoopCancelledOfflineFailsTheRest(t *testing.T) {
	s := startInferServer(t)
	l := newLoopSUT(t, s, Options{Model: "m", MaxBatch: 8, BatchSize: 1, MaxInflight: 1}, 2)
	ctx, cancel := context.WithCancel(t.Context())
	c := newCollector(10)
	samples := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	l.IssueQuery(ctx, loadgen.Query{Samples: samples}, c.done)
	cancel()
	pollAll(t, l, c)
	failed := 0
	for _, g := range c.got {
		if errors.Is(g.Err, context.Canceled) {
			failed += g.Count
		}
	}
	if failed != 9 || len(s.seen()) != 1 {
		t.Fatalf("%d samples failed as cancelled and %d sent, want 9 and the 1 already out", failed, len(s.seen()))
	}
}

func TestLoopServerErrorsReachTheEngine(t *testing.T) {
	s := startInferServerStatus(t, http.StatusServiceUnavailable)
	l := newLoopSUT(t, s, Options{Model: "m", MaxBatch: 8}, 1)
	c := newCollector(1)
	l.IssueQuery(t.Context(), loadgen.Query{Samples: []int{1}}, c.done)
	pollAll(t, l, c)
	if !errors.Is(c.got[0].Err, kserve.ErrUnavailable) {
		t.Fatalf("error %v, want kserve.ErrUnavailable", c.got[0].Err)
	}
}

func TestLoopRefusesCapture(t *testing.T) {
	enc, _ := httpclient.New("http://127.0.0.1:1")
	if _, err := NewLoop(enc, library(t, true), Options{Model: "m", Capture: true}, LoopOptions{Addr: "127.0.0.1:1"}); err == nil {
		t.Fatal("a capturing loop SUT was built")
	}
}

// The engine runs a Server scenario through the loop: every query is
// answered, through PollUntil.
func TestLoopServerRunThroughTheEngine(t *testing.T) {
	s := startInferServer(t)
	l := newLoopSUT(t, s, Options{Model: "m", MaxBatch: 8, WholeQueries: true}, 8)
	res := runServer(t, l, &loopQSL{lib: library(t, true), sut: l}, 100, 50)
	if res.QueriesIssued < 50 || res.QueriesCompleted != res.QueriesIssued || res.SamplesFailed != 0 {
		t.Fatalf("issued %d, completed %d, failed %d: %v", res.QueriesIssued, res.QueriesCompleted, res.SamplesFailed, res.Errors)
	}
	if got := len(s.seen()); int64(got) != res.QueriesIssued {
		t.Fatalf("server saw %d requests for %d queries", got, res.QueriesIssued)
	}
}

// A server that reads every 10th request and drops its connection
// unanswered, under a Server run on 16 preopened connections: the dropped
// queries fail (connection closed), no request is sent twice, every other
// query goes out and is answered, and the drain waits for nothing.
func TestLoopDroppedConnectionsThroughTheEngine(t *testing.T) {
	s := startInferServer(t)
	s.mu.Lock()
	s.dropEvery = 10
	s.mu.Unlock()
	l := newLoopSUT(t, s, Options{Model: "m", MaxBatch: 8, WholeQueries: true}, 64)
	res := runServer(t, l, &loopQSL{lib: library(t, true), sut: l, conns: 16}, 300, 150)
	requests, dropped := s.counts()
	if int64(requests) != res.QueriesIssued || int64(dropped) != res.SamplesFailed || dropped == 0 {
		t.Errorf("%d queries issued, %d failed; the server read %d requests and dropped %d: want one request per query and a failure per drop",
			res.QueriesIssued, res.SamplesFailed, requests, dropped)
	}
	if res.DrainTimedOut || res.Unanswered != 0 || res.RequestsResent != 0 {
		t.Errorf("drain timed out %v, %d unanswered, %d resent; want none", res.DrainTimedOut, res.Unanswered, res.RequestsResent)
	}
	for _, e := range res.Errors {
		if !strings.Contains(e, kserve.ErrConnectionClosed.Error()) {
			t.Errorf("error %q, want the connection closed before the answer", e)
		}
	}
}

// tracedQSL is a test QSL that prepares its SUT for the run's trace.
type tracedQSL interface {
	loadgen.QSL
	setTrace(*trace.Trace)
}

// runServer runs a 500 QPS Server scenario of at least minMs and
// minQueries through the engine on sut, with q as the QSL.
func runServer(t *testing.T, sut loadgen.SUT, q tracedQSL, minMs, minQueries uint64) *loadgen.Result {
	t.Helper()
	st := loadgen.DefaultSettings(loadgen.RulesetLoadGen6)
	st.Scenario = trace.Server
	st.ServerTargetQPS = 500
	st.ServerTargetLatencyNs = uint64(time.Second)
	st.MinDurationMs = minMs
	st.MinQueryCount = minQueries
	st.Engine.DrainTimeoutMs = 5000
	run, err := loadgen.NewRun(st, sut, q, loadgen.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	q.setTrace(run.Trace())
	res, err := run.Execute(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

type loopQSL struct {
	lib interface {
		TotalSampleCount() int
		PerformanceSampleCount() int
		Load(context.Context, []int) error
	}
	sut   *Loop
	tr    *trace.Trace
	conns int // connections opened before the clock (default 2)
}

func (q *loopQSL) setTrace(tr *trace.Trace)    { q.tr = tr }
func (q *loopQSL) TotalSampleCount() int       { return q.lib.TotalSampleCount() }
func (q *loopQSL) PerformanceSampleCount() int { return q.lib.PerformanceSampleCount() }
func (q *loopQSL) Load(ctx context.Context, idx []int) error {
	if err := q.lib.Load(ctx, idx); err != nil {
		return err
	}
	if err := q.sut.Prepare(ctx, q.tr); err != nil {
		return err
	}
	return q.sut.Preconnect(ctx, max(q.conns, 2))
}
