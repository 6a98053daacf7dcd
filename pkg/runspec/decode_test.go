package runspec

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// spec builds a body from a good Server spec with fields replaced: each
// value is raw JSON spliced in; "" removes the key.
func spec(over map[string]string) string {
	fields := []struct{ k, v string }{
		{"target", `"http://127.0.0.1:8000"`},
		{"model", `"identity"`},
		{"scenario", `"Server"`},
		{"settings", `{"target_qps": 100, "min_duration_ms": 1000, "min_query_count": 100}`},
	}
	var parts []string
	seen := map[string]bool{}
	for _, f := range fields {
		v := f.v
		if o, ok := over[f.k]; ok {
			v = o
		}
		seen[f.k] = true
		if v != "" {
			parts = append(parts, `"`+f.k+`": `+v)
		}
	}
	for k, v := range over {
		if !seen[k] {
			parts = append(parts, `"`+k+`": `+v)
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func settings(body string) string { return spec(map[string]string{"settings": body}) }

func TestDecodeRefuses(t *testing.T) {
	small := api.Limits{MaxBodyBytes: 256, MaxQPS: 5000, MaxDuration: time.Hour, MaxInflight: 64, MaxConns: 32}
	cases := []struct {
		name  string
		body  string
		field string
		want  string // in the message
	}{
		{"qps as string", settings(`{"target_qps": "100"}`), "settings.target_qps", `expected a number, got the string "100"`},
		{"NaN via string", settings(`{"target_qps": "NaN"}`), "settings.target_qps", `"NaN"`},
		{"negative qps", settings(`{"target_qps": -5}`), "settings.target_qps", "positive number, got -5"},
		{"zero qps", settings(`{"target_qps": 0}`), "settings.target_qps", "positive number, got 0"},
		{"absurd qps", settings(`{"target_qps": 1e9}`), "settings.target_qps", "limit of 5000"},
		{"qps beyond float64", settings(`{"target_qps": 1e400}`), "settings.target_qps", "out of range"},
		{"absurd LoadGen-named qps", settings(`{"server_target_qps": 6000}`), "settings.server_target_qps", "limit of 5000"},
		{"qps as array", settings(`{"target_qps": [[[[1]]]]}`), "settings.target_qps", "got an array"},
		{"sweep rates as string", spec(map[string]string{"search": `{"mode": "sweep", "rates": "100,200"}`}), "search.rates", "expected an array"},
		{"sweep rate as string", spec(map[string]string{"search": `{"mode": "sweep", "rates": [100, "200"]}`}), "search.rates", "expected a number"},
		{"sweep rate null", spec(map[string]string{"search": `{"mode": "sweep", "rates": [100, null]}`}), "search.rates", "null is not an element"},
		{"sweep rates unclosed", spec(map[string]string{"search": `{"mode": "sweep", "rates": [100`}), "search.rates", "malformed JSON"},
		{"unknown scenario", spec(map[string]string{"scenario": `"Serverr"`}), "scenario", `"Serverr" is not SingleStream`},
		{"scenario as number", spec(map[string]string{"scenario": `2`}), "scenario", "expected a string, got the number 2"},
		{"missing model", spec(map[string]string{"model": ""}), "model", "required"},
		{"null model", spec(map[string]string{"model": "null"}), "model", "required"},
		{"missing target", spec(map[string]string{"target": ""}), "target", "required"},
		{"invalid URL", spec(map[string]string{"target": `"http://[::1"`}), "target", "not a URL"},
		{"ftp scheme", spec(map[string]string{"target": `"ftp://h:21"`}), "target", "scheme must be http://, https://, grpc:// or grpcs://"},
		{"empty port", spec(map[string]string{"target": `"http://sut:"`}), "target", "want http://host:port"},
		{"grpc with a path", spec(map[string]string{"target": `"grpc://sut:8001/v2"`}), "target", "takes no path"},
		{"credentials in the target", spec(map[string]string{"target": `"http://user:s3cret@sut:8000"`}), "target", "takes no credentials"},
		{"port 0", spec(map[string]string{"target": `"http://sut:0"`}), "target", "port 0 is not between 1 and 65535"},
		{"port 99999", spec(map[string]string{"target": `"grpc://sut:99999"`}), "target", "port 99999 is not between 1 and 65535"},
		{"query in the target", spec(map[string]string{"target": `"http://sut:8000/v2?debug=1"`}), "target", "takes no query"},
		{"fragment in the target", spec(map[string]string{"target": `"grpc://sut:8001#x"`}), "target", "takes no fragment"},
		{"unknown field", spec(map[string]string{"targt": `"x"`}), "targt", `unknown field "targt"`},
		{"key in another case", spec(map[string]string{"Model": `"x"`}), "Model", "unknown field"},
		{"nested unknown field", settings(`{"target_qps": 1, "target_qsp": 2}`), "settings.target_qsp", `unknown field "target_qsp"`},
		{"unknown field in search", spec(map[string]string{"search": `{"mode": "find-peak", "step": 1}`}), "search.step", "unknown field"},
		{"repeated key", `{"target": "http://h:1", "target": "http://h:2", "model": "m", "scenario": "Server"}`, "target", "more than once"},
		{"trailing garbage", spec(nil) + " x", "", "after the JSON object"},
		{"two objects", `{"model": "m"} {"model": "n"}`, "", "after the JSON object"},
		{"array body", `[` + spec(nil) + `]`, "", "must be a JSON object, got an array"},
		{"empty body", "  \n", "", "empty body"},
		{"truncated", `{"target": "http://h:1", "model":`, "model", "ends too soon"},
		{"percentile 100", settings(`{"target_qps": 1, "latency_percentile": 100}`), "settings.latency_percentile", "(0, 1) or a percent in (1, 100), got 100"},
		{"percentile 1", settings(`{"target_qps": 1, "latency_percentile": 1}`), "settings.latency_percentile", "got 1"},
		{"percentile 0", settings(`{"target_qps": 1, "latency_percentile": 0}`), "settings.latency_percentile", "got 0"},
		{"LoadGen percentile as percent", settings(`{"target_qps": 1, "server_target_latency_percentile": 99}`), "settings.server_target_latency_percentile", "fraction in (0, 1), got 99"},
		{"unknown preset", spec(map[string]string{"preset": `"resnet5"`}), "preset", `unknown preset "resnet5"`},
		{"bad ruleset", spec(map[string]string{"ruleset": `"v0.6"`}), "ruleset", `"v0.6" is not v0.5 or loadgen6`},
		{"huge integer", settings(`{"target_qps": 1, "min_query_count": 100000000000000000000000}`), "settings.min_query_count", "out of range"},
		{"negative integer", settings(`{"target_qps": 1, "min_query_count": -1}`), "settings.min_query_count", "must not be negative, got -1"},
		{"fraction for an integer", settings(`{"target_qps": 1, "min_query_count": 1.5}`), "settings.min_query_count", "expected an integer, got 1.5"},
		{"duration over the limit", settings(`{"target_qps": 1, "max_duration_ms": 7200000}`), "settings.max_duration_ms", "limit of 3600000 ms"},
		{"preset minimum too long at the rate", spec(map[string]string{"preset": `"resnet50"`, "ruleset": `"v0.5"`, "settings": `{"target_qps": 10}`}), "settings.min_query_count", "270336 queries at 10 QPS take 7h30m34s"},
		{"min over max duration", settings(`{"target_qps": 1, "min_duration_ms": 5000, "max_duration_ms": 1000}`), "settings.min_duration_ms", "exceeds max_duration_ms 1000"},
		{"min over max query count", settings(`{"target_qps": 1, "min_query_count": 10, "max_query_count": 5}`), "settings.min_query_count", "exceeds max_query_count 5"},
		{"run too long at the rate", settings(`{"target_qps": 1, "min_query_count": 10000000}`), "settings.min_query_count", "10000000 queries at 1 QPS"},
		{"inflight over the limit", spec(map[string]string{"max_inflight": "1000"}), "max_inflight", "1000 is over this daemon's limit of 64"},
		{"negative conns", spec(map[string]string{"conns": "-1"}), "conns", "must not be negative"},
		{"conns over the limit", spec(map[string]string{"conns": "33"}), "conns", "limit of 32"},
		{"negative max response bytes", spec(map[string]string{"max_response_bytes": "-1"}), "max_response_bytes", "want 0 (the default, 64 MiB) to 1073741824"},
		{"max response bytes over 1 GiB", spec(map[string]string{"max_response_bytes": "1073741825"}), "max_response_bytes", "1073741825"},
		{"request timeout over the limit", spec(map[string]string{"request_timeout_ms": "3600001"}), "request_timeout_ms", "limit"},
		{"issue slack over the limit", spec(map[string]string{"issue_slack_us": "10001"}), "issue_slack_us", "over the limit of 10000 µs"},
		{"negative issue slack", spec(map[string]string{"issue_slack_us": "-5"}), "issue_slack_us", ""},
		{"oversized body", spec(map[string]string{"sut_name": `"` + strings.Repeat("x", 300) + `"`}), "", "exceeds 256 bytes"},
		{"settings as array", settings(`[]`), "settings", "expected an object, got an array"},
		{"json flag as string", spec(map[string]string{"json": `"true"`}), "json", `expected true or false, got the string "true"`},
		{"data without a root", spec(map[string]string{"data": `"/data/imagenet"`}), "data", "LOADGEND_DATA_ROOT"},
		{"search not supported", spec(map[string]string{"search": `{"mode": "find-peak"}`}), "search", "not supported yet"},
		{"ambiguous qps", settings(`{"target_qps": 1, "server_target_qps": 2}`), "settings.server_target_qps", "same setting as settings.target_qps"},
		{"negative latency bound", settings(`{"target_qps": 1, "target_latency_ms": -3}`), "settings.target_latency_ms", "positive number, got -3"},
		{"interval as absurd rate", spec(map[string]string{"scenario": `"MultiStream"`, "ruleset": `"v0.5"`, "settings": `{"interval_ms": 1e-9}`}), "settings.interval_ms", "QPS, over this daemon's limit"},
		{"zero streams", spec(map[string]string{"scenario": `"MultiStream"`, "settings": `{"samples_per_query": 0}`}), "settings.samples_per_query", "at least 1"},
		{"zero drain timeout", settings(`{"target_qps": 1, "drain_timeout_ms": 0}`), "settings.drain_timeout_ms", "must be positive"},
		{"malformed user_conf", spec(map[string]string{"user_conf": `"identity.Server.target_qps 5"`}), "user_conf", "user_conf"},
		{"mlperf_conf with a bad rate", spec(map[string]string{"mlperf_conf": `"*.Server.target_qps = -1"`, "settings": "null"}), "settings.server_target_qps", "must be positive"},
		{"model with a newline", spec(map[string]string{"model": `"a\nb"`}), "model", "control character"},
		{"negative total samples", spec(map[string]string{"total_samples": "-1"}), "total_samples", "must not be negative"},
		{"search with a bad mode", spec(map[string]string{"search": `"find-peak"`}), "search", "expected an object"},
	}
	if len(cases) < 30 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Decode(strings.NewReader(c.body), small)
			var fe *api.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Decode(%s) = %+v, %v; want a *FieldError", c.body, s, err)
			}
			if fe.Field != c.field {
				t.Errorf("field %q, want %q (error: %v)", fe.Field, c.field, err)
			}
			if !strings.Contains(fe.Message, c.want) {
				t.Errorf("message %q does not say %q", fe.Message, c.want)
			}
			if strings.Contains(fe.Message, "s3cret") {
				t.Errorf("message %q echoes the password", fe.Message)
			}
			if too := errors.Is(err, api.ErrBodyTooLarge); too != (c.name == "oversized body") {
				t.Errorf("errors.Is(err, api.ErrBodyTooLarge) = %v", too)
			}
		})
	}
}

