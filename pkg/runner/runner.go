package runner

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/mlperflog"
	"github.com/netloadgen/netloadgen/pkg/outcome"
	"github.com/netloadgen/netloadgen/pkg/qsl"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/secret"
	"github.com/netloadgen/netloadgen/pkg/serverstats"
	"github.com/netloadgen/netloadgen/pkg/serverview"
	"github.com/netloadgen/netloadgen/pkg/shape"
	"github.com/netloadgen/netloadgen/pkg/sut"
	"github.com/netloadgen/netloadgen/pkg/target"
	"github.com/netloadgen/netloadgen/pkg/tlsconf"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// Spec is one run: where, what, how.
type Spec struct {
	Target       string
	Model        string
	ModelVersion string
	Settings     loadgen.Settings
	// BatchSize and MaxInflight shape Offline's requests (0: defaults).
	BatchSize   int
	MaxInflight int
	// Conns caps the HTTP connection pool (0: sized from the load).
	Conns int
	// JSON sends tensors as JSON instead of the binary extension (HTTP).
	JSON bool
	// TLS is the client configuration of an https:// or grpcs:// target,
	// built once by pkg/runspec (pkg/tlsconf); nil: the system's roots and
	// the target's host. It holds a client key in memory only.
	TLS *tls.Config
	// HTTPClient chooses the HTTP performance client: sut.HTTPClientLoop
	// (the default where it runs: Linux) or sut.HTTPClientPool. Runs that
	// capture responses always use the pool.
	HTTPClient string
	// GRPCClient chooses the gRPC performance client: sut.GRPCClientLoop
	// (the default where it runs: Linux) or sut.GRPCClientGRPC. Runs that
	// capture responses always use grpc-go, but for a generative
	// kserve-stream run over grpc:// the loop choice is grpcloop's
	// Generator, everywhere and capturing too (genClient).
	GRPCClient string
	// RequestTimeout bounds one request (0: none; the drain still ends a run).
	RequestTimeout time.Duration
	// MaxResponseBytes bounds one answer's body on the HTTP clients (0:
	// httpclient.DefaultMaxResponseBytes); the event loop takes the pool
	// client's.
	MaxResponseBytes int
	// IssueSlack is the timer slack of the event-loop clients' sleeps until
	// a query is due (0: IssueSlackFor the settings): how much later than
	// its due time the kernel may wake the issuer, to wake it once for
	// several due times. The lateness is measured and charged to latency
	// as any is.
	IssueSlack time.Duration
	// Data is a file or directory of samples (see package qsl); "" makes
	// synthetic samples from the model's metadata.
	Data string
	// Prompts are a generative run's samples (its QSL: sample i is
	// Prompts.Prompt(i)), synthetic or from a .jsonl data set (then Data
	// is ""); nil when the spec asked for none (a generative model found
	// by the probe then takes genai.NewSynthetic's defaults).
	Prompts *genai.Prompts
	// TotalSamples sizes the synthetic library (with Data, the files do).
	// PerformanceSamples caps the performance sample count either way.
	TotalSamples, PerformanceSamples int
	DataSeed                         uint64
	SUTName                          string
	OutDir                           string // "" writes no files
	// KeepSamples writes samples.jsonl into OutDir for any run, not only a
	// generative one (the spec's keep_samples).
	KeepSamples bool
	// API is the protocol of a generative endpoint (`--api`); "" is what
	// the probe finds, tensors when it finds no LLM.
	API genai.API
	// Headers are added to every request of the run, the probe's too
	// (HTTP headers, gRPC metadata; Host sets the Host header and
	// :authority). Their values are secrets, resolved in memory only:
	// logs and files show Shown.
	Headers []Header
	// ServerMetrics scrape the server's Prometheus metrics during the
	// run (servermetrics.go).
	ServerMetrics ServerMetrics
	// NoServerStatistics turns off the reads of the server's statistics
	// extension before, during and after the run (result.json's
	// server.statistics).
	NoServerStatistics bool

	// Conversations are a run with sessions' user messages when a data
	// set gives them (--sessions RATE:@FILE); nil: each turn's sample's.
	Conversations *genai.Conversations

	// Mix are the models of a load shape's mix (issue 31, mix.go): a
	// query goes to the entry its loadgen.Query.Model indexes, at the
	// entry's own target and API when it names them, else the run's. Nil:
	// every query goes to Model.
	Mix []shape.MixEntry

	// wrapGen, when set, wraps a generative run's client: a test's hook
	// (the truth test records every token's arrival through it). Unexported:
	// no setting reaches it.
	wrapGen func(genai.Client) genai.Client
}

