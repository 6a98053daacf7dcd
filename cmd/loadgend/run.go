package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/internal/suggest"
	"github.com/netloadgen/netloadgen/pkg/atomicfile"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/qsl"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/runner"
	"github.com/netloadgen/netloadgen/pkg/runspec"
	"github.com/netloadgen/netloadgen/pkg/secret"
	"github.com/netloadgen/netloadgen/pkg/sut"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// Exit statuses of `loadgend run`: a contract for scripts.
const (
	exitValid   = 0
	exitInvalid = 1
	exitError   = 2
	// A run stopped by a signal exits 128 + the signal's number, as a
	// shell reports it: whatever its verdict, it did not run as asked.
	exitInterrupted = 128 + int(syscall.SIGINT)  // 130: Ctrl-C
	exitTerminated  = 128 + int(syscall.SIGTERM) // 143
)

// runCommand carries out one run without the daemon: VALID exits 0,
// INVALID 1, anything that kept the run from a verdict 2 with one line
// naming the problem; a run stopped by SIGINT 130, by SIGTERM 143.
func runCommand(args []string, stdout, stderr io.Writer) int {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	return runWithSignals(args, sigs, stdout, stderr)
}

// runWithSignals is runCommand with its signals from sigs. The first signal
// stops issuing at once; the run then drains, bounded by the drain timeout,
// and writes its files. A second signal returns at once with whatever has
// been written.
func runWithSignals(args []string, sigs <-chan os.Signal, stdout, stderr io.Writer) int {
	req, err := parseRunFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitValid
	}
	if err != nil {
		fmt.Fprintf(stderr, "loadgend run: %v\n", err)
		return exitError
	}
	if req.remote != nil {
		return runRemote(req, sigs, stdout, stderr)
	}
	if req.spec.OutDir == "" {
		dir, err := claimOutDir(defaultOutBase, time.Now(), req.spec.Settings.Scenario.String(), req.spec.Model)
		if err != nil {
			fmt.Fprintf(stderr, "loadgend run: --out: %v\n", err)
			return exitError
		}
		req.spec.OutDir, req.outDefault = dir, true
	}
	// The messages below share stderr with the run's logger and progress.
	stderr = &lockedWriter{w: stderr}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: req.level}))
	ended := make(chan int, 1)
	go func() {
		code := runMode(ctx, req, log, stdout, stderr)
		if req.outDefault && code == exitError {
			// A run that never started leaves no empty directory behind;
			// Remove fails, as wanted, on one with files in it.
			_ = os.Remove(req.spec.OutDir)
		}
		ended <- code
	}()
	var first os.Signal
	for {
		select {
		case code := <-ended:
			if first != nil {
				return signalExit(first)
			}
			return code
		case sig := <-sigs:
			if first != nil {
				fmt.Fprintf(stderr, "\nloadgend run: %v again: exiting now, without waiting for the drain; the run's files may be missing or incomplete\n", sig)
				return signalExit(first)
			}
			first = sig
			cancel(fmt.Errorf("loadgend run: %v", sig))
			fmt.Fprintf(stderr, "\nloadgend run: %v: issuing stopped; draining for at most %v (--drain-timeout-ms), then writing the results; press Ctrl-C again to exit at once\n",
				sig, time.Duration(req.spec.Settings.Engine.DrainTimeoutMs)*time.Millisecond)
		}
	}
}

// signalExit is the exit status of a run stopped by sig.
func signalExit(sig os.Signal) int {
	if sig == syscall.SIGTERM {
		return exitTerminated
	}
	return exitInterrupted
}

// runMode carries out the run the flags asked for.
func runMode(ctx context.Context, req runRequest, log *slog.Logger, stdout, stderr io.Writer) int {
	switch req.mode {
	case modeFindPeak, modeSweep:
		return runFindPeak(ctx, req, log, stdout, stderr)
	case modeAccuracy:
		return runAccuracy(ctx, req, log, stdout, stderr)
	}
	return runPerformance(ctx, req, log, stdout, stderr)
}

// Run modes (--mode): a contract for scripts.
const (
	modePerformance = "performance" // one performance run (default)
	modeFindPeak    = "find-peak"   // a peak search: trial after trial
	modeSweep       = "sweep"       // a load sweep: one trial per rate
	modeAccuracy    = "accuracy"    // every sample of the accuracy set once, responses logged
)

