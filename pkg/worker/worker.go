// Package worker is the loop of `loadgend worker` (issue 29): register with a
// coordinator loadgend, send heartbeats, long-poll for work, measure the
// clock when told, carry out each assignment through the executor it is
// given, and register again when the coordinator forgets it. The worker
// always calls the coordinator, never the reverse, so that a worker behind
// NAT or in another cluster works.
package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/metrics"
	"github.com/netloadgen/netloadgen/pkg/secret"
	"github.com/netloadgen/netloadgen/pkg/version"
)

// Executor carries out one assignment: a shard of a distributed run. It
// returns when the shard is done (its error goes to the coordinator) or ctx
// ends (the coordinator forgot the worker, or the worker stops).
type Executor func(ctx context.Context, a api.WorkerAssignment) error

// Config is a worker's.
type Config struct {
	// Coordinator is the coordinator's base URL (http://loadgend:8080).
	Coordinator string
	// Token is the coordinator's LOADGEND_API_TOKEN; never logged.
	Token string
	// Name is the worker's name (api.CheckWorkerName).
	Name string
	// Address is the worker's own metrics listen address, as it sees it.
	Address string
	// Version is sent at registration; "" is this build's.
	Version string
	// Once: return after the first run assignment.
	Once bool
	// Execute carries out the assignments.
	Execute Executor
	Log     *slog.Logger
	// Now is the worker's clock (nil: time.Now). The executor must read
	// the same one: assignments' StartNs are on it.
	Now func() time.Time
	// PollWait is how long each poll waits for work (0: the coordinator's
	// poll_wait_ms).
	PollWait time.Duration
}

// ErrConfig marks a Config that cannot work; ErrRefused a registration the
// coordinator refuses for good (another version).
var (
	ErrConfig  = errors.New("worker configuration")
	ErrRefused = errors.New("refused by the coordinator")
)

// clockExchanges is how many exchanges a measurement makes: twice
// clocksync.MinExchanges, so that one of them likely meets a quiet moment.
const clockExchanges = 16

// Worker is one worker process's loop.
type Worker struct {
	cfg Config
	c   *client
	log *slog.Logger
	reg *prometheus.Registry
	met *metrics.Metrics
	own ownMetrics
	// sess is the current registration's session, for Link; nil between
	// sessions.
	sess atomic.Pointer[session]
}

// New checks cfg and prepares the worker and its metrics.
func New(cfg Config) (*Worker, error) {
	u, err := CoordinatorURL(cfg.Coordinator)
	if err != nil {
		return nil, err
	}
	if err := api.CheckWorkerName(cfg.Name); err != nil {
		return nil, fmt.Errorf("%w: name: %v", ErrConfig, err)
	}
	if cfg.Execute == nil {
		return nil, fmt.Errorf("%w: no executor", ErrConfig)
	}
	if cfg.Version == "" {
		cfg.Version = version.String()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	scrub := secret.NewScrubber(cfg.Token)
	w := &Worker{cfg: cfg, c: &client{base: u, token: cfg.Token, http: newHTTPClient(), scrub: scrub},
		log: scrub.Logger(log).With("worker", cfg.Name, "coordinator", u.Redacted())}
	w.reg = metrics.NewRegistry()
	labelled := prometheus.WrapRegistererWith(prometheus.Labels{"worker": cfg.Name}, w.reg)
	if w.met, err = metrics.New(labelled); err != nil {
		return nil, err
	}
	if w.own, err = newOwnMetrics(labelled); err != nil {
		return nil, err
	}
	return w, nil
}

// CoordinatorURL checks a --coordinator URL: http or https, a host, no
// user info (the token goes in a header, never a URL), no query.
func CoordinatorURL(s string) (*url.URL, error) {
	if s == "" {
		return nil, fmt.Errorf("%w: no coordinator URL (--coordinator or LOADGEND_COORDINATOR, e.g. http://loadgend:8080)", ErrConfig)
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: coordinator URL: %v", ErrConfig, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("%w: coordinator URL %q: want http:// or https://", ErrConfig, u.Redacted())
	case u.Host == "" || u.Hostname() == "":
		return nil, fmt.Errorf("%w: coordinator URL %q has no host", ErrConfig, u.Redacted())
	case u.User != nil:
		return nil, fmt.Errorf("%w: coordinator URL %q has user info: give the token in LOADGEND_API_TOKEN", ErrConfig, u.Redacted())
	case u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("%w: coordinator URL %q has a query or fragment", ErrConfig, u.Redacted())
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	return u, nil
}

// Handler serves the worker's GET /metrics (its own registry, labelled
// worker="<name>") and GET /healthz.
func (w *Worker) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics.Handler(w.reg))
	mux.HandleFunc("GET /healthz", func(rw http.ResponseWriter, _ *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		_, _ = rw.Write([]byte(`{"status":"ok"}` + "\n"))
	})
	return mux
}