// Header is a request header of a run: Value is sent, Shown is what
// logs, result.json and the LoadGen logs show ("<redacted>" for a literal
// value, the reference it was read from otherwise).
type Header struct {
	Name, Value, Shown string
}

// sent are the headers as the clients take them.
func sent(hs []Header) []kserve.Header {
	out := make([]kserve.Header, len(hs))
	for i, h := range hs {
		out[i] = kserve.Header{Name: h.Name, Value: h.Value}
	}
	return out
}

// ShownHeaders are hs as shown: "Name: <redacted>" or "Name: @env:VAR".
func ShownHeaders(hs []Header) []string {
	if len(hs) == 0 {
		return nil
	}
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Name + ": " + h.Shown
	}
	return out
}

// scrubbing is o with the run's text scrubbed of its secrets, and the
// scrubber (nil when there are none) for what the run returns: every
// header's value but Host's is a secret (a literal one is shown as
// <redacted>, secret.Shown), and a server may quote it back in an error body. The
// engine keeps the failures' text scrubbed and the log lines are, so the
// result, the run's files, its logs and the errors returned (a probe's
// included) never hold what a header sent, in any form the scrubber knows.
func scrubbing(spec Spec, o Options) (Options, *secret.Scrubber) {
	scr := Scrubber(spec)
	if scr == nil {
		return o, nil
	}
	o.Logger = scr.Logger(o.Logger)
	o.Engine = append(slices.Clip(o.Engine), loadgen.WithTextScrubber(scr.String))
	return o, scr
}

// Scrubber is the scrubber of spec's secrets, every header's value but
// Host's (nil when there are none): what a run's text is scrubbed of, here
// (scrubbing) or where a run carried out elsewhere comes back (a
// distributed run's coordinator, from its workers' text).
func Scrubber(spec Spec) *secret.Scrubber {
	vals := make([]string, 0, len(spec.Headers))
	for _, h := range spec.Headers {
		// Host routes, it does not authenticate: it is the name in the
		// run's own errors (dial, TLS), which must stay readable.
		if !strings.EqualFold(h.Name, kserve.HeaderHost) {
			vals = append(vals, h.Value)
		}
	}
	return secret.NewScrubber(vals...)
}

// Options observe a run.
type Options struct {
	Logger *slog.Logger
	// Started is called once the engine's run exists, before the clock
	// starts, so a caller can poll its Progress.
	Started func(*loadgen.Run)
	// Engine are further engine options (an observer for live metrics).
	Engine []loadgen.Option
	// Opened, when set, is called once the target is probed and the
	// samples are known, just before Started: what a worker of a
	// distributed run reports ready with (pkg/shardrun), which every
	// worker of the run must agree on.
	Opened func(Opened)
	// Scraping, when set, is called as the run starts scraping the
	// server's metrics, with what reads their latest values (the known
	// metrics'): the daemon's event stream carries them.
	Scraping func(latest func() []serverview.LiveValue)
	// ServerQueue, when set, gets the running server-queue figure from
	// the statistics extension, about once a second while the run lasts
	// (pkg/serverstats; never when the endpoint does not offer it).
	ServerQueue func(serverstats.Live)
}

// Opened is what a run found before its engine was built.
type Opened struct {
	Probe *Probe
	// Protocol is the target's scheme (http, https, grpc, grpcs).
	Protocol string
	// SUTName is the SUT's name in the run's logs.
	SUTName string
	// QSL is the sample library's counts.
	QSL loadgen.QSLCounts
}

// Outcome is a finished run.
type Outcome struct {
	Result *loadgen.Result
	Probe  *Probe
	// Accuracy are the responses a run with sampled accuracy logging
	// logged, in completion order, and Layout the outputs in their bytes.
	Accuracy []loadgen.AccuracyEntry
	Layout   []sut.OutputLayout
}

// session is everything a run needs before its engine exists: the probed
// target, the sample library and the SUT adapter.
type session struct {
	t    target.Target
	conn *connection
	pr   *Probe
	lib  sampleSet
	sut  *sut.Adapter
	// more are issuers 1 … N−1's SUTs (engine.issuers N > 1), each with
	// its share of the connections; sut is issuer 0's.
	more  []*sut.Adapter
	conns int
	tls   *tlsconf.Summary // nil: plain text
	// genLoop: a generative run's requests go by grpcloop's Generator.
	genLoop bool
	// mix is a model mix's sessions (mix.go), this one its first's; nil
	// without a mix.
	mix *mixSet
}