// runRequest is what the flags asked for.
type runRequest struct {
	// spec is the run (the base of a search's trials); search the peak
	// search of --mode find-peak.
	spec   runner.Spec
	search *runner.Search
	level  slog.Level
	mode   string
	// latency prints the latency percentile spectrum after the verdict
	// (--latency, as wrk2's).
	latency bool
	// outDefault: no --out was given; spec.OutDir is a new directory
	// under ./runs (claimOutDir).
	outDefault bool
	// samplesOut is --samples-out: the per-sample export's file.
	samplesOut string
	// remote is a run for a daemon (--coordinator); spec is then unset.
	remote *remoteRequest
}

// defaultOutBase is where a run without --out writes its files, each run
// in a new directory of its own.
const defaultOutBase = "runs"

// claimOutDir makes a new directory for a run without --out:
// base/YYYYMMDD-HHMMSS-scenario-model, then -2, -3, ... when another run
// took the name in the same second. Mkdir fails on a directory that
// exists, so two runs never share one, even two processes.
func claimOutDir(base string, now time.Time, scenario, model string) (string, error) {
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", err
	}
	name := now.Format("20060102-150405") + "-" + strings.ToLower(scenario) + "-" + pathSafe(model)
	for i := 1; i < 1000; i++ {
		dir := filepath.Join(base, name)
		if i > 1 {
			dir = fmt.Sprintf("%s-%d", dir, i)
		}
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("no free directory name for %s under %s", name, base)
}

// pathSafe keeps a model name's letters, digits, '.', '_' and '-': a
// model's name may hold what a path must not (a '/', "..").
func pathSafe(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
		case c == '.' && i > 0:
		default:
			b[i] = '_'
		}
	}
	return string(b)
}

// runPerformance is one performance run: exit 0 VALID, 1 INVALID, 2 error;
// a run without a verdict (N/A: a closed loop, --concurrency; a load shape
// without --slo) exits 0 when every sample it sent was answered, 1 when
// some failed.
func runPerformance(ctx context.Context, req runRequest, log *slog.Logger, stdout, stderr io.Writer) int {
	spec := req.spec
	opts := runner.Options{Logger: log}
	var progress *progressLine
	if isTerminal(stderr) {
		progress = &progressLine{w: stderr, done: make(chan struct{}), ended: make(chan struct{})}
	}
	var run *loadgen.Run // read after runner.Run returns, when its record is complete
	opts.Started = func(r *loadgen.Run) {
		run = r
		if progress != nil {
			progress.shown = true // on this goroutine, as stop
			go progress.show(r)
		}
	}
	out, err := runner.Run(ctx, spec, opts)
	progress.stop()
	if _, ok := errors.AsType[*qsl.DataError](err); ok {
		err = fmt.Errorf("--data: %w", err)
	}
	if err != nil && (out == nil || out.Result == nil) {
		fmt.Fprintf(stderr, "loadgend run: %v\n", err)
		return exitError
	}
	fmt.Fprintln(stdout, runlog.SummaryLine(out.Result))
	fmt.Fprintln(stdout, logsLine(spec.OutDir, req.outDefault))
	if req.samplesOut != "" && run != nil {
		if werr := writeSamples(req.samplesOut, run); werr != nil {
			fmt.Fprintf(stderr, "loadgend run: --samples-out: %v\n", werr)
			err = cmp.Or(err, werr)
		}
	}
	if req.latency && run != nil {
		fmt.Fprintln(stdout)
		if werr := runlog.WriteSpectrum(stdout, run.Samples().Latencies()); werr != nil {
			fmt.Fprintf(stderr, "loadgend run: --latency: %v\n", werr)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "loadgend run: %v\n", err)
		return exitError
	}
	if out.Result.Passed() {
		// A run without a verdict (N/A) succeeds when every sample it
		// sent was answered.
		return exitValid
	}
	return exitInvalid
}

// writeSamples writes the per-sample export to path, atomically.
func writeSamples(path string, run *loadgen.Run) error {
	dir := filepath.Dir(path)
	if err := atomicfile.Write(dir, filepath.Base(path), run.WriteSamples); err != nil {
		return err
	}
	return atomicfile.SyncDir(dir)
}

