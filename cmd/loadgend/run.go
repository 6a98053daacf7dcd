package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/qsl"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/runner"
	"github.com/netloadgen/netloadgen/pkg/sut"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// Exit statuses of `loadgend run`: a contract for scripts.
const (
	exitValid   = 0
	exitInvalid = 1
	exitError   = 2
)

// runCommand carries out one run without the daemon: VALID exits 0,
// INVALID 1, anything that kept the run from a verdict 2 with one line
// naming the problem.
func runCommand(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	req, err := parseRunFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitValid
	}
	if err != nil {
		fmt.Fprintf(stderr, "loadgend run: %v\n", err)
		return exitError
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: req.level}))
	switch req.mode {
	case modeFindPeak:
		return runFindPeak(ctx, req, log, stdout, stderr)
	case modeAccuracy:
		return runAccuracy(ctx, req, log, stdout, stderr)
	}
	return runPerformance(ctx, req.spec, log, stdout, stderr)
}

// Run modes (--mode): a contract for scripts.
const (
	modePerformance = "performance" // one performance run (default)
	modeFindPeak    = "find-peak"   // a peak search: trial after trial
	modeAccuracy    = "accuracy"    // every sample of the accuracy set once, responses logged
)

// runRequest is what the flags asked for.
type runRequest struct {
	spec  runner.Spec
	level slog.Level
	mode  string
	// Flags of the modes, registered by each mode's file.
	findPeak *findPeakFlags
	accuracy *accuracyFlags
}

// runPerformance is one performance run: exit 0 VALID, 1 INVALID, 2 error.
func runPerformance(ctx context.Context, spec runner.Spec, log *slog.Logger, stdout, stderr io.Writer) int {
	var progressDone chan struct{}
	opts := runner.Options{Logger: log}
	if isTerminal(stderr) {
		progressDone = make(chan struct{})
		opts.Started = func(r *loadgen.Run) { go showProgress(ctx, r, stderr, progressDone) }
	}
	out, err := runner.Run(ctx, spec, opts)
	if progressDone != nil {
		close(progressDone)
	}
	if _, ok := errors.AsType[*qsl.DataError](err); ok {
		err = fmt.Errorf("--data: %w", err)
	}
	if err != nil && (out == nil || out.Result == nil) {
		fmt.Fprintf(stderr, "loadgend run: %v\n", err)
		return exitError
	}
	fmt.Fprintln(stdout, runlog.SummaryLine(out.Result))
	if spec.OutDir != "" {
		fmt.Fprintf(stdout, "logs: %s\n", spec.OutDir)
	}
	if err != nil {
		fmt.Fprintf(stderr, "loadgend run: %v\n", err)
		return exitError
	}
	if out.Result.Valid {
		return exitValid
	}
	return exitInvalid
}