// Metrics are the run metrics (the daemon's names, labelled worker) for
// the executor to feed.
func (w *Worker) Metrics() *metrics.Metrics { return w.met }

// Run registers and serves until ctx ends (nil), the coordinator refuses
// the worker for good (an error wrapping ErrRefused), or, with Once, the
// first run assignment is done (nil). A coordinator that goes away is
// waited for, with backoff, and registered with again.
func (w *Worker) Run(ctx context.Context) error {
	b := backoff{min: 100 * time.Millisecond, max: 5 * time.Second}
	for {
		sess, err := w.register(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, ErrRefused) {
			return err
		}
		if err != nil {
			w.log.Warn("registering failed; trying again", "error", err, "in", b.next())
			if !b.wait(ctx) {
				return nil
			}
			continue
		}
		b.reset()
		if w.serve(ctx, sess) {
			return nil
		}
		if ctx.Err() != nil {
			return nil
		}
		w.own.connected.Set(0)
		w.log.Warn("the coordinator no longer knows this worker; registering again")
	}
}

// register sends the registration; a version refusal wraps ErrRefused.
func (w *Worker) register(ctx context.Context) (*session, error) {
	var out api.WorkerRegistered
	reg := api.WorkerRegistration{Name: w.cfg.Name, Version: w.cfg.Version, Address: w.cfg.Address}
	_, err := w.c.do(ctx, http.MethodPost, "/v1/workers", "", reg, &out, requestTimeout)
	var se *statusError
	if errors.As(err, &se) && (se.code == api.CodeVersionMismatch || se.status == http.StatusUnauthorized) {
		return nil, fmt.Errorf("%w: %v", ErrRefused, err)
	}
	if err != nil {
		return nil, err
	}
	if out.Session == "" || out.HeartbeatIntervalMs <= 0 {
		// Not the answer itself: its session is the worker's credential.
		return nil, fmt.Errorf("the coordinator's registration answer lacks a session or heartbeat interval (heartbeat_interval_ms %d)", out.HeartbeatIntervalMs)
	}
	w.log.Info("registered", "heartbeat_interval_ms", out.HeartbeatIntervalMs, "worker_timeout_ms", out.WorkerTimeoutMs)
	w.own.connected.Set(1)
	pollWait := time.Duration(out.PollWaitMs) * time.Millisecond
	if pollWait <= 0 {
		pollWait = defaultPollWait
	}
	s := &session{id: out.Session, pollWait: min(pollWait, maxPollWait)}
	s.interval = heartbeatInterval(out.HeartbeatIntervalMs)
	return s, nil
}

// Bounds on what the coordinator may ask: a worker beats no more often than
// minInterval, and polls no longer than maxPollWait, whatever it is told.
const (
	minInterval = 50 * time.Millisecond
	maxInterval = time.Minute
	maxPollWait = 5 * time.Minute
	// defaultPollWait is asked when the coordinator names no wait: the
	// poll always sends wait_ms, so that its own timeout covers it.
	defaultPollWait = 25 * time.Second
)

func heartbeatInterval(ms int64) time.Duration {
	return min(max(time.Duration(ms)*time.Millisecond, minInterval), maxInterval)
}

// session is one registration's state.
type session struct {
	id       string
	pollWait time.Duration

	mu       sync.Mutex
	interval time.Duration
	runID    string              // the assignment being carried out
	stopRun  context.CancelFunc  // stops it
	finished *api.WorkerFinished // to report, until a heartbeat took it
}

// serve is one session: heartbeats beside the poll loop. It returns true
// when Once is satisfied, false when the session ended (ctx, or the
// coordinator forgot the worker).
func (w *Worker) serve(ctx context.Context, s *session) bool {
	w.sess.Store(s)
	defer w.sess.CompareAndSwap(s, nil)
	sctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.heartbeats(sctx, s, cancel)
	}()
	defer func() {
		cancel()
		wg.Wait()
	}()
	if err := w.syncClock(sctx, s); err != nil {
		w.log.Warn("measuring the clock at registration", "error", err)
	}
	b := backoff{min: 100 * time.Millisecond, max: 5 * time.Second}
	for sctx.Err() == nil {
		a, ok, err := w.poll(sctx, s)
		if err != nil {
			if isStatus(err, http.StatusNotFound) || sctx.Err() != nil {
				return false
			}
			w.log.Warn("polling for work failed; trying again", "error", err, "in", b.next())
			b.wait(sctx)
			continue
		}
		b.reset()
		if ok && w.handle(sctx, s, a) && w.cfg.Once {
			return true
		}
	}
	return false
}