// logsLine names where the run's files are, and, when no --out chose it,
// that the directory is a new one.
func logsLine(dir string, outDefault bool) string {
	if outDefault {
		return fmt.Sprintf("logs: %s (a new directory under ./%s/; --out DIR chooses one)", dir, defaultOutBase)
	}
	return "logs: " + dir
}

// parseRunFlags turns the flags into an api.RunSpec, the daemon's run spec,
// and builds it with pkg/runspec as the daemon does: one path from a
// request to a run. Errors name the flag of the spec field at fault.
func parseRunFlags(args []string, stderr io.Writer) (runRequest, error) {
	var req runRequest
	f := newRunFlags()
	if err := f.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			f.fs.SetOutput(stderr)
			fmt.Fprintln(stderr, "usage: loadgend run --target URL --model NAME [flags]")
			f.fs.PrintDefaults()
		}
		return req, suggest.FlagError(f.fs, err)
	}
	if f.fs.NArg() > 0 {
		return req, fmt.Errorf("unexpected argument %q", f.fs.Arg(0))
	}
	if err := req.level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return req, fmt.Errorf("--log-level: %q is not debug, info, warn or error", f.logLevel)
	}
	req.mode, req.latency, req.samplesOut = f.mode, f.latency, f.samplesOut
	if req.latency && req.mode != modePerformance {
		return req, fmt.Errorf("--latency prints one run's spectrum: use it with --mode %s (each trial's directory has %s)", modePerformance, runlog.SpectrumFile)
	}
	if req.samplesOut != "" && req.mode != modePerformance {
		return req, fmt.Errorf("--samples-out exports one run's samples: use it with --mode %s", modePerformance)
	}
	switch req.mode {
	case modePerformance, modeFindPeak, modeSweep, modeAccuracy:
	default:
		return req, fmt.Errorf("--mode: %q is not %s, %s, %s or %s", req.mode, modePerformance, modeFindPeak, modeSweep, modeAccuracy)
	}
	if name := f.sweep.given(); name != "" && req.mode != modeSweep {
		return req, fmt.Errorf("%s: only with --mode sweep", name)
	}
	spec, env, err := f.runSpec()
	if err != nil {
		return req, err
	}
	if req.mode == modeAccuracy && (spec.Shaped() || spec.Sessions != "") {
		return req, fmt.Errorf("--%s: an accuracy run sends every sample once, on no schedule: a load shape is a performance run's (--mode %s)", f.flagOf[spec.ShapeField()], modePerformance)
	}
	if req.mode == modeAccuracy && spec.Overrides.WarmupMs != nil {
		return req, errors.New("--warmup-ms: an accuracy run has no warm-up (it sends every sample once); leave the flag out")
	}
	// A daemon's run is built and checked by the daemon, under its own
	// data root and secrets: its refusals come back naming the field.
	if remote, err := f.remote(&req, spec); remote || err != nil {
		return req, err
	}
	run, err := runspec.Build(spec, env)
	if err != nil {
		return req, f.explain(err)
	}
	req.spec, req.search = run.Spec, run.Search
	return req, nil
}

// runFlags are `loadgend run`'s flags: most fill a field of the spec,
// the rest are the CLI's own or hold what the spec takes in other units.
type runFlags struct {
	*specFlags
	settings                        settingsFlags
	out, logLevel, mode, samplesOut string
	coordinator                     string
	latency                         bool
	httpClient, grpcClient          string
	noEarlyVerdict                  bool
	tls                             tlsFlags
	requestTimeout, issueSlack      time.Duration
	headers                         headerFlags
	findPeak                        *findPeakFlags
	sweep                           *sweepFlags
	serverMetrics                   serverMetricsFlags
}

