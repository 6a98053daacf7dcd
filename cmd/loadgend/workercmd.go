package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/internal/suggest"
	"github.com/netloadgen/netloadgen/pkg/daemon"
	"github.com/netloadgen/netloadgen/pkg/runspec"
	"github.com/netloadgen/netloadgen/pkg/shardrun"
	"github.com/netloadgen/netloadgen/pkg/worker"
)

const workerUsage = `usage: loadgend worker --coordinator URL [--name NAME] [--once]

A worker: registers with the loadgend daemon at URL (its control API), sends
heartbeats and waits for work; a distributed run (a spec with "workers": N)
gives each of N idle workers a shard of its trace. The worker calls the
daemon, never the reverse, so it may sit behind NAT or in another cluster.
It serves its own /metrics and /healthz on LOADGEND_LISTEN.

environment:
  LOADGEND_COORDINATOR  the daemon's URL when --coordinator is not given
  LOADGEND_API_TOKEN    the daemon's bearer token (never logged)
  LOADGEND_LISTEN       the worker's /metrics and /healthz address (default 127.0.0.1:9090)
  LOADGEND_LOG_LEVEL    debug, info, warn or error (default info)
  LOADGEND_DATA_ROOT    the directory a run's data may name sample files under (as the daemon's)
  LOADGEND_SECRET_ENV   the variables a run's @env: references may read, comma-separated
  LOADGEND_SECRETS_DIR  the directory a run's @file: references may read under
  LOADGEND_TEST_CLOCK_SHIFT  test only: shift the worker's clock by this duration (250ms)

exit status: 0 when stopped (SIGTERM, SIGINT) or, with --once, after one run;
2 for bad flags or environment, or when the daemon refuses the worker (another
version, a wrong token).

flags:
`

// workerCommand runs `loadgend worker`.
func workerCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	coord := fs.String("coordinator", os.Getenv("LOADGEND_COORDINATOR"), "the coordinator loadgend's URL (env LOADGEND_COORDINATOR)")
	host, _ := os.Hostname()
	name := fs.String("name", strings.ToLower(host), "the worker's name: lower-case letters, digits, '-' and '.' (default the host name)")
	once := fs.Bool("once", false, "take one run, then exit 0 (a Kubernetes Job)")
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, workerUsage)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return exitValid
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "loadgend worker: %v\n", err)
		return exitError
	}
	if err != nil {
		return fail(suggest.FlagError(fs, err))
	}
	if fs.NArg() > 0 {
		return fail(fmt.Errorf("takes no arguments, got %q", fs.Arg(0)))
	}
	cfg, listen, level, err := workerConfig(*coord, *name, *once)
	if err != nil {
		return fail(err)
	}
	// What the coordinator's specs may read here, read as the daemon reads
	// its own: data paths, @env: and @file: references.
	lim, err := daemon.SpecSources()
	if err != nil {
		return fail(err)
	}
	env := runspec.DaemonEnv(lim)
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fail(fmt.Errorf("LOADGEND_LISTEN %s: %w", listen, err))
	}
	defer ln.Close()
	cfg.Address = advertised(ln.Addr().String())
	cfg.Log = newLogger(stderr, level)
	var w *worker.Worker
	cfg.Execute = func(ctx context.Context, a api.WorkerAssignment) error { return executeAssignment(ctx, w, cfg, env, a) }
	if w, err = worker.New(cfg); err != nil {
		return fail(err)
	}
	srv := &http.Server{Handler: w.Handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg.Log.Info("loadgend worker starting", "worker", cfg.Name, "listen", ln.Addr().String(), "once", cfg.Once)
	if err := w.Run(ctx); err != nil {
		return fail(err)
	}
	return exitValid
}

// workerConfig checks the flags and the environment, naming the one at
// fault.
func workerConfig(coord, name string, once bool) (worker.Config, string, slog.Level, error) {
	var level slog.Level
	if _, err := worker.CoordinatorURL(coord); err != nil {
		return worker.Config{}, "", level, fmt.Errorf("--coordinator: %w", err)
	}
	if err := api.CheckWorkerName(name); err != nil {
		return worker.Config{}, "", level, fmt.Errorf("--name: %v", err)
	}
	listen := os.Getenv("LOADGEND_LISTEN")
	if listen == "" {
		listen = "127.0.0.1:9090"
	}
	if _, _, err := net.SplitHostPort(listen); err != nil {
		return worker.Config{}, "", level, fmt.Errorf("LOADGEND_LISTEN %q: %v", listen, err)
	}
	if v := os.Getenv("LOADGEND_LOG_LEVEL"); v != "" {
		if err := level.UnmarshalText([]byte(v)); err != nil {
			return worker.Config{}, "", level, fmt.Errorf("LOADGEND_LOG_LEVEL %q: want debug, info, warn or error", v)
		}
	}
	now := time.Now
	if v := os.Getenv("LOADGEND_TEST_CLOCK_SHIFT"); v != "" {
		shift, err := time.ParseDuration(v)
		if err != nil {
			return worker.Config{}, "", level, fmt.Errorf("LOADGEND_TEST_CLOCK_SHIFT %q: want a duration (250ms, -1s)", v)
		}
		now = func() time.Time { return time.Now().Add(shift) }
	}
	return worker.Config{Coordinator: coord, Token: os.Getenv(TokenEnv), Name: name, Once: once, Now: now}, listen, level, nil
}

// advertised is the address the worker tells the coordinator: the
// listener's, with the host name for an unspecified IP.
func advertised(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err == nil && ip != nil && ip.IsUnspecified() {
		if h, err := os.Hostname(); err == nil {
			return net.JoinHostPort(h, port)
		}
	}
	return addr
}

// executeAssignment carries out one shard on the worker's clock (now),
// its live metrics on the worker's /metrics.
func executeAssignment(ctx context.Context, w *worker.Worker, cfg worker.Config, env runspec.Env, a api.WorkerAssignment) error {
	return shardrun.Execute(ctx, shardrun.Config{Worker: cfg.Name, Coordinator: w.Link(), Env: env,
		Now: cfg.Now, Metrics: w.Metrics(), Log: cfg.Log}, a)
}