// handle carries out one assignment; true when it was a run.
func (w *Worker) handle(ctx context.Context, s *session, a api.WorkerAssignment) bool {
	if a.SyncClock {
		if err := w.syncClock(ctx, s); err != nil {
			w.log.Warn("measuring the clock", "run_id", a.RunID, "error", err)
		}
	}
	if len(a.Spec) == 0 {
		return false
	}
	w.log.Info("assignment", "run_id", a.RunID, "shard", a.Shard, "shards", a.Shards, "start_ns", a.StartNs)
	w.own.assignments.Inc()
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	s.mu.Lock()
	s.runID, s.stopRun = a.RunID, stop
	s.mu.Unlock()
	err := w.cfg.Execute(rctx, a)
	fin := &api.WorkerFinished{RunID: a.RunID}
	if err != nil {
		fin.Error = err.Error()
		w.log.Warn("assignment failed", "run_id", a.RunID, "error", err)
	}
	s.mu.Lock()
	s.runID, s.stopRun, s.finished = "", nil, fin
	s.mu.Unlock()
	// Reported now, not at the next beat; a failure here is retried by
	// the heartbeats.
	if err := w.beat(ctx, s); err != nil {
		w.log.Warn("reporting the assignment's end", "run_id", a.RunID, "error", err)
	}
	return true
}

// poll waits for the next assignment; ok false when none came.
func (w *Worker) poll(ctx context.Context, s *session) (a api.WorkerAssignment, ok bool, err error) {
	wait := s.pollWait
	if w.cfg.PollWait > 0 && (wait <= 0 || w.cfg.PollWait < wait) {
		wait = w.cfg.PollWait
	}
	path := "/v1/workers/" + w.cfg.Name + "/work"
	if wait > 0 {
		path += "?wait_ms=" + fmt.Sprint(wait.Milliseconds())
	}
	status, err := w.c.do(ctx, http.MethodGet, path, s.id, nil, &a, wait+requestTimeout)
	if err != nil {
		return a, false, err
	}
	return a, status == http.StatusOK, nil
}

// heartbeats beats every interval until ctx ends; a 404 ends the session.
func (w *Worker) heartbeats(ctx context.Context, s *session, endSession context.CancelFunc) {
	for {
		s.mu.Lock()
		interval := s.interval
		s.mu.Unlock()
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		err := w.beat(ctx, s)
		if isStatus(err, http.StatusNotFound) {
			endSession()
			return
		}
		if err != nil && ctx.Err() == nil {
			w.log.Warn("heartbeat failed", "error", err)
		}
	}
}

// beat sends one heartbeat with the state and a finished assignment.
func (w *Worker) beat(ctx context.Context, s *session) error {
	s.mu.Lock()
	hb := api.WorkerHeartbeat{RunID: s.runID, Finished: s.finished}
	s.mu.Unlock()
	var ack api.WorkerHeartbeatAck
	_, err := w.c.do(ctx, http.MethodPost, "/v1/workers/"+w.cfg.Name+"/heartbeat", s.id, hb, &ack, requestTimeout)
	if err != nil {
		return err
	}
	w.own.heartbeats.Inc()
	s.mu.Lock()
	if s.finished == hb.Finished {
		s.finished = nil
	}
	if ack.HeartbeatIntervalMs > 0 {
		s.interval = heartbeatInterval(ack.HeartbeatIntervalMs)
	}
	if ack.StopRunID != "" && ack.StopRunID == s.runID && s.stopRun != nil {
		w.log.Warn("the coordinator stops the assignment", "run_id", s.runID)
		s.stopRun()
	}
	s.mu.Unlock()
	return nil
}

// syncClock makes one measurement's exchanges; the coordinator computes
// and keeps the estimate, and returns it on the last.
func (w *Worker) syncClock(ctx context.Context, s *session) error {
	path := "/v1/workers/" + w.cfg.Name + "/clock"
	var prevT3 int64
	for seq := 0; seq <= clockExchanges; seq++ {
		req := api.WorkerClockRequest{Seq: seq, PrevT3Ns: prevT3, Final: seq == clockExchanges}
		req.T0Ns = w.cfg.Now().UnixNano()
		var resp api.WorkerClockResponse
		_, err := w.c.do(ctx, http.MethodPost, path, s.id, req, &resp, requestTimeout)
		prevT3 = w.cfg.Now().UnixNano()
		if err != nil {
			return fmt.Errorf("clock exchange %d: %w", seq, err)
		}
		if e := resp.Estimate; req.Final && e != nil {
			w.own.clockOffset.Set(float64(e.OffsetNs) / 1e9)
			w.own.clockUncertainty.Set(float64(e.UncertaintyNs) / 1e9)
			w.log.Info("clock measured", "offset_ns", e.OffsetNs, "uncertainty_ns", e.UncertaintyNs)
		}
	}
	return nil
}

// backoff doubles a wait from min to max.
type backoff struct {
	min, max, cur time.Duration
}

func (b *backoff) next() time.Duration {
	if b.cur == 0 {
		b.cur = b.min
	}
	return b.cur
}

func (b *backoff) reset() { b.cur = 0 }

// wait sleeps the next wait (or until ctx ends: false) and doubles it.
func (b *backoff) wait(ctx context.Context) bool {
	d := b.next()
	b.cur = min(2*d, b.max)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