func newRunFlags() *runFlags {
	f := &runFlags{specFlags: newSpecFlags()}
	fs, spec, o := f.fs, &f.spec, &f.spec.Overrides
	f.str(&spec.Target, "target", "target", "", "the endpoint: http[s]://host[:port][/prefix] or grpc[s]://host[:port] (required; port 80 or 443 when left out)")
	f.str(&spec.Model, "model", "model", "", "model name (required)")
	f.str(&spec.ModelVersion, "model-version", "model_version", "", "model version (default: the server's)")
	// The settings flags first: schedule and rejudge register them too.
	f.addTraceFlags(&f.settings)
	f.addJudgeFlags(&f.settings)
	f.addIssuersFlag()
	f.integer(&spec.BatchSize, "batch-size", "batch_size", 0, "samples per request when a query is split (Offline)")
	f.integer(&spec.MaxInflight, "max-inflight", "max_inflight", 0, "requests outstanding per query (Offline; 0 = no cap)")
	f.str(&spec.Data, "data", "data", "", "samples: a directory (.npy or .bin/.raw files, a subdirectory or stacked file per input), a .npy/.bin file (single input) or perf_analyzer JSON (default: synthetic from the model's metadata); for a generative model, a FILE.jsonl of prompts ({\"prompt\"}, {\"messages\"} or ShareGPT {\"conversations\"} per line, optional max_tokens/output_len)")
	f.str(&spec.InputTokens, "input-tokens", "input_tokens", "", "generative models: synthetic prompt length in pseudo-tokens (whitespace-separated words): N, uniform:LO:HI, normal:MEAN:SD or lognormal:MEDIAN:SIGMA (default 1024)")
	f.str(&spec.OutputTokens, "output-tokens", "output_tokens", "", "generative models: requested output length (max_tokens), same syntax as --input-tokens (default 128; with --data FILE.jsonl, for prompts that give none)")
	f.str(&spec.SharedPrefix, "shared-prefix", "shared_prefix", "", "generative models: COUNT:TOKENS, COUNT shared system prompts of TOKENS pseudo-tokens before the synthetic prompts (sample i takes prefix i mod COUNT)")
	fs.StringVar(&f.out, "out", "", "directory for the LoadGen logs, result.json, latency.hlog, timeseries.csv/.json, samples.txt and latency_spectrum.txt (default: a new directory ./"+defaultOutBase+"/DATE-TIME-SCENARIO-MODEL)")
	fs.BoolVar(&f.latency, "latency", false, "print the latency percentile spectrum and a histogram after the verdict (as wrk2 --latency)")
	f.str(&spec.SLO, "slo", "slo", "", "objectives, ttft=DUR,tpot=DUR,e2e=DUR,latency=DUR (any of them, each optionally @pNN, e.g. ttft=500ms@p90,tpot=50ms): result.json's tokens.goodput_samples_per_second is the rate of samples meeting them; a load shape's verdict is each bound at its percentile (default p99)")
	fs.StringVar(&f.samplesOut, "samples-out", "", "write every sample of the run to FILE.jsonl, a JSON object a line: sample, index, scheduled, sent, first_token, last_token (ns since the run's start), tokens, input_tokens, status")
	f.str(&spec.SUTName, "sut-name", "sut_name", "", "sut_name in the logs (default names the target; contains \"Network SUT\")")
	fs.BoolVar(&spec.JSON, "json", false, "send tensors as JSON instead of the binary extension (HTTP)")
	f.flagOf["json"] = "json"
	f.integer(&spec.Conns, "conns", "conns", 0, "HTTP connection pool size (default: from the rate by Little's law)")
	f.str(&f.httpClient, "http-client", "http_client", sut.HTTPClientLoop, "HTTP performance client: loop (one goroutine, its own epoll; Linux) or pool (a goroutine per request); runs that log responses use pool")
	f.str(&f.grpcClient, "grpc-client", "grpc_client", sut.GRPCClientLoop, "gRPC performance client: loop (one goroutine, its own HTTP/2 connections; Linux) or grpc (grpc-go); runs that log responses use grpc. For kserve-stream over grpc://, loop is grpcloop's own ModelStreamInfer client (any platform, accuracy runs too)")
	f.str(&spec.API, "api", "api", "", "a generative (LLM) endpoint's protocol: kserve-stream (gRPC ModelStreamInfer), generate or generate-stream (Triton's HTTP generate extension), openai-completions or openai-chat (default: what the probe finds; tensors when it finds no LLM)")
	f.duration(&f.requestTimeout, "request-timeout", "request_timeout_ms", "bound on one request (0 = none)")
	f.integer(&spec.MaxResponseBytes, "max-response-bytes", "max_response_bytes", 0, "bound on one answer's body in bytes, on both HTTP tensor clients (0 = the default, 64 MiB; at most 1 GiB): past it the sample fails too_large and the answer is read no further. The answers being read at once hold at most 4 times it (at least 256 MiB) over all connections")
	f.duration(&f.issueSlack, "issue-slack", "issue_slack_ns", "how late the kernel may wake the issuer for a due query, to wake once for several (Server, event-loop clients; 0 = 5% of the latency bound, at most 500µs and ten mean gaps between queries; the lateness is measured and counts in latency)")
	f.uint(&o.DrainTimeoutMs, "drain-timeout-ms", "settings.drain_timeout_ms", "wait for outstanding responses after issuing ends (default: the engine's)")
	f.uint(&o.WarmupMs, "warmup-ms", "settings.warmup_ms", "send the scenario's load for this long before the timed run and discard it (result.json's warmup counts it)")
	f.boolean(&o.EarlyVerdict, "early-verdict", "settings.early_verdict", "stop issuing as soon as the verdict INVALID can no longer change (the default for performance runs)")
	fs.BoolVar(&f.noEarlyVerdict, "no-early-verdict", false, "run LoadGen's full length even once the verdict INVALID can no longer change")
	fs.Var(&f.headers, "header", "'Name: value' added to every request, the probe's too (repeatable): HTTP headers and gRPC metadata; Host sets the Host header and gRPC :authority; a value @env:VAR is read from the environment, @file:PATH from a file (one trailing newline trimmed), and shown as that reference; a literal value is shown as <redacted>")
	f.flagOf["headers"] = "header"
	f.uint(&o.Concurrency, "concurrency", "settings.concurrency", "closed loop: keep N requests outstanding, each completion sending the next, for --min-duration-ms (scenario SingleStream's samples; latency from the send; not an MLPerf scenario: no VALID/INVALID, no LoadGen logs)")
	f.tls.add(f.specFlags)
	f.addServerMetricsFlags(&f.serverMetrics)
	f.addSessionFlags()
	f.addServerStatisticsFlag()
	fs.StringVar(&f.logLevel, "log-level", "warn", "debug, info, warn or error")
	fs.StringVar(&f.mode, "mode", modePerformance, "performance (one run), find-peak (a peak search), sweep (one trial per rate of --rates or --rate-range) or accuracy (every sample once, responses logged)")
	f.findPeak = addFindPeakFlags(f.specFlags)
	f.sweep = addSweepFlags(f.specFlags)
	f.addRemoteFlags()
	return f
}

