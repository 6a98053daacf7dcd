package api

import "strings"

// RunSpec is the body of POST /v1/runs, and what `loadgend run`'s flags
// fill in: one run (or one peak search) against a KServe v2 endpoint.
// Decode it with DecodeRunSpec; pkg/runspec turns it into a run.
type RunSpec struct {
	// Target is http[s]://host[:port][/prefix] or grpc[s]://host[:port],
	// with no credentials, query or fragment (pkg/target).
	Target       string `json:"target"`
	Model        string `json:"model"`
	ModelVersion string `json:"model_version,omitempty"`
	// Scenario is LoadGen's name: SingleStream, MultiStream, Server or
	// Offline; "" is DefaultScenario, as `loadgend run` defaults to it.
	Scenario string `json:"scenario,omitempty"`
	// Ruleset is "loadgen6" (the default) or "v0.5".
	Ruleset string `json:"ruleset,omitempty"`
	// Preset is a task (resnet50, mobilenet, ssd-resnet34, ssd-mobilenet,
	// gnmt; loadgen6 only: llama2-70b, llama2-70b-interactive,
	// llama3.1-405b, mixtral-8x7b, gptj) whose official bound, interval,
	// percentile and minimums (and for the LLM tasks the token-latency
	// settings of LoadGen 6.0.17's mlperf.conf) apply after the conf texts
	// and before Settings.
	Preset string `json:"preset,omitempty"`
	// MLPerfConf and UserConf are the text of an mlperf.conf and a
	// user.conf (LoadGen's syntax), applied in that order before the preset
	// and Settings, for Model and Scenario, as LoadGen's FromConfig applies
	// them (under loadgen6 a UserConf without an MLPerfConf gets LoadGen
	// 6.0.17's built-in mlperf.conf first). They are given inline: the API
	// reads no files on the daemon's host for them.
	MLPerfConf string `json:"mlperf_conf,omitempty"`
	UserConf   string `json:"user_conf,omitempty"`
	// Overrides is the JSON "settings" block (pkg/runspec.Settings builds
	// the engine's settings from the whole spec).
	Overrides RunSettings `json:"settings,omitzero"`
	// Data is a sample file or directory on the daemon's host, or a .jsonl
	// prompt data set for a generative model; empty means synthetic
	// samples from the model's metadata (or synthetic prompts).
	Data   string  `json:"data,omitempty"`
	Search *Search `json:"search,omitempty"`
	// Headers are added to every request of the run, the probe's too:
	// HTTP headers and gRPC metadata (names lowercased) alike; Host sets
	// the HTTP Host header and gRPC's :authority, what an ingress routes
	// by. A value "@env:VAR" is the daemon's environment variable VAR
	// (only those named in LOADGEND_SECRET_ENV), "@file:PATH" a file's
	// contents (under LOADGEND_SECRETS_DIR), read when the run starts.
	// Values are secrets: stored and shown as the reference, a literal as
	// "<redacted>" (ShownHeaders), and the daemon keeps a literal only in
	// memory, so a queued run given one fails if the daemon restarts.
	Headers map[string]string `json:"headers,omitempty"`
	// SLO are the run's objectives, `--slo`'s syntax:
	// "ttft=500ms@p90,tpot=50ms,e2e=10s,latency=20ms", any subset, each
	// optionally at a percentile (genai.ParseSLO). Per sample,
	// result.json's tokens.goodput_samples_per_second is the rate of
	// samples meeting them; they never change a LoadGen scenario's verdict,
	// and are a load shape's (each bound at its percentile, default p99).
	SLO string `json:"slo,omitempty"`

	// Load shapes that are no LoadGen scenario (issue 31,
	// docs/load-shapes.md): the run is a Server schedule of their arrivals
	// and its verdict is its SLOs' (slo) or N/A. Stages are `--stages`
	// ("30s:100,60s:100->500": DURATION:RATE or DURATION:FROM->TO, one
	// after the other) and Arrivals `--arrivals` (poisson, the default,
	// constant or gamma:CV). Trace is a trace file (JSONL in Mooncake's
	// layout or the Azure LLM traces' CSV) under the daemon's
	// LOADGEND_DATA_ROOT, as data is, replayed at TraceSpeed (0: 1) from
	// TraceStartMs for TraceDurationMs (0: to its end) of its own time.
	// Mix is `--mix` ("identity=0.7,resnet50=0.3", MODEL=WEIGHT[@URL[;API]]):
	// each query's model drawn by weight; with a mix, model may be left
	// out (the first entry's). Stages and Trace exclude each other.
	Stages          string  `json:"stages,omitempty"`
	Arrivals        string  `json:"arrivals,omitempty"`
	Trace           string  `json:"trace,omitempty"`
	TraceSpeed      float64 `json:"trace_speed,omitempty"`
	TraceStartMs    uint64  `json:"trace_start_ms,omitempty"`
	TraceDurationMs uint64  `json:"trace_duration_ms,omitempty"`
	Mix             string  `json:"mix,omitempty"`

	// Request knobs (pkg/runner.Spec).
	BatchSize   int  `json:"batch_size,omitempty"`   // samples per request when Offline's query is split; 0: the server's limit
	MaxInflight int  `json:"max_inflight,omitempty"` // requests outstanding per query (Offline); 0: no cap
	Conns       int  `json:"conns,omitempty"`        // HTTP connection pool; 0: sized from the load
	JSON        bool `json:"json,omitempty"`         // tensors as JSON instead of the binary extension (HTTP)
	// RequestTimeoutMs bounds one request; 0: none (the drain still ends a run).
	RequestTimeoutMs uint64 `json:"request_timeout_ms,omitempty"`
	// MaxResponseBytes bounds one answer's body on the HTTP tensor clients
	// (`--max-response-bytes`); 0: 64 MiB. An answer past it fails with
	// outcome too_large and is read no further; the answers being read at
	// once hold at most 4 times it (at least 256 MiB) over all connections.
	MaxResponseBytes int `json:"max_response_bytes,omitempty"`
	// IssueSlackUs is how late, in µs, the kernel may wake the issuer for a
	// due query, to wake once for several (runner.Spec.IssueSlack); 0: the
	// default for the settings.
	IssueSlackUs uint64 `json:"issue_slack_us,omitempty"`
	// IssueSlackNs is IssueSlackUs in nanoseconds, for a slack below a
	// microsecond (`loadgend run --issue-slack 1ns`); give one of the two.
	IssueSlackNs uint64 `json:"issue_slack_ns,omitempty"`
	// HTTPClient chooses the HTTP performance client: "loop" (one
	// goroutine, its own epoll; Linux) or "pool" (a goroutine per
	// request); "": the loop where it runs, else the pool.
	HTTPClient string `json:"http_client,omitempty"`
	// GRPCClient chooses the gRPC performance client: "loop" (its own
	// HTTP/2 connections; Linux) or "grpc" (grpc-go); "": the loop where it
	// runs, else grpc-go.
	GRPCClient string `json:"grpc_client,omitempty"`
	// API is a generative endpoint's protocol: kserve-stream, generate,
	// generate-stream, openai-completions or openai-chat (genai.APIs);
	// "": what the probe finds (tensors when it finds no LLM).
	API string `json:"api,omitempty"`
	// TLS configures an https:// or grpcs:// target's TLS; left out, the
	// system's roots are trusted and the target's host is the server name.
	TLS *TLS `json:"tls,omitempty"`
	// SUTName is sut_name in the logs; the default names the target.
	SUTName string `json:"sut_name,omitempty"`
	// TotalSamples and PerformanceSamples size the synthetic library
	// (default 1024 each, as `loadgend run`); DataSeed seeds its contents.
	TotalSamples       int    `json:"total_samples,omitempty"`
	PerformanceSamples int    `json:"performance_samples,omitempty"`
	DataSeed           uint64 `json:"data_seed,omitempty"`
	// InputTokens, OutputTokens and SharedPrefix shape a generative run's
	// synthetic prompts (`--input-tokens`, `--output-tokens`,
	// `--shared-prefix`): length laws "N", "uniform:LO:HI",
	// "normal:MEAN:SD" or "lognormal:MEDIAN:SIGMA" in pseudo-tokens, and
	// "COUNT:TOKENS" (package genai parses them, pkg/runspec checks them).
	InputTokens  string `json:"input_tokens,omitempty"`
	OutputTokens string `json:"output_tokens,omitempty"`
	SharedPrefix string `json:"shared_prefix,omitempty"`

	// KeepSamples makes the daemon keep the run's per-sample export,
	// samples.jsonl (GET /v1/runs/{id}/samples.jsonl), whatever the
	// endpoint: a generative run keeps it anyway. `loadgend run
	// --coordinator` sets it for --samples-out.
	KeepSamples bool `json:"keep_samples,omitempty"`

	// The server's Prometheus metrics, scraped during the run
	// (docs/server-metrics.md). Left out, the target's own /metrics is
	// scraped every second if it answers at the probe (an http or https
	// target). ServerMetrics are the endpoints, http(s)://host[:port]/path,
	// with no credentials or query (the spec is stored: give credentials
	// as headers, which a URL on the target's host gets);
	// ServerMetricsIntervalMs the time between scrapes (0: 1000; at least
	// 100), a scrape slower than it abandoned; ServerMetricsMaxSeries
	// bounds the series kept over all endpoints (0: 5,000),
	// ServerMetricsMaxBytes one body (0: 16 MiB); NoServerMetrics scrapes
	// nothing, not even the default.
	ServerMetrics           []string `json:"server_metrics,omitempty"`
	ServerMetricsIntervalMs uint64   `json:"server_metrics_interval_ms,omitempty"`
	ServerMetricsMaxSeries  int      `json:"server_metrics_max_series,omitempty"`
	ServerMetricsMaxBytes   int64    `json:"server_metrics_max_bytes,omitempty"`
	NoServerMetrics         bool     `json:"no_server_metrics,omitempty"`
	// NoServerStatistics turns off the reads of the server's statistics
	// extension before, during and after the run (result.json's
	// server.statistics, the live server_queue_ns): `--no-server-statistics`.
	NoServerStatistics bool `json:"no_server_statistics,omitempty"`

	// Multi-turn sessions of a generative run (issue 31,
	// docs/load-shapes.md): Sessions is "RATE:TURNS" (new sessions a
	// second, turns a session as a length law) or "RATE:@FILE" (a data set
	// of conversations, a file under LOADGEND_DATA_ROOT); ThinkTime the
	// time between an answer and the next turn ("2s", "uniform:1s:3s",
	// "exponential:2s"). pkg/shape parses them, pkg/runspec builds them.
	Sessions  string `json:"sessions,omitempty"`
	ThinkTime string `json:"think_time,omitempty"`

	// The distributed run's fields (distributed.go): Workers 0 is a run on
	// the daemon itself; the others apply only with Workers ≥ 1.
	Workers               int      `json:"workers,omitempty"`
	WorkersWaitMs         *uint64  `json:"workers_wait_ms,omitempty"`
	MaxClockUncertaintyMs *float64 `json:"max_clock_uncertainty_ms,omitempty"`
	WorkerTimeoutMs       *uint64  `json:"worker_timeout_ms,omitempty"`
}