func TestDecodeAccepts(t *testing.T) {
	cases := []struct {
		name string
		body string
		lim  api.Limits
	}{
		{"minimal", spec(nil), api.Limits{}},
		{"null settings", spec(map[string]string{"settings": "null"}), api.Limits{}},
		{"every knob", spec(map[string]string{"model_version": `"2"`, "ruleset": `"loadgen6"`, "batch_size": "8", "max_inflight": "4",
			"conns": "16", "json": "true", "request_timeout_ms": "5000", "issue_slack_us": "300", "sut_name": `"rig"`, "total_samples": "64",
			"performance_samples": "32", "data_seed": "7"}), api.Limits{}},
		{"search when allowed", spec(map[string]string{"search": `{"mode": "find-peak", "lower_qps": 10, "upper_qps": 100, "precision": 1, "verify_runs": 2, "early_verdict": false, "max_trials": 20}`}), api.Limits{AllowSearch: true}},
		{"grpc target", spec(map[string]string{"target": `"grpc://[::1]:8001"`}), api.Limits{}},
		{"http target with a path prefix", spec(map[string]string{"target": `"http://sut:8000/serving/"`}), api.Limits{}},
		{"percent", settings(`{"target_qps": 5, "latency_percentile": 99.9}`), api.Limits{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Decode(strings.NewReader(c.body), c.lim); err != nil {
				t.Fatalf("Decode(%s): %v", c.body, err)
			}
		})
	}
}