// runSpec is the spec the parsed flags ask for, and where it runs.
func (f *runFlags) runSpec() (api.RunSpec, runspec.Env, error) {
	spec := &f.spec
	// A flag left out leaves its field unset, as a key left out of a spec:
	// the ruleset's, the preset's or the conf's value stands.
	f.applySet()
	if err := f.settings.fill(spec, f.set); err != nil {
		return *spec, runspec.Env{}, err
	}
	if f.noEarlyVerdict {
		if spec.Overrides.EarlyVerdict != nil {
			return *spec, runspec.Env{}, errors.New("--early-verdict and --no-early-verdict: give one of them")
		}
		spec.Overrides.EarlyVerdict = new(false)
	}
	if f.set["concurrency"] && !f.set["scenario"] {
		// A closed loop sends SingleStream's samples; Server, the flag's
		// default, has a schedule it would not follow.
		spec.Scenario = "SingleStream"
	}
	if f.set["http-client"] {
		spec.HTTPClient = f.httpClient
	}
	if f.set["grpc-client"] {
		spec.GRPCClient = f.grpcClient
	}
	if err := setDurations(spec, f.requestTimeout, f.issueSlack); err != nil {
		return *spec, runspec.Env{}, err
	}
	hs, err := f.headers.spec()
	if err != nil {
		return *spec, runspec.Env{}, err
	}
	spec.Headers = hs
	if err := f.tls.fill(spec); err != nil {
		return *spec, runspec.Env{}, err
	}
	if err := f.serverMetrics.fill(spec); err != nil {
		return *spec, runspec.Env{}, err
	}
	switch f.mode {
	case modeFindPeak:
		s, err := f.findPeak.search(spec.Overrides.EarlyVerdict)
		if err != nil {
			return *spec, runspec.Env{}, err
		}
		spec.Search = s
	case modeSweep:
		for _, name := range []string{"search-start", "search-upper", "search-precision", "search-delta", "verify-runs", "max-trials", "trial-early-verdict", "goodput", "retry-failed-trials",
			"search-strategy", "scout-duration"} {
			if f.set[name] {
				return *spec, runspec.Env{}, fmt.Errorf("--%s: only with --mode find-peak; a sweep runs one trial per rate", name)
			}
		}
		s, err := f.sweep.search(spec.Overrides.EarlyVerdict)
		if err != nil {
			return *spec, runspec.Env{}, err
		}
		s.TrialWarmupMs = f.findPeak.s.TrialWarmupMs // a sweep's trials warm up too
		spec.Search = s
	}
	// The user's own environment and files: any variable, any path.
	secrets := secret.Sources{Env: os.LookupEnv}
	env := f.settings.env()
	env.OutDir, env.AnyData, env.Secrets = f.out, true, secrets
	return *spec, env, nil
}

