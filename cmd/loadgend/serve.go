package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"reflect"
	"syscall"
	"time"

	"github.com/netloadgen/netloadgen/pkg/daemon"
)

// serveCommand runs the daemon with its configuration from LOADGEND_*
// variables (docs/daemon.md: "Configuration"). SIGTERM or SIGINT stop it gracefully:
// the active run stops issuing, drains, writes its files and is marked
// interrupted; then loadgend exits 0.
func serveCommand(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		printServeHelp(stdout)
		return exitValid
	}
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

// printServeHelp lists the LOADGEND_* variables from daemon.Config's tags,
// so the list follows the configuration.
func printServeHelp(w io.Writer) {
	fmt.Fprintln(w, "usage: loadgend serve   (no flags: configure it with LOADGEND_* variables)")
	fmt.Fprintln(w, "\nvariables:")
	ct := reflect.TypeFor[daemon.Config]()
	for i := range ct.NumField() {
		f := ct.Field(i)
		name := f.Tag.Get("envconfig")
		if name == "" {
			continue
		}
		line := fmt.Sprintf("  %-27s %s", "LOADGEND_"+name, f.Tag.Get("desc"))
		if d := f.Tag.Get("default"); d != "" {
			line += " (default " + d + ")"
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintln(w, "\nexample:\n  LOADGEND_LISTEN=127.0.0.1:9090 LOADGEND_DATA_DIR=/var/lib/loadgend loadgend serve")
}