// engineSUT is what the engine drives: the mix's SUT, or the adapter's.
func (ss *session) engineSUT() loadgen.SUT {
	if ss.mix != nil {
		return ss.mix.sut
	}
	return ss.sut.SUT()
}

// open parses and probes the target, builds the library and the SUT.
func open(ctx context.Context, spec Spec, capture bool) (*session, error) {
	if len(spec.Mix) > 0 {
		return openMix(ctx, spec, capture)
	}
	t, err := target.Parse(spec.Target)
	if err != nil {
		return nil, err
	}
	if spec.Model == "" {
		return nil, fmt.Errorf("%w: no model named", target.ErrTarget)
	}
	check := spec.Settings
	if check.Mode == trace.AccuracyOnly {
		check.Mode = trace.PerformanceOnly
	}
	if err := check.Validate(); err != nil {
		return nil, err
	}
	if err := sut.CheckClients(spec.HTTPClient, spec.GRPCClient); err != nil {
		return nil, err
	}
	tlsCfg, err := tlsConfig(t, spec.TLS)
	if err != nil {
		return nil, err
	}
	if spec.IssueSlack < 0 || spec.IssueSlack > MaxIssueSlack {
		return nil, fmt.Errorf("issue slack %v: want 0 (default) up to %v", spec.IssueSlack, MaxIssueSlack)
	}
	conns := spec.Conns
	if conns <= 0 {
		conns = poolSize(spec.Settings)
	}
	conn, err := connect(ctx, t, conns, !spec.JSON, sent(spec.Headers), tlsCfg, spec.MaxResponseBytes)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			conn.probe.Close()
		}
	}()
	pr, err := probeRun(ctx, conn.probe, t, spec, tlsCfg)
	if err != nil {
		return nil, err
	}
	name := spec.SUTName
	if name == "" {
		name = "Network SUT (" + t.URL + ", " + spec.Model + ")"
	}
	if issuerCount(spec.Settings) > 1 && pr.API != "" {
		return nil, fmt.Errorf("%w (%d asked): a generative run's client reads its answers on its own goroutines, so issuers would split nothing; use 1", ErrIssuersClient, issuerCount(spec.Settings))
	}
	if spec.Settings.Sessions != nil && pr.API == "" {
		return nil, fmt.Errorf("%w: --sessions (multi-turn conversations) needs a generative model; %s is not one", ErrSessionsModel, spec.Model)
	}
	if pr.API != "" {
		ad, ps, loop, err := openGenerative(spec, t, conn, pr, name, capture)
		if err != nil {
			return nil, err
		}
		ok = true
		return &session{t: t, conn: conn, pr: pr, lib: ps, sut: ad, conns: conns, tls: tlsconf.Summarize(tlsCfg, t.Hostname()), genLoop: loop}, nil
	}
	ss := &session{t: t, conn: conn, pr: pr, conns: conns, tls: tlsconf.Summarize(tlsCfg, t.Hostname())}
	if err := ss.openTensor(spec, name, capture); err != nil {
		return nil, err
	}
	ok = true
	return ss, nil
}

// openTensor builds a tensor model's library and SUTs (one per issuer).
func (ss *session) openTensor(spec Spec, name string, capture bool) error {
	pr, t, conn := ss.pr, ss.t, ss.conn
	if spec.BatchSize > 1 && !pr.Batched {
		// sut.New would quietly send one sample per request instead.
		return fmt.Errorf("batch size %d: model %q has no batch dimension (max_batch_size 0)", spec.BatchSize, spec.Model)
	}
	lib, err := library(spec, pr)
	if err != nil {
		return err
	}
	so := sut.Options{
		Model: spec.Model, Version: spec.ModelVersion, MaxBatch: pr.MaxBatch,
		BatchSize: splitSize(spec.BatchSize, pr), MaxInflight: spec.MaxInflight,
		WholeQueries: spec.Settings.Scenario != trace.Offline, Timeout: spec.RequestTimeout, Name: name,
		Capture: capture, Expect: pr.Expect(spec.Model),
	}
	slack := spec.IssueSlack
	if slack == 0 {
		slack = IssueSlackFor(spec.Settings)
	}
	cfg := sut.Config{HTTP: conn.http, GRPC: conn.grpc, Addr: t.Host, Library: lib, Options: so,
		HTTPClient: spec.HTTPClient, GRPCClient: spec.GRPCClient, MaxConns: ss.conns, Slack: slack, TLS: t.TLS()}
	n := issuerCount(spec.Settings)
	cfg = sharedBudget(cfg, n)
	ad, err := sut.Open(splitConns(cfg, n, 0))
	if err != nil {
		return err
	}
	more, err := openIssuers(cfg, n, ad)
	if err != nil {
		ad.Close()
		return err
	}
	ss.lib, ss.sut, ss.more = lib, ad, more
	return nil
}

