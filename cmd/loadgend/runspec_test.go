package main

import (
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/internal/testcert"
	"github.com/netloadgen/netloadgen/pkg/tlsconf"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/runspec"
	"github.com/netloadgen/netloadgen/pkg/search"
)

// TestFlagsBuildWhatTheSpecBuilds: `loadgend run`'s flags and the daemon's
// run spec that says the same thing become the same run, field for field,
// search included: both go through pkg/runspec.
func TestFlagsBuildWhatTheSpecBuilds(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "user.conf")
	confText := "m.Server.target_qps = 123\n*.Server.min_query_count = 500\n"
	if err := os.WriteFile(conf, []byte(confText), 0o644); err != nil {
		t.Fatal(err)
	}
	prompts := filepath.Join(dir, "prompts.jsonl")
	if err := os.WriteFile(prompts, []byte(`{"prompt": "a b c", "max_tokens": 9}`+"\n"+`{"prompt": "d"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ca := testcert.NewCA(t, "test-ca")
	client := ca.Client(t, "client", "loadgen")
	cases := []struct {
		name string
		args []string
		spec string
	}{{
		"grpcs with every TLS flag",
		[]string{"--target", "grpcs://gw.example.com", "--model", "m", "--scenario", "Server", "--tls-ca", ca.File, "--tls-server-name", "sut.internal",
			"--tls-cert", client.CertFile, "--tls-key", client.KeyFile, "--tls-insecure"},
		`{"target": "grpcs://gw.example.com", "model": "m", "scenario": "Server", "tls": {"ca_pem": ` + jsonString(string(ca.CertPEM)) + `,
		  "server_name": "sut.internal", "insecure_skip_verify": true, "client_cert": "@file:` + client.CertFile + `", "client_key": "@file:` + client.KeyFile + `"}}`,
	}, {
		"multi-turn sessions",
		[]string{"--target", "http://h:1", "--model", "m", "--min-duration-ms", "2000", "--sessions", "4:uniform:2:5", "--think-time", "exponential:1s"},
		`{"target": "http://h:1", "model": "m", "sessions": "4:uniform:2:5", "think_time": "exponential:1s", "settings": {"min_duration_ms": 2000}}`,
	}, {
		"no server statistics",
		[]string{"--target", "http://h:1", "--model", "m", "--no-server-statistics"},
		`{"target": "http://h:1", "model": "m", "no_server_statistics": true}`,
	}, {
		"Server over HTTP",
		[]string{"--target", "http://h:1", "--model", "m", "--scenario", "Server", "--target-qps", "100", "--min-duration-ms", "3000",
			"--min-query-count", "100", "--target-latency-ms", "200", "--conns", "4", "--issue-slack", "150us", "--http-client", "pool", "--warmup-ms", "250",
			"--max-response-bytes", "1048576"},
		`{"target": "http://h:1", "model": "m", "scenario": "Server", "conns": 4, "issue_slack_us": 150, "http_client": "pool", "max_response_bytes": 1048576,
		  "settings": {"target_qps": 100, "min_duration_ms": 3000, "min_query_count": 100, "target_latency_ms": 200, "warmup_ms": 250}}`,
	}, {
		"Offline over gRPC, every knob",
		[]string{"--target", "grpc://h:2", "--model", "m", "--model-version", "3", "--scenario", "Offline", "--target-qps", "2500.5",
			"--latency-percentile", "99", "--max-query-count", "1", "--drain-timeout-ms", "2500", "--early-verdict", "--batch-size", "8",
			"--max-inflight", "2", "--request-timeout", "1500ms", "--json", "--total-samples", "100", "--performance-samples", "50",
			"--grpc-client", "grpc", "--sut-name", "rig", "--qsl-seed", "1", "--sample-seed", "2", "--schedule-seed", "3",
			"--concat-perm", "--issue-unique", "--issue-slack", "1ns"},
		`{"target": "grpc://h:2", "model": "m", "model_version": "3", "scenario": "Offline", "batch_size": 8, "max_inflight": 2,
		  "request_timeout_ms": 1500, "json": true, "total_samples": 100, "performance_samples": 50, "grpc_client": "grpc", "sut_name": "rig",
		  "issue_slack_ns": 1,
		  "settings": {"target_qps": 2500.5, "latency_percentile": 99, "max_query_count": 1, "drain_timeout_ms": 2500, "early_verdict": true,
		    "qsl_rng_seed": 1, "sample_index_rng_seed": 2, "schedule_rng_seed": 3, "sample_concatenate_permutation": true,
		    "performance_issue_unique": true}}`,
	}, {
		"headers: a literal, a Host and a reference",
		[]string{"--target", "http://h:1", "--model", "m", "--header", "Authorization: Bearer x", "--header", "Host: a.example.com",
			"--header", "X-Key:@env:NETLOADGEN_TEST_FLAGKEY"},
		`{"target": "http://h:1", "model": "m", "scenario": "Server",
		  "headers": {"Authorization": "Bearer x", "Host": "a.example.com", "X-Key": "@env:NETLOADGEN_TEST_FLAGKEY"}}`,
	}, {
		"v0.5 MultiStream with a preset",
		[]string{"--target", "http://h:1", "--model", "m", "--ruleset", "v0.5", "--preset", "resnet50", "--scenario", "MultiStream",
			"--interval-ms", "50", "--samples-per-query", "6", "--expected-latency-ns", "500000"},
		`{"target": "http://h:1", "model": "m", "ruleset": "v0.5", "preset": "resnet50", "scenario": "MultiStream",
		  "settings": {"interval_ms": 50, "samples_per_query": 6, "expected_latency_ns": 500000}}`,
	}, {
		"server metrics",
		[]string{"--target", "http://h:1", "--model", "m", "--server-metrics", "http://h:8002/metrics", "--server-metrics", "https://g/metrics",
			"--server-metrics-interval", "250ms", "--server-metrics-max-series", "100", "--server-metrics-max-bytes", "65536"},
		`{"target": "http://h:1", "model": "m", "scenario": "Server", "server_metrics": ["http://h:8002/metrics", "https://g/metrics"],
		  "server_metrics_interval_ms": 250, "server_metrics_max_series": 100, "server_metrics_max_bytes": 65536}`,
	}, {
		"no server metrics",
		[]string{"--target", "http://h:1", "--model", "m", "--no-server-metrics"},
		`{"target": "http://h:1", "model": "m", "scenario": "Server", "no_server_metrics": true}`,
	}, {
		"a generative API",
		[]string{"--target", "grpc://h:2", "--model", "llm", "--api", "kserve-stream"},
		`{"target": "grpc://h:2", "model": "llm", "scenario": "Server", "api": "kserve-stream"}`,
	}, {
		"user.conf then a flag",
		[]string{"--target", "http://h:1", "--model", "m", "--user-conf", conf, "--min-query-count", "50"},
		`{"target": "http://h:1", "model": "m", "scenario": "Server", "user_conf": ` + jsonString(confText) + `, "settings": {"min_query_count": 50}}`,
	}, {
		"a v0.5 peak search",
		[]string{"--mode", "find-peak", "--target", "http://h:1", "--model", "m", "--ruleset", "v0.5", "--target-qps", "50",
			"--search-start", "20", "--search-upper", "100", "--search-precision", "10", "--search-delta", "0.05", "--verify-runs", "2",
			"--max-trials", "30", "--trial-early-verdict=false"},
		`{"target": "http://h:1", "model": "m", "ruleset": "v0.5", "scenario": "Server", "settings": {"target_qps": 50},
		  "search": {"mode": "find-peak", "lower_qps": 20, "upper_qps": 100, "precision": 10, "delta": 0.05, "verify_runs": 2,
		    "max_trials": 30, "early_verdict": false}}`,
	}, {
		"a peak search's trial warm-up and retries, 0 given as 0",
		[]string{"--mode", "find-peak", "--target", "http://h:1", "--model", "m", "--trial-warmup-ms", "0", "--retry-failed-trials", "2"},
		`{"target": "http://h:1", "model": "m", "scenario": "Server",
		  "search": {"mode": "find-peak", "early_verdict": true, "trial_warmup_ms": 0, "retry_failed_trials": 2}}`,
	}, {
		"a peak search's strategy and scout length",
		[]string{"--mode", "find-peak", "--target", "http://h:1", "--model", "m", "--search-strategy", "scout", "--scout-duration", "2.5s"},
		`{"target": "http://h:1", "model": "m", "scenario": "Server",
		  "search": {"mode": "find-peak", "early_verdict": true, "strategy": "scout", "scout_duration_ms": 2500}}`,
	}, {
		"LoadGen's own peak search",
		[]string{"--mode", "find-peak", "--target", "http://h:1", "--model", "m", "--search-strategy", "full"},
		`{"target": "http://h:1", "model": "m", "scenario": "Server", "search": {"mode": "find-peak", "early_verdict": true, "strategy": "full"}}`,
	}, {
		"a sweep's trial warm-up",
		[]string{"--mode", "sweep", "--target", "http://h:1", "--model", "m", "--rates", "100", "--trial-warmup-ms", "250"},
		`{"target": "http://h:1", "model": "m", "scenario": "Server", "search": {"mode": "sweep", "rates": [100], "trial_warmup_ms": 250}}`,
	}, {
		"a sweep over a rate range",
		[]string{"--mode", "sweep", "--target", "http://h:1", "--model", "m", "--rate-range", "100:300:100", "--sweep-stop-saturated"},
		`{"target": "http://h:1", "model": "m", "scenario": "Server", "search": {"mode": "sweep", "rates": [100, 200, 300], "stop_saturated": true}}`,
	}, {
		"an SLO",
		[]string{"--target", "http://h:1", "--model", "m", "--slo", "ttft=500ms,e2e=10s"},
		`{"target": "http://h:1", "model": "m", "scenario": "Server", "slo": "ttft=500ms,e2e=10s"}`,
	}, {
		"a closed loop",
		[]string{"--target", "http://h:1", "--model", "m", "--concurrency", "8", "--min-duration-ms", "500"},
		`{"target": "http://h:1", "model": "m", "scenario": "SingleStream", "settings": {"concurrency": 8, "min_duration_ms": 500}}`,
	}, {
		"two issuers",
		[]string{"--target", "http://h:1", "--model", "m", "--issuers", "2", "--target-qps", "20000"},
		`{"target": "http://h:1", "model": "m", "scenario": "Server", "settings": {"issuers": 2, "target_qps": 20000}}`,
	}, {
		"a closed loop of two issuers",
		[]string{"--target", "http://h:1", "--model", "m", "--concurrency", "8", "--issuers", "2"},
		`{"target": "http://h:1", "model": "m", "scenario": "SingleStream", "settings": {"concurrency": 8, "issuers": 2}}`,
	}, {
		"synthetic prompts for a generative model",
		[]string{"--target", "http://h:1", "--model", "llm", "--input-tokens", "uniform:10:20", "--output-tokens", "lognormal:64:0.5",
			"--shared-prefix", "2:16", "--total-samples", "50", "--performance-samples", "20"},
		`{"target": "http://h:1", "model": "llm", "scenario": "Server", "input_tokens": "uniform:10:20", "output_tokens": "lognormal:64:0.5",
		  "shared_prefix": "2:16", "total_samples": 50, "performance_samples": 20}`,
	}, {
		"a prompt data set",
		[]string{"--target", "http://h:1", "--model", "llm", "--data", prompts, "--output-tokens", "32"},
		`{"target": "http://h:1", "model": "llm", "scenario": "Server", "data": ` + jsonString(prompts) + `, "output_tokens": "32"}`,
	}, {
		"token latencies",
		[]string{"--target", "http://h:1", "--model", "llm", "--use-token-latencies", "--ttft-latency-ms", "450", "--tpot-latency-ms", "40.5"},
		`{"target": "http://h:1", "model": "llm", "scenario": "Server",
		  "settings": {"use_token_latencies": true, "ttft_latency_ms": 450, "tpot_latency_ms": 40.5}}`,
	}, {
		// gptj's inferred token latencies are refused (TestInferTokenLatenciesRefused).
		"an LLM preset",
		[]string{"--target", "http://h:1", "--model", "llm", "--preset", "mixtral-8x7b", "--scenario", "Offline", "--tpot-latency-ms", "150"},
		`{"target": "http://h:1", "model": "llm", "scenario": "Offline", "preset": "mixtral-8x7b",
		  "settings": {"tpot_latency_ms": 150}}`,
	}}
	t.Setenv("NETLOADGEN_TEST_FLAGKEY", "k")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, "out")
			req, err := parseRunFlags(append(c.args, "--out", out), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			lim := api.Limits{AllowSearch: true, SecretEnv: []string{"NETLOADGEN_TEST_FLAGKEY"}, SecretsDir: filepath.Dir(client.CertFile), DataRoot: dir}
			spec, err := runspec.Decode(strings.NewReader(c.spec), lim)
			if err != nil {
				t.Fatal(err)
			}
			run, err := runspec.Admit(spec, lim, out)
			if err != nil {
				t.Fatal(err)
			}
			// The TLS configurations: the same settings and client pair (a
			// system cert pool holds functions DeepEqual cannot compare).
			if got, want := tlsconf.Summarize(req.spec.TLS, ""), tlsconf.Summarize(run.Spec.TLS, ""); !reflect.DeepEqual(got, want) {
				t.Errorf("TLS: the flags build %+v, the spec %+v", got, want)
			}
			if req.spec.TLS != nil && (len(req.spec.TLS.Certificates) != 1 || !reflect.DeepEqual(req.spec.TLS.Certificates, run.Spec.TLS.Certificates)) {
				t.Error("TLS: the flags and the spec give different client certificates")
			}
			req.spec.TLS, run.Spec.TLS = nil, nil
			if !reflect.DeepEqual(req.spec, run.Spec) {
				t.Errorf("the flags build\n%+v\nthe spec builds\n%+v", req.spec, run.Spec)
			}
			if !reflect.DeepEqual(req.search, run.Search) {
				t.Errorf("the flags search %+v, the spec %+v", req.search, run.Search)
			}
		})
	}
}

// TestTokenFlagErrorsNameTheFlag: a token bound without
// --use-token-latencies is refused, naming the flag the user typed.
func TestTokenFlagErrorsNameTheFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"--ttft-latency-ms", "450"}, "--ttft-latency-ms"},
		{[]string{"--token-latency-scaling-factor", "69"}, "--token-latency-scaling-factor"},
		{[]string{"--use-token-latencies", "--tpot-latency-ms", "0"}, "--tpot-latency-ms"},
	} {
		_, err := parseRunFlags(append([]string{"--target", "http://h:1", "--model", "m", "--out", t.TempDir()}, c.args...), io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.flag) {
			t.Errorf("%v: %v, want an error naming %s", c.args, err, c.flag)
		}
	}
}

func jsonString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// A search's retries out of range, or given to a sweep, are refused
// naming --retry-failed-trials.
func TestRetryFlagErrorsNameTheFlag(t *testing.T) {
	for _, args := range [][]string{
		{"--mode", "find-peak", "--retry-failed-trials", "9"},
		{"--mode", "find-peak", "--retry-failed-trials", "-1"},
		{"--mode", "sweep", "--rates", "100", "--retry-failed-trials", "1"},
	} {
		_, err := parseRunFlags(append([]string{"--target", "http://h:1", "--model", "m", "--out", t.TempDir()}, args...), io.Discard)
		if err == nil || !strings.Contains(err.Error(), "--retry-failed-trials") {
			t.Errorf("%v: %v, want an error naming --retry-failed-trials", args, err)
		}
	}
}

// The scout strategy's flags are refused, naming the flag, when the value
// is not one, when it contradicts --search-strategy full, and in a sweep.
func TestSearchStrategyFlagErrorsNameTheFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"--mode", "find-peak", "--search-strategy", "fast"}, "--search-strategy"},
		{[]string{"--mode", "find-peak", "--search-strategy", "full", "--scout-duration", "2s"}, "--scout-duration"},
		// flag's own parse error: "invalid value "2000" for flag -scout-duration".
		{[]string{"--mode", "find-peak", "--scout-duration", "2000"}, "-scout-duration: a duration like 2s"},
		{[]string{"--mode", "find-peak", "--scout-duration", "-2s"}, "--scout-duration"},
		{[]string{"--mode", "find-peak", "--scout-duration", "1500us"}, "--scout-duration"},
		{[]string{"--mode", "sweep", "--rates", "100", "--search-strategy", "full"}, "--search-strategy"},
		{[]string{"--mode", "sweep", "--rates", "100", "--scout-duration", "1s"}, "--scout-duration"},
	} {
		_, err := parseRunFlags(append([]string{"--target", "http://h:1", "--model", "m", "--out", t.TempDir()}, c.args...), io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.flag) {
			t.Errorf("%v: %v, want an error naming %s", c.args, err, c.flag)
		}
	}
}

// The progress line names a scout trial's stage with its phase, as the
// summary's table does; a verification and a full search's trial are
// named by their phase alone.
func TestTrialPhase(t *testing.T) {
	for _, c := range []struct {
		r    search.TrialRequest
		want string
	}{
		{search.TrialRequest{Phase: search.PhaseBisect, Stage: search.StageScout}, "scout bisect"},
		{search.TrialRequest{Phase: search.PhaseVerify, Stage: search.StageVerify}, "verify"},
		{search.TrialRequest{Phase: search.PhaseBoundary}, "boundary"},
	} {
		if got := trialPhase(c.r); got != c.want {
			t.Errorf("%+v: %q, want %q", c.r, got, c.want)
		}
	}
}