// setDurations writes the duration flags into the spec's fields, in the
// spec's units.
func setDurations(spec *api.RunSpec, requestTimeout, issueSlack time.Duration) error {
	if requestTimeout < 0 {
		return fmt.Errorf("--request-timeout: must not be negative, got %v", requestTimeout)
	}
	if requestTimeout%time.Millisecond != 0 {
		return fmt.Errorf("--request-timeout: %v is not a whole number of milliseconds", requestTimeout)
	}
	spec.RequestTimeoutMs = uint64(requestTimeout / time.Millisecond)
	if issueSlack < 0 {
		return fmt.Errorf("--issue-slack: %v is not between 0 and %v", issueSlack, runner.MaxIssueSlack)
	}
	spec.IssueSlackNs = uint64(issueSlack)
	return nil
}

// specFlags registers flags onto the fields of an api.RunSpec and knows,
// for each field, the flag that fills it, so the spec's field errors name
// the flag the user typed.
type specFlags struct {
	fs   *flag.FlagSet
	spec api.RunSpec
	// flagOf is the flag of each spec field (its JSON path).
	flagOf map[string]string
	// onSet fills an optional field from its flag, once the flag was given.
	onSet map[string]func()
	set   map[string]bool
}

func newSpecFlags() *specFlags {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return &specFlags{fs: fs, flagOf: map[string]string{}, onSet: map[string]func(){}, set: map[string]bool{}}
}

func (f *specFlags) str(dst *string, name, field, def, usage string) {
	f.fs.StringVar(dst, name, def, usage)
	f.flagOf[field] = name
}

func (f *specFlags) integer(dst *int, name, field string, def int, usage string) {
	f.fs.IntVar(dst, name, def, usage)
	f.flagOf[field] = name
}

func (f *specFlags) duration(dst *time.Duration, name, field, usage string) {
	// The backquoted word names the value in -help, as flag.Duration's
	// "duration" does.
	f.fs.Var((*durationFlag)(dst), name, usage+"; a `duration` like 2s or 500ms")
	f.flagOf[field] = name
}

// durationFlag is flag.Duration with an error that says what to type:
// flag's own says only "parse error", and a bare number (the API's fields
// count milliseconds) is the likely mistake.
type durationFlag time.Duration

func (d *durationFlag) String() string { return time.Duration(*d).String() }

func (d *durationFlag) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		if _, nerr := strconv.ParseFloat(s, 64); nerr == nil {
			return errors.New("a duration like 2s or 500ms is expected (a bare number has no unit)")
		}
		return errors.New("a duration like 2s or 500ms is expected")
	}
	*d = durationFlag(v)
	return nil
}

// float, uint and boolean register a flag for an optional field, set only
// when the flag is given.
func (f *specFlags) float(dst **float64, name, field, usage string) {
	v := new(float64)
	f.fs.Float64Var(v, name, 0, usage)
	f.optional(name, field, func() { *dst = v })
}

func (f *specFlags) uint(dst **uint64, name, field, usage string) {
	v := new(uint64)
	f.fs.Uint64Var(v, name, 0, usage)
	f.optional(name, field, func() { *dst = v })
}

