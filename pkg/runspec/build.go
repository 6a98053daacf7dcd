// Package runspec turns a run spec (package api: the body of POST /v1/runs,
// and what `loadgend run`'s flags fill in) into what pkg/runner carries
// out. It is the one place a request becomes a run: the engine's settings
// are built here and nowhere else, and every check names the spec's field,
// which the CLI turns back into its flag.
package runspec

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/qsl"
	"github.com/netloadgen/netloadgen/pkg/runner"
	"github.com/netloadgen/netloadgen/pkg/search"
	"github.com/netloadgen/netloadgen/pkg/secret"
	"github.com/netloadgen/netloadgen/pkg/sut"
	"github.com/netloadgen/netloadgen/pkg/target"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// DefaultSamples is the synthetic library's size when a spec gives none.
const DefaultSamples = 1024

// Env is what a spec cannot say about where it runs.
type Env struct {
	// OutDir receives the run's files ("" writes none).
	OutDir string
	// DataRoot is the directory a spec's data may name files under (the
	// daemon's LOADGEND_DATA_ROOT); "" refuses data unless AnyData.
	DataRoot string
	// AnyData takes a data path as given: `loadgend run` reads the user's
	// own files, where the daemon must not let a caller name any.
	AnyData bool
	// Secrets are where the spec's references (header values, the TLS
	// client certificate and key) are read from: the
	// CLI's whole environment and any file; the daemon's are
	// LOADGEND_SECRET_ENV and LOADGEND_SECRETS_DIR (Admit and Decode).
	Secrets secret.Sources
	// NoSecretFiles refuses @file: references (the daemon without
	// LOADGEND_SECRETS_DIR; Secrets.FilesDir "" would allow any path).
	NoSecretFiles bool
	// MLPerfConfName and UserConfName name the conf texts in their parse
	// errors (the files the CLI read them from); "": the field names.
	MLPerfConfName, UserConfName string
}

// Run is a spec made ready to carry out.
type Run struct {
	// Spec is the run, or the base of a search's trials.
	Spec runner.Spec
	// Search makes the run a peak search over Spec's runs; nil for one run.
	Search *runner.Search
}

// Build checks s (api.RunSpec.CheckFields, then what its settings and
// knobs build) and makes it a Run. Every error is an *api.FieldError. It
// checks no api.Limits: Admit and Decode do.
func Build(s api.RunSpec, env Env) (Run, error) {
	r, _, err := build(s, env)
	return r, err
}

// Admit is Build under the daemon's limits: the spec's own bounds
// (api.RunSpec.Check) and those of the settings it builds, whatever wrote
// them (preset, conf text or override). The daemon admits a stored spec
// again when its run starts: a limit lowered or a data file removed since
// then fails the run with the reason.
func Admit(s api.RunSpec, lim api.Limits, outDir string) (Run, error) {
	lim = lim.WithDefaults()
	if err := s.Check(lim); err != nil {
		return Run{}, err
	}
	return admitChecked(s, lim, outDir)
}

// Decode reads a spec as the daemon receives it (api.DecodeRunSpec) and
// admits it: everything a run could fail on before it reaches the target
// fails here.
func Decode(r io.Reader, lim api.Limits) (api.RunSpec, error) {
	lim = lim.WithDefaults()
	s, err := api.DecodeRunSpec(r, lim)
	if err != nil {
		return api.RunSpec{}, err
	}
	if _, err := admitChecked(s, lim, ""); err != nil {
		return api.RunSpec{}, err
	}
	return s, nil
}