// close ends the session's SUTs, every issuer's.
func (ss *session) close() error {
	var mixErr error
	if ss.mix != nil {
		mixErr = ss.mix.close()
	}
	return errors.Join(ss.sut.Close(), closeAll(ss.more), mixErr)
}

// Run carries out spec. An error means the run could not start or could not
// finish its bookkeeping; a run that started always returns its Result, with
// files written, even when the SUT failed every request.
//
// With accuracy_log_sampling_target or accuracy_log_probability set (TEST01)
// responses are decoded and the sampled ones are logged: Outcome.Accuracy
// and the run's mlperf_log_accuracy.json hold them.
func Run(ctx context.Context, spec Spec, o Options) (*Outcome, error) {
	o, scr := scrubbing(spec, o)
	out, err := execute(ctx, spec, o)
	return out, scr.Error(err)
}

// execute is Run once the run's text is scrubbed (scrubbing).
func execute(ctx context.Context, spec Spec, o Options) (*Outcome, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	capture := spec.Settings.AccuracyLogSamplingTarget > 0 || spec.Settings.AccuracyLogProbability > 0
	ss, err := open(ctx, spec, capture)
	if err != nil {
		return nil, err
	}
	defer ss.conn.probe.Close()
	defer ss.close()
	t, pr := ss.t, ss.pr
	if ss.tls != nil && ss.tls.InsecureSkipVerify {
		log.Warn(insecureWarning, "target", t.URL)
	}
	q := &preparingQSL{lib: ss.lib, sut: ss.sut, preconnect: ss.sut.Preconnect, conns: ss.conns, owner: ss.sut, more: ss.more}
	if ss.mix != nil {
		q.lib, q.sut, q.preconnect = ss.mix, ss.mix, ss.mix.preconnect
	}
	// The result counts failures by the same classifier as the live metrics.
	base := []loadgen.Option{loadgen.WithLogger(log), loadgen.WithFailureClassifier(outcome.Names)}
	if len(ss.more) > 0 {
		base = append(base, loadgen.WithIssuerSUTs(issuerSUTs(ss.more)...))
	}
	// The statistics' read before the run comes first, then the first
	// scrape: the scrapes' time axis starts when that returns, the last
	// thing before the run's clock.
	stats := openStatistics(spec, ss, log)
	defer stats.close()
	base = append(base, stats.option(o.ServerQueue)...)
	ms, err := openServerMetrics(ctx, spec, t, log)
	if err != nil {
		return nil, err
	}
	if ms != nil {
		defer ms.abandon()
		base = append(base, ms.beforeStart(o.Scraping))
	}
	run, err := loadgen.NewRun(spec.Settings, ss.engineSUT(), q, append(base, o.Engine...)...)
	if err != nil {
		return nil, err
	}
	q.trace = run.Trace()
	if o.Opened != nil {
		o.Opened(Opened{Probe: pr, Protocol: t.Scheme, SUTName: ss.engineSUT().Name(),
			QSL: loadgen.QSLCounts{Total: ss.lib.TotalSampleCount(), Performance: ss.lib.PerformanceSampleCount()}})
	}
	if o.Started != nil {
		o.Started(run)
	}
	log.Info("run starting", "target", t.URL, "model", spec.Model, "http_loop", ss.sut.UsesHTTPLoop(), "grpc_loop", ss.sut.UsesGRPCLoop() || ss.genLoop, "scenario", run.Trace().Settings.Scenario.String(),
		"queries", run.Trace().Len(), "issuers", len(ss.more)+1, "api", pr.API, "batched", pr.Batched, "max_batch", pr.MaxBatch, "logs_responses", run.LogsResponses(),
		"headers", ShownHeaders(spec.Headers))
	suts := []pOwner{ss.sut}
	for _, a := range ss.more {
		suts = append(suts, a)
	}
	defer ownProcs(suts, ms != nil, log)()
	res, err := run.Execute(ctx)
	if err != nil {
		return nil, err
	}
	stats.finish(ctx, res, Scrubber(spec).String)
	res.Headers = ShownHeaders(spec.Headers)
	res.API = string(pr.API)
	if ms != nil {
		res.ServerMetrics = ms.stop(ctx)
	}
	recordTLS(res, ss.tls)
	out := &Outcome{Result: res, Probe: pr}
	if run.LogsResponses() {
		out.Accuracy, out.Layout = run.AccuracyLog(), ss.sut.Layout()
	}
	if spec.OutDir != "" {
		if run.LogsResponses() {
			if err := WriteAccuracyLog(spec.OutDir, out.Accuracy, out.Layout, accuracyTokens(spec.Settings)); err != nil {
				return out, fmt.Errorf("writing the run's files: %w", err)
			}
		}
		o := runlog.Options{TargetURL: t.URL, Model: spec.Model, Logger: log, KeepSamples: spec.KeepSamples, Extra: []mlperflog.Field{{Key: "protocol", Value: t.Scheme}, {Key: "batched", Value: fmt.Sprint(pr.Batched)}, {Key: "max_batch_size", Value: fmt.Sprint(pr.MaxBatch)}}}
		if len(res.Headers) > 0 {
			o.Extra = append(o.Extra, mlperflog.Field{Key: "headers", Value: strings.Join(res.Headers, "; ")})
		}
		if pr.API != "" {
			o.Extra = append(o.Extra, mlperflog.Field{Key: "api", Value: string(pr.API)})
		}
		if err := runlog.Write(spec.OutDir, run, res, o); err != nil {
			return out, fmt.Errorf("writing the run's files: %w", err)
		}
	}
	return out, nil
}