func parseRunFlags(args []string, stderr io.Writer) (runRequest, error) {
	var req runRequest
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		spec                                runner.Spec
		scenario, ruleset, preset, userConf string
		mlperfConf, data, logLevel          string
		targetQPS, expectedLatency          float64
		targetLatencyMs, percentile, ivalMs float64
		spq, minDur, maxDur, minQ, maxQ     uint64
		qslSeed, sampleSeed, scheduleSeed   uint64
		concat, unique, earlyVerdict        bool
		drainMs                             uint64
	)
	fs.StringVar(&spec.Target, "target", "", "the endpoint: http://host:port or grpc://host:port (required)")
	fs.StringVar(&spec.Model, "model", "", "model name (required)")
	fs.StringVar(&spec.ModelVersion, "model-version", "", "model version (default: the server's)")
	fs.StringVar(&scenario, "scenario", "Server", "SingleStream, MultiStream, Server or Offline")
	fs.StringVar(&ruleset, "ruleset", string(loadgen.RulesetLoadGen6), "v0.5 or loadgen6")
	fs.StringVar(&preset, "preset", "", "task preset: official bound, interval, percentile and minimums (e.g. resnet50)")
	fs.Float64Var(&targetQPS, "target-qps", 0, "server_target_qps (Server) or offline_expected_qps (Offline)")
	fs.Float64Var(&expectedLatency, "expected-latency-ns", 0, "single_/multi_stream_expected_latency_ns")
	fs.Uint64Var(&spq, "samples-per-query", 0, "multi_stream_samples_per_query (the stream count)")
	fs.Uint64Var(&minDur, "min-duration-ms", 0, "min_duration_ms")
	fs.Uint64Var(&maxDur, "max-duration-ms", 0, "max_duration_ms")
	fs.Uint64Var(&minQ, "min-query-count", 0, "min_query_count")
	fs.Uint64Var(&maxQ, "max-query-count", 0, "max_query_count")
	fs.IntVar(&spec.TotalSamples, "total-samples", 1024, "QSL total sample count")
	fs.IntVar(&spec.PerformanceSamples, "performance-samples", 1024, "QSL performance sample count")
	fs.Uint64Var(&qslSeed, "qsl-seed", 0, "qsl_rng_seed (default: the ruleset's)")
	fs.Uint64Var(&sampleSeed, "sample-seed", 0, "sample_index_rng_seed (default: the ruleset's)")
	fs.Uint64Var(&scheduleSeed, "schedule-seed", 0, "schedule_rng_seed (default: the ruleset's)")
	fs.BoolVar(&concat, "concat-perm", false, "sample_concatenate_permutation")
	fs.BoolVar(&unique, "issue-unique", false, "performance_issue_unique")
	fs.Float64Var(&targetLatencyMs, "target-latency-ms", 0, "server_target_latency_ns, in ms")
	fs.Float64Var(&percentile, "latency-percentile", 0, "target latency percentile, e.g. 0.99 or 99")
	fs.Float64Var(&ivalMs, "interval-ms", 0, "v0.5 MultiStream issue interval in ms")
	fs.IntVar(&spec.BatchSize, "batch-size", 0, "samples per request when a query is split (Offline)")
	fs.IntVar(&spec.MaxInflight, "max-inflight", 0, "requests outstanding per query (Offline; 0 = no cap)")
	fs.StringVar(&mlperfConf, "mlperf-conf", "", "an mlperf.conf to apply (LoadGen's syntax)")
	fs.StringVar(&userConf, "user-conf", "", "a user.conf to apply after mlperf.conf (LoadGen's syntax)")
	fs.StringVar(&data, "data", "", "samples: a directory (.npy or .bin/.raw files, a subdirectory or stacked file per input), a .npy/.bin file (single input) or perf_analyzer JSON (default: synthetic from the model's metadata)")
	fs.StringVar(&spec.OutDir, "out", "", "directory for the LoadGen logs, result.json and latency.hlog")
	fs.StringVar(&spec.SUTName, "sut-name", "", "sut_name in the logs (default names the target; contains \"Network SUT\")")
	fs.BoolVar(&spec.JSON, "json", false, "send tensors as JSON instead of the binary extension (HTTP)")
	fs.IntVar(&spec.Conns, "conns", 0, "HTTP connection pool size (default: from the rate by Little's law)")
	fs.StringVar(&spec.HTTPClient, "http-client", sut.HTTPClientLoop, "HTTP performance client: loop (one goroutine, its own epoll; Linux) or pool (a goroutine per request); runs that log responses use pool")
	fs.StringVar(&spec.GRPCClient, "grpc-client", sut.GRPCClientLoop, "gRPC performance client: loop (one goroutine, its own HTTP/2 connections; Linux) or grpc (grpc-go); runs that log responses use grpc")
	fs.DurationVar(&spec.RequestTimeout, "request-timeout", 0, "bound on one request (0 = none)")
	fs.DurationVar(&spec.IssueSlack, "issue-slack", 0, "how late the kernel may wake the issuer for a due query, to wake once for several (Server, event-loop clients; 0 = 2% of the latency bound, at most 200µs; the lateness is measured and counts in latency)")
	fs.Uint64Var(&drainMs, "drain-timeout-ms", 0, "wait for outstanding responses after issuing ends (default: the engine's)")
	fs.BoolVar(&earlyVerdict, "early-verdict", false, "stop as soon as the verdict is certain to be INVALID")
	fs.StringVar(&logLevel, "log-level", "warn", "debug, info, warn or error")
	fs.StringVar(&req.mode, "mode", modePerformance, "performance (one run), find-peak (a peak search) or accuracy (every sample once, responses logged)")
	req.findPeak = addFindPeakFlags(fs)
	req.accuracy = addAccuracyFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			fmt.Fprintln(stderr, "usage: loadgend run --target URL --model NAME [flags]")
			fs.PrintDefaults()
		}
		return req, err
	}
	if fs.NArg() > 0 {
		return req, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	var level slog.Level
	if err := level.UnmarshalText([]byte(logLevel)); err != nil {
		return req, fmt.Errorf("--log-level: %q is not debug, info, warn or error", logLevel)
	}
	if spec.Target == "" {
		return req, errors.New("--target is required (http://host:port or grpc://host:port)")
	}
	if _, err := runner.ParseTarget(spec.Target); err != nil {
		return req, fmt.Errorf("--target: %w", err)
	}
	if spec.Model == "" {
		return req, errors.New("--model is required")
	}
	if data != "" {
		// What needs no model is checked now, before any connection; the
		// rest once the model's metadata is known, still before any request.
		if err := qsl.CheckPath(data); err != nil {
			return req, fmt.Errorf("--data: %w", err)
		}
		if set["total-samples"] {
			return req, errors.New("--total-samples: with --data the files give the total")
		}
		spec.Data = data
	}
	sc, err := trace.ParseScenario(scenario)
	if err != nil {
		return req, fmt.Errorf("--scenario: %q is not SingleStream, MultiStream, Server or Offline", scenario)
	}
	rs := loadgen.Ruleset(ruleset)
	if rs != loadgen.RulesetV05 && rs != loadgen.RulesetLoadGen6 {
		return req, fmt.Errorf("--ruleset: %q is not v0.5 or loadgen6", ruleset)
	}
	s, err := loadgen.NewSettings(rs, sc, preset)
	if err != nil {
		return req, fmt.Errorf("--preset: %w", err)
	}
	for _, c := range []struct {
		flag, path string
		kind       loadgen.ConfigKind
	}{{"mlperf-conf", mlperfConf, loadgen.MLPerfConf}, {"user-conf", userConf, loadgen.UserConf}} {
		if c.path == "" {
			continue
		}
		f, err := os.Open(c.path)
		if err != nil {
			return req, fmt.Errorf("--%s: %w", c.flag, err)
		}
		cfg, err := loadgen.ParseConfig(c.path, f)
		f.Close()
		if err != nil {
			return req, fmt.Errorf("--%s: %w", c.flag, err)
		}
		if err := s.ApplyConfig(cfg, c.kind, spec.Model); err != nil {
			return req, fmt.Errorf("--%s: %w", c.flag, err)
		}
	}

	positive := func(name string, v float64) error {
		if !(v > 0) || math.IsInf(v, 0) {
			return fmt.Errorf("--%s must be a positive number, got %v", name, v)
		}
		return nil
	}
	if set["target-qps"] {
		if err := positive("target-qps", targetQPS); err != nil {
			return req, err
		}
		s.ServerTargetQPS, s.OfflineExpectedQPS = targetQPS, targetQPS
	}
	if set["expected-latency-ns"] {
		if err := positive("expected-latency-ns", expectedLatency); err != nil {
			return req, err
		}
		s.SingleStreamExpectedLatencyNs, s.MultiStreamExpectedLatencyNs = expectedLatency, expectedLatency
	}
	if set["samples-per-query"] {
		if spq == 0 {
			return req, errors.New("--samples-per-query must be at least 1")
		}
		s.MultiStreamSamplesPerQuery = spq
	}
	if set["min-duration-ms"] {
		s.MinDurationMs = minDur
	}
	if set["max-duration-ms"] {
		s.MaxDurationMs = maxDur
	}
	if set["min-query-count"] {
		s.MinQueryCount = minQ
	}
	if set["max-query-count"] {
		s.MaxQueryCount = maxQ
	}
	if set["qsl-seed"] {
		s.QSLRNGSeed = qslSeed
	}
	if set["sample-seed"] {
		s.SampleIndexRNGSeed = sampleSeed
	}
	if set["schedule-seed"] {
		s.ScheduleRNGSeed = scheduleSeed
	}
	if set["concat-perm"] {
		s.SampleConcatenatePermutation = concat
	}
	if set["issue-unique"] {
		s.PerformanceIssueUnique = unique
	}
	if set["target-latency-ms"] {
		if err := positive("target-latency-ms", targetLatencyMs); err != nil {
			return req, err
		}
		s.ServerTargetLatencyNs = uint64(targetLatencyMs * 1e6)
	}
	if set["latency-percentile"] {
		p := percentile
		if p > 1 && p < 100 {
			p /= 100
		}
		if !(p > 0 && p < 1) {
			return req, fmt.Errorf("--latency-percentile must be in (0, 1) or (0, 100), got %v", percentile)
		}
		s.ServerTargetLatencyPercentile = p
		s.SingleStreamTargetLatencyPercentile = p
		s.MultiStreamTargetLatencyPercentile = p
	}
	if set["interval-ms"] {
		if err := positive("interval-ms", ivalMs); err != nil {
			return req, err
		}
		s.MultiStreamTargetQPS = 1000 / ivalMs
	}
	if set["drain-timeout-ms"] {
		s.Engine.DrainTimeoutMs = drainMs
	}
	s.Engine.EarlyVerdict = earlyVerdict
	if spec.TotalSamples <= 0 || spec.PerformanceSamples <= 0 {
		return req, errors.New("--total-samples and --performance-samples must be at least 1")
	}
	for _, c := range []struct {
		flag string
		v    int
	}{{"batch-size", spec.BatchSize}, {"max-inflight", spec.MaxInflight}, {"conns", spec.Conns}} {
		if c.v < 0 {
			return req, fmt.Errorf("--%s cannot be negative, got %d", c.flag, c.v)
		}
	}
	if spec.IssueSlack < 0 || spec.IssueSlack > runner.MaxIssueSlack {
		return req, fmt.Errorf("--issue-slack: %v is not between 0 and %v", spec.IssueSlack, runner.MaxIssueSlack)
	}
	if spec.HTTPClient != sut.HTTPClientLoop && spec.HTTPClient != sut.HTTPClientPool {
		return req, fmt.Errorf("--http-client: %q is not %s or %s", spec.HTTPClient, sut.HTTPClientLoop, sut.HTTPClientPool)
	}
	if !set["http-client"] {
		spec.HTTPClient = "" // the default: the loop where it runs, else the pool
	}
	if spec.GRPCClient != sut.GRPCClientLoop && spec.GRPCClient != sut.GRPCClientGRPC {
		return req, fmt.Errorf("--grpc-client: %q is not %s or %s", spec.GRPCClient, sut.GRPCClientLoop, sut.GRPCClientGRPC)
	}
	if !set["grpc-client"] {
		spec.GRPCClient = "" // the default: the loop where it runs, else grpc-go
	}
	if err := s.Validate(); err != nil {
		return req, err
	}
	spec.Settings = s
	switch req.mode {
	case modePerformance, modeFindPeak, modeAccuracy:
	default:
		return req, fmt.Errorf("--mode: %q is not %s, %s or %s", req.mode, modePerformance, modeFindPeak, modeAccuracy)
	}
	req.spec, req.level = spec, level
	if err := req.findPeak.check(req); err != nil {
		return req, err
	}
	if err := req.accuracy.check(req); err != nil {
		return req, err
	}
	return req, nil
}

// showProgress rewrites one status line on a terminal until done.
func showProgress(ctx context.Context, r *loadgen.Run, w io.Writer, done <-chan struct{}) {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-done:
			fmt.Fprint(w, "\r\033[K")
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		p := r.Progress()
		if !p.Started {
			continue
		}
		fmt.Fprintf(w, "\r\033[Kqueries %d issued, %d done, %d in flight, %d failed samples | %.1fs of ~%.1fs | p99 %.2f ms",
			p.IssuedQueries, p.CompletedQueries, p.InFlightQueries, p.FailedSamples,
			p.Elapsed.Seconds(), p.ExpectedEnd.Seconds(), float64(p.P99)/1e6)
	}
}

// isTerminal reports whether w is a terminal (fileIsTerminal, per platform).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && fileIsTerminal(f)
}