func admitChecked(s api.RunSpec, lim api.Limits, outDir string) (Run, error) {
	env := DaemonEnv(lim)
	env.OutDir = outDir
	r, src, err := build(s, env)
	if err != nil {
		return Run{}, err
	}
	qsl := trace.QSL{TotalSampleCount: uint64(r.Spec.TotalSamples), PerformanceSampleCount: uint64(r.Spec.PerformanceSamples)}
	ls := r.Spec.Settings
	if sh := ls.Shape; sh != nil {
		// The shape has its own rate and length: the Poisson trace's
		// bounds do not apply, the shape's own do.
		ls.Shape = nil
		if err := checkShapeSize(s, sh, lim); err != nil {
			return Run{}, err
		}
		ls.Scenario = trace.Server
		ls.MinQueryCount, ls.MinDurationMs = 0, 0
	}
	if err := checkBuilt(ls, src, qsl, lim); err != nil {
		return Run{}, err
	}
	return r, nil
}

func build(s api.RunSpec, env Env) (Run, map[string]string, error) {
	if err := s.CheckFields(); err != nil {
		return Run{}, nil, err
	}
	s.Model = mixModel(s)
	ls, src, err := buildSettings(s, confNames{mlperf: env.MLPerfConfName, user: env.UserConfName})
	if err != nil {
		return Run{}, nil, err
	}
	if err := checkDistributedLogs(s, ls); err != nil {
		return Run{}, nil, err
	}
	bs, err := buildShape(s, ls, env)
	if err != nil {
		return Run{}, nil, err
	}
	ls.Shape = bs.shape
	data, err := resolveData(s.Data, env)
	if err != nil {
		return Run{}, nil, err
	}
	if s.RequestTimeoutMs > uint64(math.MaxInt64/int64(time.Millisecond)) {
		return Run{}, nil, fieldErr("request_timeout_ms", "too large: %d", s.RequestTimeoutMs)
	}
	slack, err := issueSlack(s)
	if err != nil {
		return Run{}, nil, err
	}
	if err := checkClients(s); err != nil {
		return Run{}, nil, err
	}
	genAPI, err := checkAPI(s)
	if err != nil {
		return Run{}, nil, err
	}
	headers, err := resolveHeaders(s.Headers, env)
	if err != nil {
		return Run{}, nil, err
	}
	tlsCfg, err := buildTLS(s, env)
	if err != nil {
		return Run{}, nil, err
	}
	total, perf := librarySize(s)
	// Sample files give their own count, known when they are read: the
	// trace's size hardly depends on it.
	qsl := trace.QSL{TotalSampleCount: uint64(total), PerformanceSampleCount: uint64(perf)}
	if ls.Shape == nil {
		// A shape's arrivals are counted, and bounded, as its trace is made.
		if err := checkTraceSize(ls, src, qsl, trace.MaxSamples, fmt.Sprintf("the engine's limit of %d samples", trace.MaxSamples)); err != nil {
			return Run{}, nil, err
		}
	}
	prompts, err := buildPrompts(s, data, total, perf)
	if err != nil {
		return Run{}, nil, err
	}
	if isPromptData(data) {
		data = "" // the prompts carry it: no sample tensors
	}
	r := Run{Spec: runner.Spec{
		Target:             s.Target,
		Data:               data,
		Model:              s.Model,
		ModelVersion:       s.ModelVersion,
		Settings:           ls,
		BatchSize:          s.BatchSize,
		MaxInflight:        s.MaxInflight,
		Conns:              s.Conns,
		JSON:               s.JSON,
		TLS:                tlsCfg,
		HTTPClient:         s.HTTPClient,
		GRPCClient:         s.GRPCClient,
		API:                genAPI,
		RequestTimeout:     time.Duration(s.RequestTimeoutMs) * time.Millisecond,
		MaxResponseBytes:   s.MaxResponseBytes,
		IssueSlack:         slack,
		TotalSamples:       total,
		PerformanceSamples: perf,
		DataSeed:           s.DataSeed,
		Prompts:            prompts,
		SUTName:            s.SUTName,
		OutDir:             env.OutDir,
		KeepSamples:        s.KeepSamples,
		NoServerStatistics: s.NoServerStatistics,
		Headers:            headers,
		ServerMetrics:      serverMetrics(s),
	}}
	if bs.mix != nil {
		r.Spec.Mix = bs.mix.Entries
	}
	// Sessions last: they refuse another shape already built.
	if r.Spec.Conversations, err = buildSessions(s, &r.Spec.Settings, env); err != nil {
		return Run{}, nil, err
	}
	r.Search = buildSearch(s.Search, bs, r.Spec.Settings)
	return r, src, nil
}