// DefaultScenario is a spec's scenario when it names none, in the API as
// in `loadgend run`.
const DefaultScenario = "Server"

// TLS is a run's TLS settings (`loadgend run`'s --tls-* flags). Keys stay
// on the daemon's host: the client certificate and key are @file:NAME
// references under LOADGEND_SECRETS_DIR, read at run start and held in
// memory only; the stored spec keeps the references.
type TLS struct {
	// CAPEM is PEM certificates trusted in addition to the system's roots
	// (--tls-ca FILE's contents).
	CAPEM string `json:"ca_pem,omitempty"`
	// ServerName is sent in SNI and checked against the certificate,
	// whatever the target's host (--tls-server-name).
	ServerName string `json:"server_name,omitempty"`
	// InsecureSkipVerify checks nothing of the server's certificate
	// (--tls-insecure): recorded in result.json, with a warning.
	InsecureSkipVerify bool `json:"insecure_skip_verify,omitempty"`
	// ClientCert and ClientKey are the client certificate and its key
	// for mutual TLS, both or neither: "@file:NAME" (--tls-cert,
	// --tls-key).
	ClientCert string `json:"client_cert,omitempty"`
	ClientKey  string `json:"client_key,omitempty"`
}

// FileRef is the prefix of a reference to a file on the daemon's host
// (under LOADGEND_SECRETS_DIR), the only form the client certificate and
// key take.
const FileRef = "@file:"