// library is the run's samples: from spec.Data, validated against the
// model's metadata before anything is sent, or synthetic.
func library(spec Spec, pr *Probe) (qsl.Library, error) {
	if spec.Data != "" {
		lib, err := qsl.Open(spec.Data, pr.Model, qsl.FilesOptions{Batched: pr.Batched, Performance: spec.PerformanceSamples})
		if err != nil {
			return nil, fmt.Errorf("sample data for model %q: %w", spec.Model, err)
		}
		return lib, nil
	}
	return qsl.NewSynthetic(pr.Model, qsl.SyntheticOptions{
		Batched: pr.Batched, Total: spec.TotalSamples, Performance: spec.PerformanceSamples, Seed: spec.DataSeed,
	})
}

// splitSize is the batch a large (Offline) query is cut into: the one asked
// for, else the model's max_batch_size, else, when the server does not say
// (no model configuration), unknownBatchSplit, because the adapter would
// otherwise send the whole query, possibly gigabytes, as one request.
func splitSize(asked int, pr *Probe) int {
	switch {
	case asked > 0:
		return asked
	case pr.Batched && pr.MaxBatch == unknownMaxBatch:
		return unknownBatchSplit
	}
	return 0
}

// MaxIssueSlack is the largest IssueSlack accepted.
const MaxIssueSlack = 10 * time.Millisecond

// IssueSlackFor is the default issue slack: for Server, 5% of the latency
// bound, at most 500 µs and at most ten mean gaps between queries;
// otherwise 0 (the thread's own, 50 µs). A wake-up of the issuer is the
// dearest thing in a query's cost on the Intel VM measured: ~27 µs of the
// issuer's CPU each (the sleep's timer and the switch from idle and back:
// rawio's BenchmarkSleepWake), and the write that wakes the server on the
// first request of each burst on top, where a system call costs ~0.1 µs; the rest of a query's cost is the same per request
// whatever the wake-ups (bench/RESULTS.md, "Issue 28: CPU per request vs
// wrk2"). So the CPU per request is set by how many requests share a
// wake-up: at 20,000 QPS, 200 µs woke the issuer ~2,900 times a second,
// 500 µs ~1,800 (about wrk2's own count at that rate), and cut the CPU per
// request by 15–20%, for an issue lateness of 0.33 ms at the median and
// 0.61 at p95 instead of 0.17 and 0.31.
// Ten gaps give as many queries a wake-up at higher rates: 200 µs at
// 50,000 QPS, 100 µs at 100,000 (fifteen, 300 µs at 50,000 QPS, saved a
// little more CPU, but the one-core null server's latency p99 then passed
// the 10 ms bound: 14–21 ms, INVALID in three alternated runs of three). The lateness is measured and charged to
// latency, so it is kept to a small part of the bound: a 10 ms bound gets
// 500 µs, a 1 ms bound 50 µs. Below a few thousand QPS the sleeps are long
// and park on a timer without slack, so the setting only matters where it
// saves wake-ups.
//
// On a VM whose host is busy, sleeps that long can lose the vCPU to other
// guests: side by side, the rows with 200 µs had 2.9–17.2% steal, the rows
// with 50 µs right after them 0.1–9.5%; alternated runs, 0–13 ticks against
// 1, lateness p99 up to 1.05 ms against 0.11. It is measured either way,
// and --issue-slack 50us keeps the kernel's default.
//
// With engine.issuers N, the gaps are each issuer's (N times the run's):
// every issuer sleeps and wakes on its own thread for its own queries.
func IssueSlackFor(s loadgen.Settings) time.Duration {
	if s.Scenario != trace.Server || s.ServerTargetLatencyNs == 0 || s.ServerTargetQPS <= 0 {
		return 0
	}
	// Each of N issuers wakes for its own 1/N of the queries: ten of its
	// own gaps give its wake-ups as many queries as one issuer's.
	perWake := time.Duration(wakeShare / (s.ServerTargetQPS / float64(issuerCount(s))) * 1e9)
	return max(min(time.Duration(s.ServerTargetLatencyNs/20), maxDefaultSlack, perWake), time.Microsecond)
}