// buildSearch is the spec's search block as the runner's, nil for one
// run; a sweep of trace speeds reopens the trace at each (bs.atSpeed).
func buildSearch(sp *api.Search, bs builtShape, ls loadgen.Settings) *runner.Search {
	if sp == nil {
		return nil
	}
	rs := &runner.Search{
		Options: search.Options{Start: sp.LowerQPS, Upper: sp.UpperQPS, Precision: sp.Precision, Delta: sp.Delta, VerifyRuns: sp.VerifyRuns,
			GoodputPercent: sp.GoodputPercent},
		// A failing trial need not run to its end: on unless asked off.
		EarlyVerdict: sp.EarlyVerdict == nil || *sp.EarlyVerdict,
		MaxTrials:    sp.MaxTrials,
		// No transient decides (issue 33): each trial warms up, and one
		// that failed early runs once more before it bounds the search.
		RetryFailed: 1,
	}
	rs.TrialWarmupMs, rs.TrialWarmupDefault = trialWarmup(sp, ls)
	if sp.Mode == api.SearchFindPeak {
		// Scout short, verify at full length (issue 33), unless asked for
		// LoadGen's own search.
		rs.Options.Strategy = search.StrategyScout
		if sp.Strategy == api.SearchFull {
			rs.Options.Strategy = search.StrategyFull
		}
		rs.ScoutDuration = time.Duration(sp.ScoutDurationMs) * time.Millisecond
	}
	if sp.RetryFailedTrials != nil {
		rs.RetryFailed = *sp.RetryFailedTrials
	}
	if sp.Mode == api.SearchSweep {
		// A sweep measures every rate: a trial cut short by its verdict
		// measures less, so it runs to its end unless asked.
		rs.EarlyVerdict = sp.EarlyVerdict != nil && *sp.EarlyVerdict
		rs.Rates, rs.StopSaturated = append([]float64(nil), sp.Rates...), sp.StopSaturated
		rs.RetryFailed = 0 // a sweep measures every rate; it bounds nothing
		if len(sp.TraceSpeeds) > 0 {
			rs.TraceSpeeds, rs.AtSpeed = append([]float64(nil), sp.TraceSpeeds...), bs.atSpeed
		}
	}
	return rs
}

// trialWarmup is the warm-up of each of a search's trials: the search's
// own, else settings.warmup_ms when given (nil, false: the base's, kept),
// else the default (true): runner.DefaultTrialWarmupMs of each trial's
// own minimum duration.
func trialWarmup(sp *api.Search, ls loadgen.Settings) (*uint64, bool) {
	if sp.TrialWarmupMs != nil {
		w := *sp.TrialWarmupMs
		return &w, false
	}
	return nil, ls.Engine.WarmupMs == 0
}

// librarySize is the sample library's total and performance sample
// counts: the spec's, or DefaultSamples where it gives none.
func librarySize(s api.RunSpec) (total, perf int) {
	total, perf = s.TotalSamples, s.PerformanceSamples
	if total == 0 {
		total = DefaultSamples
	}
	if perf == 0 {
		perf = DefaultSamples
	}
	return total, perf
}