// check validates the TLS settings on their own; tlsTarget says whether
// the target is https:// or grpcs://.
func (t *TLS) check(tlsTarget bool) error {
	if t == nil {
		return nil
	}
	if !tlsTarget {
		return fieldErr("tls", "the target is not https:// or grpcs://: TLS settings apply to those only")
	}
	if len(t.ServerName) > maxNameLen {
		return fieldErr("tls.server_name", "longer than %d bytes", maxNameLen)
	}
	if strings.ContainsFunc(t.ServerName, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return fieldErr("tls.server_name", "%q is not a host name", t.ServerName)
	}
	for _, f := range []struct{ name, v string }{{"tls.client_cert", t.ClientCert}, {"tls.client_key", t.ClientKey}} {
		if f.v != "" && (!strings.HasPrefix(f.v, FileRef) || len(f.v) == len(FileRef)) {
			// Never quoted: it may be a key pasted in.
			return fieldErr(f.name, "must be a reference @file:NAME to a file under the daemon's LOADGEND_SECRETS_DIR, not the certificate or key itself")
		}
	}
	if (t.ClientCert == "") != (t.ClientKey == "") {
		field := "tls.client_key"
		if t.ClientCert == "" {
			field = "tls.client_cert"
		}
		return fieldErr(field, "tls.client_cert and tls.client_key go together: give both (the client certificate and its key)")
	}
	return nil
}

