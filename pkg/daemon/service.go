package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/metrics"
	"github.com/netloadgen/netloadgen/pkg/runstore"
	"github.com/netloadgen/netloadgen/pkg/version"
)

// Service is a running loadgend: the API server, the run queue and its one
// worker. A test starts it on 127.0.0.1:0 with New and Start.
type Service struct {
	cfg    Config
	log    *slog.Logger
	store  *runstore.Store
	sums   *summaries // what a status shows beyond the record, in memory
	gate   *apiGate   // bounds the API requests served at once
	hub    *eventHub  // writes the event streams
	reg    *prometheus.Registry
	met    *metrics.Metrics
	allow  *Allowlist
	limits api.Limits
	fleet  *Fleet // the registered workers
	// dist is the distributed run in progress, for the worker routes;
	// nil when none.
	dist atomic.Pointer[distRun]
	// stopSweep ends the fleet's sweeper.
	stopSweep context.CancelFunc

	mu    sync.Mutex
	queue []string // run ids waiting, FIFO
	// literals are the header values queued runs were given literally, by
	// run id: secrets, kept in memory only (their run.json says
	// <redacted>), taken when the run starts.
	literals map[string]map[string]string
	active   *activeRun
	// taken is the run the worker has taken off the queue and not yet
	// made active (it is being admitted): still queued, first in line;
	// takenCancelled: the API cancelled it meanwhile, so it never starts.
	taken          string
	takenCancelled bool
	closing        bool
	wake           chan struct{} // a run was queued, or the service is closing

	ln         net.Listener
	srv        *http.Server
	workerDone chan struct{}
	serveErr   chan error
	// afterRun, when set (by a test, before Start), is called by the
	// worker once a run is over and its memory given back.
	afterRun func()
	// taking, when set (by a test, before Start), is called by the worker
	// with each run it takes off the queue, before admitting it.
	taking func(id string)
	// listScan bounds the runs a filtered page of GET /v1/runs looks at;
	// 0 is api.MaxListScan (a test makes it small).
	listScan int
}

// Option adjusts New beyond Config: what a test injects.
type Option func(*options)

type options struct {
	store []runstore.Option
}

// WithStoreOptions passes options to the run store (a failing file writer,
// to test a full disk).
func WithStoreOptions(o ...runstore.Option) Option {
	return func(opts *options) { opts.store = append(opts.store, o...) }
}

// New opens the run store and prepares the service; Start serves it.
func New(cfg Config, log *slog.Logger, opts ...Option) (*Service, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	allow, err := NewAllowlist(cfg.AllowedTargets)
	if err != nil {
		return nil, fmt.Errorf("%w: LOADGEND_ALLOWED_TARGETS: %v", ErrConfig, err)
	}
	store, err := runstore.Open(cfg.DataDir, append([]runstore.Option{runstore.WithLogger(log)}, o.store...)...)
	if err != nil {
		return nil, fmt.Errorf("LOADGEND_DATA_DIR %s: %w", cfg.DataDir, err)
	}
	reg := metrics.NewRegistry()
	met, err := metrics.New(reg)
	if err != nil {
		store.Close()
		return nil, err
	}
	s := &Service{
		cfg: cfg, log: log, store: store, reg: reg, met: met, allow: allow,
		limits: api.Limits{
			MaxQPS:      cfg.MaxQPS,
			MaxDuration: cfg.MaxDuration,
			MaxInflight: cfg.MaxInflight,
			MaxConns:    cfg.MaxInflight,
			DataRoot:    cfg.DataRoot,
			SecretEnv:   cfg.SecretEnv,
			SecretsDir:  cfg.SecretsDir,
			AllowSearch: true,
			// Above the engine's own bound (trace.MaxSamples), that one
			// refuses: runspec.Build checks it.
			MaxTraceSamples: cfg.MaxTraceSamples,
		},
		literals:   map[string]map[string]string{},
		wake:       make(chan struct{}, 1),
		workerDone: make(chan struct{}),
		serveErr:   make(chan error, 1),
	}
	s.fleet = newFleet(time.Now, cfg.WorkerTimeout, version.String())
	if err := registerFleetMetrics(reg, s.fleet); err != nil {
		store.Close()
		return nil, err
	}
	s.gate = newAPIGate(cfg.APIConcurrency)
	s.hub = newEventHub(cfg.MaxEventStreams, s.eventSnapshot)
	s.sums = newSummaries(store)
	s.sums.loadAll()
	// Runs queued when the daemon last stopped go again, in their order.
	for _, r := range store.Queued() {
		s.queue = append(s.queue, r.ID)
	}
	for _, p := range store.Problems() {
		log.Warn("run store: a run could not be read", "path", p.Path, "error", p.Err)
	}
	return s, nil
}

// Start listens and serves until Shutdown.
func (s *Service) Start() error {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("LOADGEND_LISTEN %s: %w", s.cfg.Listen, err)
	}
	s.ln = ln
	s.srv = &http.Server{
		Handler:           s.handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		// No WriteTimeout: the events stream is long-lived. Handlers that
		// write a bounded answer finish well within the read timeout.
		IdleTimeout:    2 * time.Minute,
		MaxHeaderBytes: 64 << 10,
		ErrorLog:       slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	// Read before the worker starts: from then on the queue is the
	// worker's, under s.mu.
	queued := len(s.queue)
	if queued > 0 {
		s.signal()
	}
	go s.hub.run()
	sweepCtx, stopSweep := context.WithCancel(context.Background())
	s.stopSweep = stopSweep
	go s.fleet.runSweeper(sweepCtx)
	go func() { s.serveErr <- s.srv.Serve(ln) }()
	go s.work()
	s.log.Info("loadgend listening", "addr", ln.Addr().String(), "data_dir", s.cfg.DataDir, "queued", queued)
	return nil
}

// Addr is the address the API listens on.
func (s *Service) Addr() string { return s.ln.Addr().String() }

// Wait returns when the API server stops on its own (an error) or ctx ends.
func (s *Service) Wait(ctx context.Context) error {
	select {
	case err := <-s.serveErr:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
		return nil
	}
}

// Shutdown stops issuing, lets in-flight requests drain up to the drain
// timeout, writes the active run's files and marks it interrupted; queued
// runs stay queued for the next start. Then the API server stops.
func (s *Service) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return nil
	}
	s.closing = true
	if s.active != nil {
		s.active.stop(api.StateInterrupted)
	}
	s.mu.Unlock()
	s.signal()
	// Workers' long polls end now, or the server's shutdown would wait
	// for them.
	s.fleet.close()
	if s.stopSweep != nil {
		s.stopSweep()
	}
	select {
	case <-s.workerDone:
	case <-ctx.Done():
		s.log.Warn("shutdown: the active run did not finish writing in time")
	}
	// The hub ends the streams of runs that ended or stay queued, which
	// the server's shutdown waits for; then it stops.
	s.notifyAll()
	err := s.srv.Shutdown(ctx)
	s.hub.close()
	return errors.Join(err, s.store.Close())
}

func (s *Service) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}
