package main

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/runspec"
)

// runspec.FlagTable, what POST /v1/runs/check writes command lines from,
// is the CLI's own registry of flags and spec fields, flag for flag: a
// flag added to `loadgend run` with a spec path must be added to the
// table, and one removed taken out.
func TestFlagTableIsTheCLIs(t *testing.T) {
	f := newRunFlags()
	table := map[string]string{}
	for _, fl := range runspec.FlagTable {
		if _, dup := table[fl.Path]; dup {
			t.Errorf("%s is in the table twice", fl.Path)
		}
		table[fl.Path] = fl.Name
		if f.fs.Lookup(fl.Name) == nil {
			t.Errorf("table flag --%s (%s) is not a flag of loadgend run", fl.Name, fl.Path)
		}
	}
	for path, name := range f.flagOf {
		if got, ok := table[path]; !ok || got != name {
			t.Errorf("loadgend run registers --%s for %s; the table has %q", name, path, got)
		}
	}
	for path, name := range table {
		if _, ok := f.flagOf[path]; !ok {
			t.Errorf("the table has --%s for %s; loadgend run registers no flag for it", name, path)
		}
	}
}

// cliSpec is the spec `loadgend run`'s own flag parsing fills from a
// command line CommandLine wrote.
func cliSpec(t *testing.T, cmd []string) api.RunSpec {
	t.Helper()
	if len(cmd) < 2 || cmd[0] != "loadgend" || cmd[1] != "run" {
		t.Fatalf("command line %q does not start with loadgend run", cmd)
	}
	f := newRunFlags()
	if err := f.fs.Parse(cmd[2:]); err != nil {
		t.Fatalf("loadgend run refuses %q: %v", cmd, err)
	}
	if f.fs.NArg() != 0 {
		t.Fatalf("left over arguments %q", f.fs.Args())
	}
	spec, _, err := f.runSpec()
	if err != nil {
		t.Fatalf("loadgend run refuses %q: %v", cmd, err)
	}
	return spec
}

// roundTripSpecs are rich specs: every field a flag carries set (across
// them), a find-peak search, sweeps of rates and of a trace's speeds,
// headers by reference, TLS, load shapes, a distributed run. Each sets
// what the CLI fills itself when its flag is left out (ruleset, a search's
// early verdict), so the round trip compares like with like.
func roundTripSpecs() map[string]string {
	return map[string]string{
		"every flag, find-peak": `{"target": "https://sut.example.com:8443/v2", "model": "resnet 50", "model_version": "3",
		  "scenario": "Server", "ruleset": "v0.5", "preset": "resnet50", "data": "/data/it's here.npy",
		  "input_tokens": "uniform:10:20", "output_tokens": "128", "shared_prefix": "4:64",
		  "sessions": "2:4", "think_time": "exponential:1s", "slo": "ttft=500ms@p90,tpot=50ms", "sut_name": "rig \"A\"",
		  "api": "openai-chat", "batch_size": 8, "max_inflight": 2, "conns": 16, "json": true, "http_client": "pool",
		  "grpc_client": "grpc", "request_timeout_ms": 1500, "max_response_bytes": 1048576, "issue_slack_ns": 250,
		  "total_samples": 100, "performance_samples": 50, "stages": "30s:100,60s:100->500", "arrivals": "gamma:2",
		  "trace": "t.jsonl", "trace_speed": 1.5, "trace_start_ms": 60000, "trace_duration_ms": 1, "mix": "a=0.7,b=0.3@http://h:1;generate",
		  "headers": {"Authorization": "@env:TOKEN", "X-Key": "@file:key.txt"},
		  "tls": {"server_name": "sut.internal", "insecure_skip_verify": true, "client_cert": "@file:c.pem", "client_key": "@file:k.pem"},
		  "server_metrics": ["http://h:9090/metrics", "http://h:9091/metrics?x=1"], "server_metrics_interval_ms": 500,
		  "server_metrics_max_series": 10, "server_metrics_max_bytes": 4096, "no_server_metrics": true, "no_server_statistics": true,
		  "workers": 3, "workers_wait_ms": 0, "max_clock_uncertainty_ms": 0.25, "worker_timeout_ms": 5000,
		  "settings": {"target_qps": 1234.5678, "target_latency_ms": 15, "latency_percentile": 0.99, "expected_latency_ns": 1e6,
		    "samples_per_query": 8, "interval_ms": 50, "min_duration_ms": 600000, "max_duration_ms": 0, "min_query_count": 270336,
		    "max_query_count": 18446744073709551615, "use_token_latencies": false, "ttft_latency_ms": 2000, "tpot_latency_ms": 200,
		    "infer_token_latencies": true, "token_latency_scaling_factor": 69, "qsl_rng_seed": 1, "sample_index_rng_seed": 2,
		    "schedule_rng_seed": 3, "sample_concatenate_permutation": true, "performance_issue_unique": false,
		    "drain_timeout_ms": 2500, "early_verdict": false, "warmup_ms": 250, "concurrency": 4, "issuers": 2},
		  "search": {"mode": "find-peak", "lower_qps": 100, "upper_qps": 5000, "precision": 0.5, "verify_runs": 5, "delta": 0.01,
		    "early_verdict": false, "max_trials": 12, "goodput_percent": 90, "trial_warmup_ms": 0, "retry_failed_trials": 3,
		    "strategy": "scout", "scout_duration_ms": 1500}}`,
		"find-peak with its default early verdict": `{"target": "http://h:1", "model": "identity", "scenario": "Server", "ruleset": "loadgen6",
		  "settings": {"target_qps": 500, "min_duration_ms": 2000}, "search": {"mode": "find-peak", "early_verdict": true}}`,
		"find-peak, LoadGen's own strategy": `{"target": "http://h:1", "model": "identity", "scenario": "Server", "ruleset": "loadgen6",
		  "search": {"mode": "find-peak", "early_verdict": true, "strategy": "full"}}`,
		"sweep of rates": `{"target": "grpc://h:2", "model": "identity", "scenario": "Server", "ruleset": "loadgen6",
		  "settings": {"early_verdict": true, "min_duration_ms": 1000},
		  "search": {"mode": "sweep", "rates": [100, 250.5, 1e5], "stop_saturated": true, "early_verdict": true}}`,
		"sweep of a trace's speeds": `{"target": "http://h:1", "model": "llm", "scenario": "Server", "ruleset": "loadgen6", "trace": "mooncake.jsonl",
		  "search": {"mode": "sweep", "trace_speeds": [0.5, 1, 2]}}`,
		"Offline over gRPC": `{"target": "grpcs://h:2", "model": "m", "scenario": "Offline", "ruleset": "loadgen6",
		  "tls": {"server_name": "x"}, "settings": {"target_qps": 2500.5, "max_query_count": 1}}`,
		"ramp with an SLO": `{"target": "http://h:1", "model": "llm", "scenario": "Server", "ruleset": "loadgen6",
		  "stages": "10s:1->20,20s:20", "arrivals": "constant", "slo": "e2e=2s"}`,
	}
}