// Schedule is what the trace of a run of s is generated from: the settings
// Build builds and the sizes of a synthetic sample library (a run with
// data files takes its sizes from the files). `loadgend schedule` prints
// that trace, so it and `loadgend run` share every default, conf and
// preset. It neither reads data nor checks the target: the trace depends
// on neither.
func Schedule(s api.RunSpec, env Env) (loadgen.Settings, trace.QSL, error) {
	s.Model = mixModel(s)
	ls, _, err := buildSettings(s, confNames{mlperf: env.MLPerfConfName, user: env.UserConfName})
	if err != nil {
		return ls, trace.QSL{}, err
	}
	bs, err := buildShape(s, ls, env)
	if err != nil {
		return ls, trace.QSL{}, err
	}
	ls.Shape = bs.shape
	if s.TotalSamples < 0 || s.PerformanceSamples < 0 {
		return ls, trace.QSL{}, fieldErr("total_samples", "the sample counts must not be negative")
	}
	total, perf := librarySize(s)
	return ls, trace.QSL{TotalSampleCount: uint64(total), PerformanceSampleCount: uint64(perf)}, nil
}

// resolveData is where the spec's data is read from: under env.DataRoot,
// or (the CLI) as given; either way checked to be samples before any
// connection is made.
func resolveData(data string, env Env) (string, error) {
	switch {
	case data == "":
		return "", nil
	case env.AnyData && env.DataRoot == "":
		if isPromptData(data) {
			return data, nil // read, and checked, by buildPrompts
		}
		if err := qsl.CheckPath(data); err != nil {
			return "", fieldErr("data", "%v", err)
		}
		return data, nil
	}
	return ResolveData(env.DataRoot, data)
}

// issueSlack is the spec's issue slack, from whichever of its two units
// it was given in (CheckFields refuses both).
func issueSlack(s api.RunSpec) (time.Duration, error) {
	field, v, unit, per := "issue_slack_us", s.IssueSlackUs, "µs", time.Microsecond
	if s.IssueSlackNs != 0 {
		field, v, unit, per = "issue_slack_ns", s.IssueSlackNs, "ns", time.Nanosecond
	}
	if limit := uint64(runner.MaxIssueSlack / per); v > limit {
		return 0, fieldErr(field, "%d %s is over the limit of %d %s", v, unit, limit, unit)
	}
	return time.Duration(v) * per, nil
}

// checkAPI reads the spec's api, refusing a name that is no API and an
// API the target's transport does not carry, naming the field.
func checkAPI(s api.RunSpec) (genai.API, error) {
	// The field names itself: the errors' own "api: " prefix would repeat it.
	msg := func(err error) string { return strings.TrimPrefix(err.Error(), "api: ") }
	a, err := genai.ParseAPI(s.API)
	if err != nil {
		return "", fieldErr("api", "%s", msg(err))
	}
	if t, err := target.Parse(s.Target); err == nil {
		if err := runner.CheckAPI(a, t); err != nil {
			return "", fieldErr("api", "%s", msg(err))
		}
	}
	return a, nil
}

// checkClients refuses client names pkg/sut does not have, naming the
// field.
func checkClients(s api.RunSpec) error {
	if err := sut.CheckClients(s.HTTPClient, ""); err != nil {
		return fieldErr("http_client", "%q is not %s or %s", s.HTTPClient, sut.HTTPClientLoop, sut.HTTPClientPool)
	}
	if err := sut.CheckClients("", s.GRPCClient); err != nil {
		return fieldErr("grpc_client", "%q is not %s or %s", s.GRPCClient, sut.GRPCClientLoop, sut.GRPCClientGRPC)
	}
	return nil
}

// checkDistributedLogs: a worker streams its latencies, not the responses
// an accuracy log keeps, so a distributed run cannot write one; it is
// refused rather than run without the log its settings ask for.
func checkDistributedLogs(s api.RunSpec, ls loadgen.Settings) error {
	if s.Workers == 0 {
		return nil
	}
	if ls.AccuracyLogSamplingTarget > 0 || ls.AccuracyLogProbability > 0 {
		return fieldErr("workers", "%d: a distributed run streams its workers' latencies, not their responses, so it keeps no accuracy log: leave accuracy_log_sampling_target and accuracy_log_probability out, or run on one host", s.Workers)
	}
	return nil
}