// RunSettings override LoadGen's TestSettings after the ruleset defaults,
// the preset and the conf texts. Unset (nil) fields keep what those gave.
//
// The first group are the `loadgend run` flags' conveniences; the second
// are LoadGen's own TestSettings names (pkg/loadgen.Settings' JSON tags)
// for a single field. Setting a convenience and a LoadGen name that write
// the same setting is refused as ambiguous.
type RunSettings struct {
	// TargetQPS is server_target_qps (Server) and offline_expected_qps
	// (Offline); both are set, as the CLI's --target-qps does.
	TargetQPS *float64 `json:"target_qps,omitempty"`
	// TargetLatencyMs is server_target_latency_ns in milliseconds.
	TargetLatencyMs *float64 `json:"target_latency_ms,omitempty"`
	// LatencyPercentile sets the three *_target_latency_percentile. A
	// fraction in (0, 1), or a percent in (1, 100) as the CLI accepts it:
	// 0.99 and 99 are the same.
	LatencyPercentile *float64 `json:"latency_percentile,omitempty"`
	// ExpectedLatencyNs sets single_ and multi_stream_expected_latency_ns.
	ExpectedLatencyNs *float64 `json:"expected_latency_ns,omitempty"`
	// SamplesPerQuery is multi_stream_samples_per_query (the stream count).
	SamplesPerQuery *uint64 `json:"samples_per_query,omitempty"`
	// IntervalMs is v0.5 MultiStream's issue interval: multi_stream_target_qps = 1000/interval_ms.
	IntervalMs *float64 `json:"interval_ms,omitempty"`
	// UseTokenLatencies is LoadGen's use_token_latencies (the LLM tasks):
	// a Server run is judged by time to first token and time per output
	// token at the target percentile, against TTFTLatencyMs and
	// TPOTLatencyMs, instead of by query latency.
	UseTokenLatencies *bool `json:"use_token_latencies,omitempty"`
	// TTFTLatencyMs and TPOTLatencyMs are server_ttft_latency and
	// server_tpot_latency in ms (mlperf.conf's ttft_latency and
	// tpot_latency); they need use_token_latencies.
	TTFTLatencyMs *float64 `json:"ttft_latency_ms,omitempty"`
	TPOTLatencyMs *float64 `json:"tpot_latency_ms,omitempty"`
	// InferTokenLatencies and TokenLatencyScalingFactor are LoadGen's
	// infer_token_latencies and token_latency_scaling_factor (gptj):
	// token figures inferred as that many tokens per sample.
	InferTokenLatencies       *bool   `json:"infer_token_latencies,omitempty"`
	TokenLatencyScalingFactor *uint64 `json:"token_latency_scaling_factor,omitempty"`

	MinDurationMs                  *uint64 `json:"min_duration_ms,omitempty"`
	MaxDurationMs                  *uint64 `json:"max_duration_ms,omitempty"` // 0: no limit, as LoadGen
	MinQueryCount                  *uint64 `json:"min_query_count,omitempty"`
	MaxQueryCount                  *uint64 `json:"max_query_count,omitempty"` // 0: no limit, as LoadGen
	QSLRNGSeed                     *uint64 `json:"qsl_rng_seed,omitempty"`
	SampleIndexRNGSeed             *uint64 `json:"sample_index_rng_seed,omitempty"`
	ScheduleRNGSeed                *uint64 `json:"schedule_rng_seed,omitempty"`
	SampleConcatenatePermutation   *bool   `json:"sample_concatenate_permutation,omitempty"`
	PerformanceIssueUnique         *bool   `json:"performance_issue_unique,omitempty"`
	PerformanceIssueSame           *bool   `json:"performance_issue_same,omitempty"`
	PerformanceIssueSameIndex      *uint64 `json:"performance_issue_same_index,omitempty"`
	PerformanceSampleCountOverride *uint64 `json:"performance_sample_count_override,omitempty"`
	ServerMaxAsyncQueries          *uint64 `json:"server_max_async_queries,omitempty"`

	// LoadGen's names for what the conveniences above set.
	ServerTargetQPS                     *float64 `json:"server_target_qps,omitempty"`
	OfflineExpectedQPS                  *float64 `json:"offline_expected_qps,omitempty"`
	ServerTargetLatencyNs               *uint64  `json:"server_target_latency_ns,omitempty"`
	ServerTargetLatencyPercentile       *float64 `json:"server_target_latency_percentile,omitempty"`
	SingleStreamExpectedLatencyNs       *float64 `json:"single_stream_expected_latency_ns,omitempty"`
	SingleStreamTargetLatencyPercentile *float64 `json:"single_stream_target_latency_percentile,omitempty"`
	MultiStreamExpectedLatencyNs        *float64 `json:"multi_stream_expected_latency_ns,omitempty"`
	MultiStreamTargetLatencyPercentile  *float64 `json:"multi_stream_target_latency_percentile,omitempty"`
	MultiStreamSamplesPerQuery          *uint64  `json:"multi_stream_samples_per_query,omitempty"`
	MultiStreamTargetQPS                *float64 `json:"multi_stream_target_qps,omitempty"`

	// Engine knobs (pkg/loadgen.EngineSettings).
	DrainTimeoutMs *uint64 `json:"drain_timeout_ms,omitempty"`
	EarlyVerdict   *bool   `json:"early_verdict,omitempty"`
	// WarmupMs sends the scenario's load for this long before the timed
	// run and discards it (0: none); result.json's warmup counts it.
	WarmupMs *uint64 `json:"warmup_ms,omitempty"`
	// Concurrency makes the run a closed loop of that many outstanding
	// requests (scenario SingleStream): each completion sends the next at
	// once, for min_duration_ms. Not an MLPerf scenario: result.json has a
	// closed_loop block and validity "N/A".
	Concurrency *uint64 `json:"concurrency,omitempty"`
	// Issuers splits the issuing of a Server, Offline or closed-loop run
	// between this many issuers, each on its own OS thread with its own
	// event-loop client and its share of the connections (1: one, the
	// default): the trace, the statistics and the logs do not change.
	// SingleStream and MultiStream cannot be split.
	Issuers *uint64 `json:"issuers,omitempty"`
}

