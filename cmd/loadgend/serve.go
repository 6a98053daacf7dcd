package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/netloadgen/netloadgen/pkg/daemon"
)

// serveCommand runs the daemon with its configuration from LOADGEND_*
// variables (README: "Configuration"). SIGTERM or SIGINT stop it gracefully:
// the active run stops issuing, drains, writes its files and is marked
// interrupted; then loadgend exits 0.
func serveCommand(args []string, _, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "loadgend serve: takes no arguments (configure it with LOADGEND_* variables), got %q\n", args[0])
		return exitError
	}
	cfg, err := daemon.LoadConfig()
	if err != nil {
		fmt.Fprintf(stderr, "loadgend: %v\n", err)
		return exitError
	}
	log := newLogger(stderr, cfg.Level())
	svc, err := daemon.New(cfg, log)
	if err != nil {
		fmt.Fprintf(stderr, "loadgend: %v\n", err)
		return exitError
	}
	if err := svc.Start(); err != nil {
		fmt.Fprintf(stderr, "loadgend: %v\n", err)
		return exitError
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	werr := svc.Wait(ctx)
	stop()
	log.Info("loadgend stopping")
	// The drain itself is bounded by LOADGEND_DRAIN_TIMEOUT; the rest is
	// writing files and closing connections.
	sctx, cancel := context.WithTimeout(context.Background(), cfg.DrainTimeout+30*time.Second)
	defer cancel()
	if err := svc.Shutdown(sctx); err != nil {
		log.Error("shutdown", "error", err)
		return exitError
	}
	if werr != nil {
		log.Error("serving", "error", werr)
		return exitError
	}
	return exitValid
}

// newLogger writes text to a terminal and JSON elsewhere (a container's log
// collector).
func newLogger(w io.Writer, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if isTerminal(w) {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}