// wakeShare is how many mean gaps between queries the default issue slack
// spans at most, and maxDefaultSlack its cap (IssueSlackFor).
const (
	wakeShare       = 10
	maxDefaultSlack = 500 * time.Microsecond
)

// maxPool is the largest pool poolSize sizes.
const maxPool = 1024

// preopen is how many connections open before the clock, within the
// pool's cap: as many as the peers' usual -c 32, enough for 32 requests in
// flight at once; the event-loop client opens more when its observed
// answer times say the load needs them (httploop, Little's law). Against a
// one-core server at 50k QPS (200 µs slack), a pool of 64 gave a lateness
// p99 of 0.46–0.96 ms, one of 32 gave 0.44–0.53 (bench/RESULTS.md).
const preopen = 32

// poolSize sizes the connection pool from the load by Little's law, with
// room for a tail four times the bound: outstanding = rate × latency.
func poolSize(s loadgen.Settings) int {
	if n := s.Engine.Concurrency; n > 0 {
		// A closed loop of n holds exactly n requests outstanding: one
		// connection each, so none waits for a connection.
		return n
	}
	if s.Shape != nil {
		// A load shape's rate is its own (stages, a trace's bursts), not
		// server_target_qps: the cap is the largest, and the clients open
		// connections as the load needs them.
		return maxPool
	}
	switch s.Scenario {
	case trace.Server:
		bound := float64(s.ServerTargetLatencyNs) / 1e9
		if bound <= 0 {
			bound = 0.1
		}
		return int(min(max(math.Ceil(s.ServerTargetQPS*bound*4), 8), maxPool))
	case trace.Offline:
		return 64
	}
	return 8
}

// sampleSet is a run's samples as the engine loads them: a tensor
// library or a generative run's prompts.
type sampleSet interface {
	TotalSampleCount() int
	PerformanceSampleCount() int
	Load(ctx context.Context, indices []int) error
}

// preparingQSL loads samples, then encodes every request of the trace and
// opens the connections: all of it before the engine starts its clock.
type preparingQSL struct {
	lib sampleSet
	sut interface {
		Prepare(ctx context.Context, tr *trace.Trace) error
	}
	preconnect func(ctx context.Context, n int) error
	conns      int
	trace      *trace.Trace
	// owner and more are issuer 0's and issuers 1 … N−1's SUTs of a run
	// of several issuers (more empty otherwise): more share owner's
	// requests, and each opens its share of the connections.
	owner *sut.Adapter
	more  []*sut.Adapter
}

func (p *preparingQSL) TotalSampleCount() int       { return p.lib.TotalSampleCount() }
func (p *preparingQSL) PerformanceSampleCount() int { return p.lib.PerformanceSampleCount() }

func (p *preparingQSL) Load(ctx context.Context, indices []int) error {
	if err := p.lib.Load(ctx, indices); err != nil {
		return err
	}
	if err := prepareIssuers(ctx, p.trace, p.sut, p.owner, p.more); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	open, n := min(p.conns, preopen), len(p.more)+1
	if err := p.preconnect(ctx, share(open, n, 0)); err != nil {
		return err
	}
	for i, a := range p.more {
		if err := a.Preconnect(ctx, share(open, n, i+1)); err != nil {
			return fmt.Errorf("issuer %d of %d: %w", i+1, n, err)
		}
	}
	return nil
}