// Search modes (Search.Mode): SearchFindPeak, the highest Server QPS that
// still passes; SearchSweep, one trial per rate of Rates, in order.
const (
	SearchFindPeak = "find-peak"
	SearchSweep    = "sweep"
)

// MaxSweepRates bounds Search.Rates: each rate is a full run.
const MaxSweepRates = 100

// Search asks for a peak search instead of one run: trial after trial,
// each a run with its own logs, bisecting the target QPS between the
// bounds. Declared now so specs and stored runs keep their shape; the
// daemon accepts it only with Limits.AllowSearch.
type Search struct {
	Mode string `json:"mode"`
	// LowerQPS and UpperQPS bracket the peak; 0 lets the search find them
	// from settings.target_qps.
	LowerQPS float64 `json:"lower_qps,omitempty"`
	UpperQPS float64 `json:"upper_qps,omitempty"`
	// Precision ends the bisection when upper - lower is at most this many
	// QPS; 0: LoadGen's server_find_peak_qps_decimals_of_precision.
	Precision float64 `json:"precision,omitempty"`
	// VerifyRuns repeats the peak's trial this many times; the peak is the
	// highest target VALID every time.
	VerifyRuns int `json:"verify_runs,omitempty"`
	// Delta is v0.5's lowering of a candidate that failed verification, a
	// fraction; 0: 0.01.
	Delta float64 `json:"delta,omitempty"`
	// EarlyVerdict stops a trial as soon as it is certain to be INVALID
	// (default true for a search: a failing trial need not run to the end).
	EarlyVerdict *bool `json:"early_verdict,omitempty"`
	// MaxTrials bounds the number of trials; 0: the search's default.
	MaxTrials int `json:"max_trials,omitempty"`
	// GoodputPercent makes a find-peak a goodput search: a trial passes
	// when at least this percentage of the samples it issued met the
	// spec's slo (required), in (0, 100]; 0: judged as the ruleset does
	// (by TTFT and TPOT with use_token_latencies).
	GoodputPercent float64 `json:"goodput_percent,omitempty"`
	// Rates are a sweep's Server target QPS, one trial each, in order
	// (mode sweep only; at most MaxSweepRates).
	Rates []float64 `json:"rates,omitempty"`
	// StopSaturated ends a sweep after a trial that completed less than
	// 80% of its rate: the endpoint is saturated (mode sweep only).
	StopSaturated bool `json:"stop_saturated,omitempty"`
	// TraceSpeeds make a sweep's trials replays of the spec's trace at
	// these speeds (trace_speed), in order, instead of Server rates (mode
	// sweep with a trace only; give rates or trace_speeds).
	TraceSpeeds []float64 `json:"trace_speeds,omitempty"`
	// TrialWarmupMs is every trial's warm-up at its own rate, on the
	// connections the trial then uses, before its timed run (0: none).
	// Absent: settings.warmup_ms when given, else 10% of the minimum
	// duration, at most 1,000 ms.
	TrialWarmupMs *uint64 `json:"trial_warmup_ms,omitempty"`
	// RetryFailedTrials runs a find-peak trial that failed within a third
	// of its minimum duration, and would so bound the search from above,
	// again up to this many times before its failure stands (absent: 1;
	// 0: never; at most MaxRetryFailedTrials).
	RetryFailedTrials *int `json:"retry_failed_trials,omitempty"`
	// Strategy is a find-peak's: SearchScout (absent too) scouts the peak
	// with short trials and verifies it at full length, SearchFull runs
	// every trial at full length, as LoadGen's own search does.
	Strategy string `json:"strategy,omitempty"`
	// ScoutDurationMs is a scout trial's minimum duration (absent: 10% of
	// the full trial's, and at least as long as the percentile's
	// early-stopping minimum of queries takes at the trial's rate).
	ScoutDurationMs uint64 `json:"scout_duration_ms,omitempty"`
}

// Search strategies of a find-peak (Search.Strategy).
const (
	SearchScout = "scout"
	SearchFull  = "full"
)

// MaxRetryFailedTrials bounds Search.RetryFailedTrials: a server that
// fails early that often is failing.
const MaxRetryFailedTrials = 5