func (f *specFlags) boolean(dst **bool, name, field, usage string) {
	v := new(bool)
	f.fs.BoolVar(v, name, false, usage)
	f.optional(name, field, func() { *dst = v })
}

func (f *specFlags) optional(name, field string, fill func()) {
	f.flagOf[field] = name
	f.onSet[name] = fill
}

// applySet records which flags were given and fills their optional fields.
func (f *specFlags) applySet() {
	f.fs.Visit(func(fl *flag.Flag) {
		f.set[fl.Name] = true
		if fill, ok := f.onSet[fl.Name]; ok {
			fill()
		}
	})
}

// explain names the flag of the spec field an error is about ("--target-qps:
// must be a positive number"), or the LoadGen setting when no flag sets it
// (a conf file's value).
func (f *specFlags) explain(err error) error {
	fe, ok := errors.AsType[*api.FieldError](err)
	if !ok {
		return err
	}
	if name, ok := f.flagOf[fe.Field]; ok {
		return fmt.Errorf("--%s: %s", name, fe.Message)
	}
	return errors.New(strings.TrimPrefix(fe.Error(), "settings."))
}

// progressLine rewrites one status line on a terminal while a run goes,
// and clears it before anything else is printed.
type progressLine struct {
	w     io.Writer
	done  chan struct{} // closed by stop
	ended chan struct{} // closed by show once the line is cleared
	shown bool          // show was started (by Started, on stop's goroutine)
}

// show redraws the line every half second until stop.
func (p *progressLine) show(r *loadgen.Run) {
	defer close(p.ended)
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	bound := time.Duration(r.Settings().ServerTargetLatencyNs)
	if r.Settings().Scenario != trace.Server {
		bound = 0
	}
	var prev loadgen.Progress
	last := time.Now()
	for {
		select {
		case <-p.done:
			fmt.Fprint(p.w, "\r\033[K")
			return
		case <-tick.C:
		}
		cur, now := r.Progress(), time.Now()
		if cur.Started {
			fmt.Fprint(p.w, "\r\033[K"+progressText(cur, prev, now.Sub(last), bound))
		}
		prev, last = cur, now
	}
}

// stop ends the line: the line is cleared when it returns, so the verdict
// that follows starts a line of its own. A nil line does nothing.
func (p *progressLine) stop() {
	if p == nil {
		return
	}
	close(p.done)
	if p.shown {
		<-p.ended
	}
}

// progressText is one progress line: queries, the completion rate since the
// last line, time, and the tail latency against the bound (Server) with the
// samples over it.
func progressText(cur, prev loadgen.Progress, dt time.Duration, bound time.Duration) string {
	rate := 0.0
	if dt > 0 {
		rate = float64(cur.CompletedSamples-prev.CompletedSamples) / dt.Seconds()
	}
	line := progressFields(int64(cur.IssuedQueries), int64(cur.CompletedQueries), int64(cur.InFlightQueries), int64(cur.FailedSamples), rate,
		cur.Elapsed.Seconds(), cur.ExpectedEnd.Seconds(), float64(cur.P99)/1e6)
	if bound > 0 {
		line += fmt.Sprintf(" (bound %.2f ms, %d samples over)", float64(bound)/1e6, cur.OverLatencySamples)
	}
	return line
}

// progressFields is the progress line's text, for a local run (progressText)
// and one followed on a daemon (remoteProgressText) alike.
func progressFields(issued, done, inFlight, failed int64, rate, elapsedS, expectedS, p99Ms float64) string {
	return fmt.Sprintf("queries %d issued, %d done, %d in flight, %d failed samples | %.0f samples/s | %.1fs of ~%.1fs | p99 %.2f ms",
		issued, done, inFlight, failed, rate, elapsedS, expectedS, p99Ms)
}

// isTerminal reports whether w is a terminal (fileIsTerminal, per platform).
func isTerminal(w io.Writer) bool {
	if l, ok := w.(*lockedWriter); ok {
		w = l.w
	}
	f, ok := w.(*os.File)
	return ok && fileIsTerminal(f)
}

// lockedWriter serialises the writes of several goroutines to one writer.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