// A spec without a scenario is a Server run, as `loadgend run` without
// --scenario: the decoded spec says so (what the daemon stores) and the
// built settings are Server's.
func TestDecodeDefaultsScenarioToServer(t *testing.T) {
	s, err := Decode(strings.NewReader(spec(map[string]string{"scenario": ""})), api.Limits{})
	if err != nil {
		t.Fatalf("Decode without a scenario: %v", err)
	}
	if s.Scenario != "Server" {
		t.Fatalf("decoded scenario = %q, want Server", s.Scenario)
	}
	s.Scenario = ""
	r, err := Build(s, Env{})
	if err != nil {
		t.Fatalf("Build without a scenario: %v", err)
	}
	if got := r.Spec.Settings.Scenario; got != trace.Server {
		t.Fatalf("built scenario = %v, want Server", got)
	}
}

func TestSearchChecks(t *testing.T) {
	allow := api.Limits{AllowSearch: true, MaxQPS: 1000}
	cases := []struct {
		name, search, scenario, field string
	}{
		{"mode", `{"mode": "bisect"}`, `"Server"`, "search.mode"},
		{"scenario", `{"mode": "find-peak"}`, `"Offline"`, "search.mode"},
		{"bounds reversed", `{"mode": "find-peak", "lower_qps": 50, "upper_qps": 10}`, `"Server"`, "search.lower_qps"},
		{"upper over the limit", `{"mode": "find-peak", "upper_qps": 5000}`, `"Server"`, "search.upper_qps"},
		{"negative precision", `{"mode": "find-peak", "precision": -1}`, `"Server"`, "search.precision"},
		{"verify runs", `{"mode": "find-peak", "verify_runs": 11}`, `"Server"`, "search.verify_runs"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := spec(map[string]string{"search": c.search, "scenario": c.scenario, "settings": `{"target_qps": 10, "min_duration_ms": 100}`})
			_, err := Decode(strings.NewReader(body), allow)
			var fe *api.FieldError
			if !errors.As(err, &fe) || fe.Field != c.field {
				t.Fatalf("got %v, want a FieldError on %s", err, c.field)
			}
		})
	}
}