// CommandLine then the CLI's own flag parsing gives back the spec, field
// for field; across the specs every flag of the table is written but
// those that take a file's text.
func TestCommandLineRoundTrip(t *testing.T) {
	written := map[string]bool{}
	for name, text := range roundTripSpecs() {
		var spec api.RunSpec
		if err := json.Unmarshal([]byte(text), &spec); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cmd, lost := runspec.CommandLine(spec)
		if len(lost) != 0 {
			t.Errorf("%s: not expressible %v", name, lost)
		}
		got := cliSpec(t, cmd)
		if !reflect.DeepEqual(got, spec) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(spec)
			t.Errorf("%s: %q\ngives back %s\nwant       %s", name, cmd, g, w)
		}
		for _, a := range cmd {
			if n, ok := strings.CutPrefix(a, "--"); ok {
				n, _, _ = strings.Cut(n, "=")
				written[n] = true
			}
		}
	}
	for _, f := range runspec.FlagTable {
		if !written[f.Name] && f.Kind != runspec.KindFileText {
			t.Errorf("no round-trip spec writes --%s (%s)", f.Name, f.Path)
		}
	}
}

// A header's literal value (a secret; stored as <redacted>) never reaches
// the command line: it is named in not_expressible instead, as are the
// fields the flags take as files and LoadGen's own settings names.
func TestCommandLineLeavesOutWhatNoFlagCarries(t *testing.T) {
	spec := api.RunSpec{Target: "https://h", Model: "m", Scenario: "Server",
		Headers:    map[string]string{"Authorization": "Bearer s3cr3t", "X-Ref": "@env:REF", "X-Shown": "<redacted>"},
		UserConf:   "*.Server.target_qps = 5\n",
		MLPerfConf: "x",
		TLS:        &api.TLS{CAPEM: "-----BEGIN CERTIFICATE-----"},
		Overrides:  api.RunSettings{ServerTargetQPS: new(10.0), TargetQPS: new(5.0)},
	}
	cmd, lost := runspec.CommandLine(spec)
	line := strings.Join(cmd, " ")
	for _, secret := range []string{"s3cr3t", "<redacted>", "BEGIN CERTIFICATE", "target_qps = 5"} {
		if strings.Contains(line, secret) {
			t.Errorf("the command line holds %q: %q", secret, cmd)
		}
	}
	want := []string{"headers.Authorization", "headers.X-Shown", "mlperf_conf", "settings.server_target_qps", "tls.ca_pem", "user_conf"}
	if !slices.Equal(lost, want) {
		t.Errorf("not expressible %v, want %v", lost, want)
	}
	got := cliSpec(t, cmd)
	if got.Headers["X-Ref"] != "@env:REF" || len(got.Headers) != 1 || *got.Overrides.TargetQPS != 5 {
		t.Errorf("the expressible part does not come back: %+v", got)
	}
}

// What the CLI cannot say of a search's early verdict is named: a
// find-peak that stops no trial early while settings.early_verdict is
// on, a sweep whose early verdict is not settings.early_verdict.
func TestCommandLineSearchEarlyVerdict(t *testing.T) {
	for name, spec := range map[string]api.RunSpec{
		"find-peak": {Target: "http://h:1", Model: "m", Scenario: "Server",
			Overrides: api.RunSettings{EarlyVerdict: new(true)}, Search: &api.Search{Mode: api.SearchFindPeak, EarlyVerdict: new(false)}},
		"sweep": {Target: "http://h:1", Model: "m", Scenario: "Server",
			Search: &api.Search{Mode: api.SearchSweep, Rates: []float64{1}, EarlyVerdict: new(true)}},
	} {
		_, lost := runspec.CommandLine(spec)
		if !slices.Equal(lost, []string{"search.early_verdict"}) {
			t.Errorf("%s: not expressible %v, want search.early_verdict", name, lost)
		}
	}
	// issue_slack_us is written as the same slack in ns.
	cmd, lost := runspec.CommandLine(api.RunSpec{Target: "http://h:1", Model: "m", IssueSlackUs: 150})
	if got := cliSpec(t, cmd); len(lost) != 0 || got.IssueSlackNs != 150000 {
		t.Errorf("issue_slack_us 150: %q, lost %v, gives issue_slack_ns %d", cmd, lost, got.IssueSlackNs)
	}
}
