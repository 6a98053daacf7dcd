// Command sutproxy is a KServe v2 server (HTTP and gRPC) serving simulated
// models, or forwarding to upstream inference servers. See
// docs/sutproxy-models.md for the built-in models and the model syntax.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/netloadgen/netloadgen/internal/suggest"
	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/pkg/atomicfile"
	"github.com/netloadgen/netloadgen/pkg/sim"
	"github.com/netloadgen/netloadgen/pkg/sutproxy"
	"github.com/netloadgen/netloadgen/pkg/version"
)

type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(exitStatus(run(ctx, os.Args[1:], os.Stdout, os.Stderr), os.Stderr))
}

// exitStatus is the exit status of run's error, reported on stderr: 0 for
// none or for --help (its usage was printed), 2 otherwise.
func exitStatus(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintln(stderr, "sutproxy:", err)
	return 2
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sutproxy", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are one line, from main; --help goes to stdout
	var (
		cfg       sutproxy.Config
		models    repeated
		upstreams repeated
		required  repeated
		config    = fs.String("config", "", "JSON or YAML file of simulated models (see docs/sutproxy-models.md)")
		readyFile = fs.String("ready-file", "", "write {\"http\":ADDR,\"grpc\":ADDR} to this file once listening")
		logLevel  = fs.String("log-level", "info", "debug, info, warn or error")
		showVer   = fs.Bool("version", false, "print the version and exit")
		listOnly  = fs.Bool("list-models", false, "print the models that would be served, as JSON, and exit")
	)
	fs.StringVar(&cfg.HTTPAddr, "http-addr", "127.0.0.1:8000", "HTTP listen address (port 0 picks a free port)")
	fs.StringVar(&cfg.GRPCAddr, "grpc-addr", "127.0.0.1:8001", "gRPC listen address; \"off\" disables gRPC")
	fs.Var(&models, "model", "a simulated model, e.g. "+sim.FlagSyntax+", or an LLM: "+sim.LLMFlagSyntax+" (repeatable)")
	fs.Var(&upstreams, "upstream", "forward to this KServe v2 server, http://host:port or grpc://host:port (repeatable)")
	fs.Var(&required, "require-header", "'Name: value' every request must carry (repeatable): 401 (gRPC UNAUTHENTICATED) without it, as an endpoint that wants credentials")
	fs.StringVar(&cfg.RequireHost, "require-host", "", "serve only this Host (gRPC :authority), any port: 404 (gRPC UNIMPLEMENTED) for another, as an ingress that routes by Host")
	fs.IntVar(&cfg.MaxRequestBytes, "max-request-bytes", sutproxy.DefaultMaxRequestBytes, "largest request accepted, in bytes: an HTTP body (413 over it) or a gRPC message (RESOURCE_EXHAUSTED)")
	fs.StringVar(&cfg.TLSCert, "tls-cert", "", "serve TLS on both listeners with this certificate PEM file (with --tls-key)")
	fs.StringVar(&cfg.TLSKey, "tls-key", "", "the certificate's key PEM file (with --tls-cert)")
	fs.StringVar(&cfg.TLSClientCA, "tls-client-ca", "", "require client certificates signed by a CA in this PEM file (mutual TLS; with --tls-cert)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, "usage: sutproxy [flags]   (a KServe v2 server of simulated models, or a forwarder)")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			fmt.Fprintln(stdout, "\nexample:\n  sutproxy --http-addr 127.0.0.1:8000 --grpc-addr 127.0.0.1:8001 --model "+sim.FlagSyntax)
			return err
		}
		return suggest.FlagError(fs, err)
	}
	if cfg.MaxRequestBytes < 1 || cfg.MaxRequestBytes > math.MaxInt32 {
		return fmt.Errorf("--max-request-bytes %d: want 1 to %d", cfg.MaxRequestBytes, math.MaxInt32)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *showVer {
		fmt.Fprintln(stdout, "sutproxy", version.String())
		return nil
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log-level %q: %w", *logLevel, err)
	}
	cfg.Logger = newLogger(stderr, level)

	if err := addModels(&cfg, *config, models, upstreams, required); err != nil {
		return err
	}
	if *listOnly {
		specs := cfg.Models
		if len(specs) == 0 {
			specs = sim.DefaultModels()
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(specs)
	}

	p, err := sutproxy.Start(ctx, cfg)
	if err != nil {
		return err
	}
	defer p.Close()
	if *readyFile != "" {
		b, _ := json.Marshal(map[string]string{"http": p.HTTPAddr(), "grpc": p.GRPCAddr()})
		// Written whole (atomicfile), so a watcher never reads half of it.
		if err := atomicfile.WriteFile(filepath.Dir(*readyFile), filepath.Base(*readyFile), b); err != nil {
			return fmt.Errorf("--ready-file: %w", err)
		}
	}
	err = p.Wait(ctx)
	cfg.Logger.Info("sutproxy stopping")
	return err
}

// addModels fills cfg's models (the --config file's, then each --model),
// upstreams and required headers from the flags.
func addModels(cfg *sutproxy.Config, config string, models, upstreams, required repeated) error {
	if config != "" {
		specs, err := sim.LoadFile(config)
		if err != nil {
			return fmt.Errorf("--config: %w", err)
		}
		cfg.Models = append(cfg.Models, specs...)
	}
	for _, m := range models {
		spec, err := sim.ParseModelFlag(m)
		if err != nil {
			return fmt.Errorf("--model %q: %w", m, err)
		}
		cfg.Models = append(cfg.Models, spec)
	}
	cfg.Upstreams = sutproxy.ParseUpstreams(upstreams)
	for _, r := range required {
		name, value, ok := strings.Cut(r, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return fmt.Errorf("--require-header %q: want 'Name: value'", r)
		}
		if err := kserve.CheckHeaderName(name); err != nil {
			return fmt.Errorf("--require-header: %w", err)
		}
		cfg.RequireHeaders = append(cfg.RequireHeaders, kserve.Header{Name: name, Value: strings.Trim(value, " \t")})
	}
	return nil
}

func newLogger(w io.Writer, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if f, ok := w.(*os.File); ok && isTerminal(f) {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