// TestTraceSizeLimits: the trace a spec asks for (queries × samples per
// query, Offline's one query of max(min_query_count, 1.1 × min_duration ×
// offline_expected_qps) samples) is held in memory before the clock starts,
// with the run's records of it. A spec over the daemon's limit is refused
// at the door naming the field that makes it so; Build, the CLI's, refuses
// what the engine cannot hold at all.
func TestTraceSizeLimits(t *testing.T) {
	lim := api.Limits{MaxQPS: 1e5, MaxDuration: time.Hour, MaxTraceSamples: 1_000_000}
	body := func(scenario, settings string) string {
		return spec(map[string]string{"scenario": `"` + scenario + `"`, "settings": settings})
	}
	cases := []struct {
		name, body, field, want string
	}{
		{"offline by duration", body("Offline", `{"target_qps": 1000, "min_duration_ms": 1000000}`), "settings.min_duration_ms",
			"1000000 ms at 1000 QPS make a trace of about 1100000 samples (1 query of 1100000), over this daemon's limit of 1000000 samples (LOADGEND_MAX_TRACE_SAMPLES)"},
		{"offline by count", body("Offline", `{"target_qps": 1, "min_query_count": 2000000}`), "settings.min_query_count", "about 2000000 samples (1 query of 2000000)"},
		{"server by duration", body("Server", `{"target_qps": 1000, "min_duration_ms": 1200000}`), "settings.min_duration_ms", "about 1200000 samples"},
		{"server by count", body("Server", `{"target_qps": 1000, "min_duration_ms": 1000, "min_query_count": 1500000}`), "settings.min_query_count", "1500000 queries of 1"},
		{"single stream, twice the duration", body("SingleStream", `{"expected_latency_ns": 1000000, "min_duration_ms": 600000}`), "settings.min_duration_ms", "about 1200000 samples"},
		{"multi stream samples", body("MultiStream", `{"samples_per_query": 64, "min_query_count": 20000, "expected_latency_ns": 8000000}`), "settings.min_query_count", "(20000 queries of 64)"},
		{"from the preset", spec(map[string]string{"scenario": `"Offline"`, "preset": `"resnet50"`, "settings": `{"target_qps": 100000}`}), "settings.min_duration_ms", "over this daemon's limit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode(strings.NewReader(c.body), lim)
			var fe *api.FieldError
			if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(fe.Message, c.want) {
				t.Fatalf("got %v, want a FieldError on %s saying %q", err, c.field, c.want)
			}
		})
	}
	// Under the limit, and the default limits take an ordinary run.
	for _, b := range []string{
		body("Offline", `{"target_qps": 1000, "min_duration_ms": 900000}`),
		body("Server", `{"target_qps": 1000, "min_duration_ms": 600000}`),
	} {
		if _, err := Decode(strings.NewReader(b), lim); err != nil {
			t.Errorf("%s: %v", b, err)
		}
		if _, err := Decode(strings.NewReader(b), api.Limits{}); err != nil {
			t.Errorf("default limits, %s: %v", b, err)
		}
	}

	// An official-length Server run at 100,000 QPS (600 s: 60 million
	// queries) is taken by the default limits (issue 28), and the same
	// rate for 1100 s is not (110 million queries: over the query limit
	// before the trace limit).
	official := body("Server", `{"target_qps": 100000, "min_duration_ms": 600000}`)
	if _, err := Decode(strings.NewReader(official), api.Limits{}); err != nil {
		t.Errorf("default limits, 600 s at 100000 QPS: %v", err)
	}
	var over *api.FieldError
	if _, err := Decode(strings.NewReader(body("Server", `{"target_qps": 100000, "min_duration_ms": 1100000}`)), api.Limits{}); !errors.As(err, &over) ||
		over.Field != "settings.min_duration_ms" {
		t.Errorf("default limits, 1100 s at 100000 QPS: %v, want a FieldError on settings.min_duration_ms", err)
	}

	// The Offline run of 396,000,000 samples: 1.1 × 3600 s × 100000
	// QPS, within LOADGEND_MAX_QPS and LOADGEND_MAX_DURATION.
	huge := api.RunSpec{Target: "http://h:1", Model: "m", Scenario: "Offline"}
	huge.Overrides.TargetQPS, huge.Overrides.MinDurationMs = new(1e5), new(uint64(3_600_000))
	_, err := Admit(huge, api.Limits{MaxQPS: 1e5, MaxDuration: time.Hour}, "")
	var fe *api.FieldError
	if !errors.As(err, &fe) || fe.Field != "settings.min_duration_ms" || !strings.Contains(fe.Message, "396000000 samples") {
		t.Errorf("Admit: %v", err)
	}
	_, err = Build(huge, Env{})
	if !errors.As(err, &fe) || fe.Field != "settings.min_duration_ms" || !strings.Contains(fe.Message, "over the engine's limit of 268435456 samples") {
		t.Errorf("Build: %v", err)
	}
}

// A sweep's rates are held to the daemon's QPS limit, each of them.
func TestDecodeSweepRateOverLimit(t *testing.T) {
	lim := api.Limits{MaxQPS: 5000, AllowSearch: true}
	_, err := Decode(strings.NewReader(spec(map[string]string{"search": `{"mode": "sweep", "rates": [100, 6000]}`})), lim)
	fe, ok := errors.AsType[*api.FieldError](err)
	if !ok || fe.Field != "search.rates" || !strings.Contains(fe.Message, "limit of 5000") {
		t.Fatalf("Decode = %v, want search.rates over the limit of 5000", err)
	}
	if _, err := Decode(strings.NewReader(spec(map[string]string{"search": `{"mode": "sweep", "rates": [100, 200]}`})), lim); err != nil {
		t.Fatalf("a sweep within the limit: %v", err)
	}
}
