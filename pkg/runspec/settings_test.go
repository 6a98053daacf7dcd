package runspec

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runner"
	"github.com/netloadgen/netloadgen/pkg/search"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// TestSettingsMatchCLI: each spec builds the settings `loadgend run` builds
// for the flags in the comment; the expected values are written out here
// from the flags' documented meaning, not computed by the code under test.
func TestSettingsMatchCLI(t *testing.T) {
	base := func(r loadgen.Ruleset, sc trace.Scenario) loadgen.Settings {
		s := loadgen.DefaultSettings(r)
		s.Scenario = sc
		s.Engine.EarlyVerdict = true // netloadgen's default for performance runs
		return s
	}
	cases := []struct {
		name string
		body string
		want func() loadgen.Settings
	}{{
		// --scenario Server --target-qps 100 --min-duration-ms 3000 --min-query-count 100 --target-latency-ms 200
		name: "issue example",
		body: `{"target": "http://h:8000", "model": "identity", "scenario": "Server", "ruleset": "loadgen6",
			"settings": {"target_qps": 100, "min_duration_ms": 3000, "min_query_count": 100, "target_latency_ms": 200}}`,
		want: func() loadgen.Settings {
			s := base(loadgen.RulesetLoadGen6, trace.Server)
			s.ServerTargetQPS, s.OfflineExpectedQPS = 100, 100
			s.MinDurationMs, s.MinQueryCount = 3000, 100
			s.ServerTargetLatencyNs = 200_000_000
			return s
		},
	}, {
		// --scenario Offline --target-qps 2500.5 --latency-percentile 99 --max-query-count 1 --drain-timeout-ms 2500 --early-verdict
		name: "Offline, percentile as percent",
		body: `{"target": "grpc://h:8001", "model": "m", "scenario": "Offline",
			"settings": {"target_qps": 2500.5, "latency_percentile": 99, "max_query_count": 1, "drain_timeout_ms": 2500, "early_verdict": true}}`,
		want: func() loadgen.Settings {
			s := base(loadgen.RulesetLoadGen6, trace.Offline)
			s.ServerTargetQPS, s.OfflineExpectedQPS = 2500.5, 2500.5
			s.ServerTargetLatencyPercentile, s.SingleStreamTargetLatencyPercentile, s.MultiStreamTargetLatencyPercentile = 0.99, 0.99, 0.99
			s.MaxQueryCount = 1
			s.Engine.DrainTimeoutMs = 2500
			s.Engine.EarlyVerdict = true
			return s
		},
	}, {
		// --ruleset v0.5 --scenario MultiStream --interval-ms 50 --samples-per-query 6 --latency-percentile 0.9
		name: "v0.5 MultiStream interval",
		body: `{"target": "http://h:1", "model": "m", "scenario": "MultiStream", "ruleset": "v0.5",
			"settings": {"interval_ms": 50, "samples_per_query": 6, "latency_percentile": 0.9}}`,
		want: func() loadgen.Settings {
			s := base(loadgen.RulesetV05, trace.MultiStream)
			s.MultiStreamTargetQPS = 20
			s.MultiStreamSamplesPerQuery = 6
			s.ServerTargetLatencyPercentile, s.SingleStreamTargetLatencyPercentile, s.MultiStreamTargetLatencyPercentile = 0.9, 0.9, 0.9
			return s
		},
	}, {
		// --scenario SingleStream --expected-latency-ns 500000 --qsl-seed 1 --sample-seed 2 --schedule-seed 3
		// --concat-perm --issue-unique --max-duration-ms 60000 --min-duration-ms 0
		name: "SingleStream seeds and flags",
		body: `{"target": "http://h:1", "model": "m", "scenario": "SingleStream",
			"settings": {"expected_latency_ns": 500000, "qsl_rng_seed": 1, "sample_index_rng_seed": 2, "schedule_rng_seed": 3,
			"sample_concatenate_permutation": true, "performance_issue_unique": true, "max_duration_ms": 60000, "min_duration_ms": 0}}`,
		want: func() loadgen.Settings {
			s := base(loadgen.RulesetLoadGen6, trace.SingleStream)
			s.SingleStreamExpectedLatencyNs, s.MultiStreamExpectedLatencyNs = 500_000, 500_000
			s.QSLRNGSeed, s.SampleIndexRNGSeed, s.ScheduleRNGSeed = 1, 2, 3
			s.SampleConcatenatePermutation, s.PerformanceIssueUnique = true, true
			s.MaxDurationMs, s.MinDurationMs = 60_000, 0
			return s
		},
	}, {
		// --preset resnet50 --scenario Server --target-qps 1000 (loadgen6): the preset's 15 ms at p99,
		// mlperf.conf's 600 s minimum and early stopping's 100 queries.
		name: "preset",
		body: `{"target": "http://h:1", "model": "m", "scenario": "Server", "preset": "resnet50", "settings": {"target_qps": 1000}}`,
		want: func() loadgen.Settings {
			s := base(loadgen.RulesetLoadGen6, trace.Server)
			s.Task = "resnet50"
			s.ServerTargetLatencyNs = 15_000_000
			s.ServerTargetLatencyPercentile = 0.99
			s.SingleStreamTargetLatencyPercentile = 0.90
			s.MultiStreamTargetLatencyPercentile = 0.99
			s.MultiStreamSamplesPerQuery = 8
			s.MultiStreamExpectedLatencyNs = 80_000_000
			s.SingleStreamExpectedLatencyNs = 10_000_000
			s.MinDurationMs, s.MinQueryCount = 600_000, 100
			s.ServerTargetQPS, s.OfflineExpectedQPS = 1000, 1000
			return s
		},
	}, {
		// LoadGen's own names set one field each.
		name: "LoadGen names",
		body: `{"target": "http://h:1", "model": "m", "scenario": "Server", "settings": {"server_target_qps": 10,
			"server_target_latency_ns": 5000000, "server_target_latency_percentile": 0.9, "offline_expected_qps": 3,
			"server_max_async_queries": 64, "performance_issue_same": true, "performance_issue_same_index": 5,
			"performance_sample_count_override": 128, "multi_stream_samples_per_query": 2}}`,
		want: func() loadgen.Settings {
			s := base(loadgen.RulesetLoadGen6, trace.Server)
			s.ServerTargetQPS, s.OfflineExpectedQPS = 10, 3
			s.ServerTargetLatencyNs = 5_000_000
			s.ServerTargetLatencyPercentile = 0.9
			s.ServerMaxAsyncQueries = 64
			s.PerformanceIssueSame, s.PerformanceIssueSameIndex = true, 5
			s.PerformanceSampleCountOverride = 128
			s.MultiStreamSamplesPerQuery = 2
			return s
		},
	}, {
		// --user-conf with a Server rate for this model; --min-query-count wins over the conf's count.
		// LoadGen's FromConfig applies its built-in mlperf.conf first: 600 s, a 10 ms bound,
		// the streams' 10 and 80 ms expected latencies (issue 16).
		name: "user_conf then overrides",
		body: `{"target": "http://h:1", "model": "m", "scenario": "Server",
			"user_conf": "m.Server.target_qps = 123\n*.Server.min_query_count = 500\n",
			"settings": {"min_query_count": 50}}`,
		want: func() loadgen.Settings {
			s := base(loadgen.RulesetLoadGen6, trace.Server)
			s.MinDurationMs = 600_000
			s.ServerTargetLatencyNs = 10_000_000
			s.SingleStreamExpectedLatencyNs, s.MultiStreamExpectedLatencyNs = 10_000_000, 80_000_000
			s.ServerTargetQPS = 123
			s.MinQueryCount = 50
			return s
		},
	}, {
		// --scenario Server --use-token-latencies --ttft-latency-ms 450 --tpot-latency-ms 40.5
		name: "token latencies",
		body: `{"target": "http://h:1", "model": "m", "scenario": "Server",
			"settings": {"use_token_latencies": true, "ttft_latency_ms": 450, "tpot_latency_ms": 40.5}}`,
		want: func() loadgen.Settings {
			s := base(loadgen.RulesetLoadGen6, trace.Server)
			s.UseTokenLatencies = true
			s.ServerTTFTLatencyNs, s.ServerTPOTLatencyNs = 450_000_000, 40_500_000
			return s
		},
	}, {
		// --preset llama2-70b-interactive --scenario Server --target-qps 2 --tpot-latency-ms 50: mlperf.conf's
		// TTFT 450 ms, no query-latency bound, equal issue; the flag's TPOT wins over the preset's 40 ms.
		name: "LLM preset",
		body: `{"target": "http://h:1", "model": "m", "scenario": "Server", "preset": "llama2-70b-interactive",
			"settings": {"target_qps": 2, "tpot_latency_ms": 50}}`,
		want: func() loadgen.Settings {
			s := base(loadgen.RulesetLoadGen6, trace.Server)
			s.Task = "llama2-70b-interactive"
			s.ServerTargetLatencyNs = 0
			s.ServerTargetLatencyPercentile, s.SingleStreamTargetLatencyPercentile = 0.99, 0.90
			s.MultiStreamTargetLatencyPercentile, s.MultiStreamSamplesPerQuery = 0.99, 8
			s.MultiStreamExpectedLatencyNs, s.SingleStreamExpectedLatencyNs = 80_000_000, 10_000_000
			s.MinDurationMs, s.MinQueryCount = 600_000, 100
			s.ServerTargetQPS, s.OfflineExpectedQPS = 2, 2
			s.UseTokenLatencies, s.SampleConcatenatePermutation = true, true
			s.ServerTTFTLatencyNs, s.ServerTPOTLatencyNs = 450_000_000, 50_000_000
			return s
		},
	}, {
		// --user-conf turning token latencies on for this model, with its own bounds (LoadGen's keys).
		name: "token latencies from user_conf",
		body: `{"target": "http://h:1", "model": "m", "scenario": "Server",
			"user_conf": "m.*.use_token_latencies = 1\nm.Server.ttft_latency = 900\nm.Server.tpot_latency = 60\nm.Server.target_latency = 0\n"}`,
		want: func() loadgen.Settings {
			s := base(loadgen.RulesetLoadGen6, trace.Server)
			s.MinDurationMs = 600_000
			s.ServerTargetLatencyNs = 0
			s.SingleStreamExpectedLatencyNs, s.MultiStreamExpectedLatencyNs = 10_000_000, 80_000_000
			s.UseTokenLatencies = true
			s.ServerTTFTLatencyNs, s.ServerTPOTLatencyNs = 900_000_000, 60_000_000
			return s
		},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec, err := Decode(strings.NewReader(c.body), api.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := Settings(spec)
			if err != nil {
				t.Fatal(err)
			}
			if want := c.want(); !reflect.DeepEqual(got, want) {
				t.Errorf("settings differ:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

// TestTokenSettingErrors: a token bound the settings would ignore, or a
// bad one, is refused naming the field the user wrote.
func TestTokenSettingErrors(t *testing.T) {
	for _, c := range []struct{ body, field, want string }{
		{`{"ttft_latency_ms": 450}`, "settings.ttft_latency_ms", "use_token_latencies"},
		{`{"tpot_latency_ms": 40}`, "settings.tpot_latency_ms", "use_token_latencies"},
		{`{"token_latency_scaling_factor": 69}`, "settings.token_latency_scaling_factor", "infer_token_latencies"},
		{`{"use_token_latencies": true, "ttft_latency_ms": -1}`, "settings.ttft_latency_ms", "positive"},
		{`{"infer_token_latencies": true, "token_latency_scaling_factor": 0}`, "settings.token_latency_scaling_factor", "at least 1"},
		// Inferred tokens need their factor: LoadGen leaves it
		// uninitialized, so none is refused rather than assumed.
		{`{"infer_token_latencies": true}`, "settings.token_latency_scaling_factor", "at least 1"},
	} {
		spec, err := Decode(strings.NewReader(`{"target": "http://h:1", "model": "m", "scenario": "Server", "settings": `+c.body+`}`), api.Limits{})
		if err == nil {
			_, err = Settings(spec)
		}
		var fe *api.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(fe.Message, c.want) {
			t.Errorf("%s: %v, want a field error on %s saying %q", c.body, err, c.field, c.want)
		}
	}
	spec := api.RunSpec{Target: "http://h:1", Model: "m", Scenario: "Server", Ruleset: "v0.5", Preset: "llama2-70b"}
	var fe *api.FieldError
	if _, err := Settings(spec); !errors.As(err, &fe) || fe.Field != "preset" || !strings.Contains(fe.Message, "loadgen6") {
		t.Errorf("v0.5 llama2-70b: %v, want a field error on preset naming loadgen6", err)
	}
}

func TestRunnerSpec(t *testing.T) {
	body := `{"target": "http://h:1", "model": "m", "model_version": "3", "scenario": "Offline", "settings": {"target_qps": 10},
		"batch_size": 8, "max_inflight": 2, "conns": 4, "json": true, "request_timeout_ms": 1500, "issue_slack_us": 120, "sut_name": "rig", "data_seed": 9, "total_samples": 100}`
	spec, err := Decode(strings.NewReader(body), api.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Build(spec, Env{OutDir: "/runs/x"})
	if err != nil {
		t.Fatal(err)
	}
	got := r.Spec
	ls := loadgen.DefaultSettings(loadgen.RulesetLoadGen6)
	ls.Scenario = trace.Offline
	ls.ServerTargetQPS, ls.OfflineExpectedQPS = 10, 10
	ls.Engine.EarlyVerdict = true
	want := runner.Spec{
		Target: "http://h:1", Model: "m", ModelVersion: "3", Settings: ls,
		BatchSize: 8, MaxInflight: 2, Conns: 4, JSON: true, RequestTimeout: 1500 * time.Millisecond,
		IssueSlack: 120 * time.Microsecond, TotalSamples: 100, PerformanceSamples: 1024, DataSeed: 9, SUTName: "rig", OutDir: "/runs/x",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}

	if r.Search != nil {
		t.Errorf("a spec without a search builds one: %+v", r.Search)
	}
	spec.Search = &api.Search{Mode: api.SearchFindPeak, LowerQPS: 5, UpperQPS: 50, Precision: 2, Delta: 0.05, VerifyRuns: 3, MaxTrials: 7}
	r, err = Build(spec, Env{})
	if err != nil {
		t.Fatal(err)
	}
	// Each trial warms up for 10% of its own minimum duration (at most 1 s);
	// one retry; a find-peak scouts.
	wantSearch := runner.Search{Options: search.Options{Start: 5, Upper: 50, Precision: 2, Delta: 0.05, VerifyRuns: 3, Strategy: search.StrategyScout},
		EarlyVerdict: true, MaxTrials: 7, TrialWarmupDefault: true, RetryFailed: 1}
	if r.Search == nil || !reflect.DeepEqual(*r.Search, wantSearch) {
		t.Errorf("search %+v, want %+v (early verdicts on unless asked off)", r.Search, wantSearch)
	}
	spec.Search = &api.Search{Mode: api.SearchSweep, Rates: []float64{100, 200, 400}, StopSaturated: true}
	r, err = Build(spec, Env{})
	if err != nil {
		t.Fatal(err)
	}
	wantSearch = runner.Search{Rates: []float64{100, 200, 400}, StopSaturated: true, TrialWarmupDefault: true}
	if r.Search == nil || !reflect.DeepEqual(*r.Search, wantSearch) {
		t.Errorf("sweep %+v, want %+v (early verdicts off unless asked on)", r.Search, wantSearch)
	}
}

// TestNetloadgenDefaults: what a spec that leaves them out gets where
// LoadGen's defaults make a run that says nothing: early verdict on,
// Offline's query sized for 1000 samples/s, loadgen6 MultiStream's trace
// for 1 ms queries; and each given value (settings block or conf) wins.
func TestNetloadgenDefaults(t *testing.T) {
	build := func(t *testing.T, body string) loadgen.Settings {
		t.Helper()
		spec, err := Decode(strings.NewReader(body), api.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		ls, err := Settings(spec)
		if err != nil {
			t.Fatal(err)
		}
		return ls
	}
	const head = `{"target": "http://h:1", "model": "m", `
	cases := []struct {
		name, body string
		check      func(loadgen.Settings) bool
		want       string
	}{
		{"early verdict on", head + `"scenario": "Server"}`, func(s loadgen.Settings) bool { return s.Engine.EarlyVerdict }, "early_verdict true"},
		{"early verdict asked off", head + `"scenario": "Server", "settings": {"early_verdict": false}}`,
			func(s loadgen.Settings) bool { return !s.Engine.EarlyVerdict }, "early_verdict false"},
		{"Offline expected QPS", head + `"scenario": "Offline"}`, func(s loadgen.Settings) bool { return s.OfflineExpectedQPS == 1000 }, "offline_expected_qps 1000"},
		{"Offline target_qps wins", head + `"scenario": "Offline", "settings": {"target_qps": 7}}`,
			func(s loadgen.Settings) bool { return s.OfflineExpectedQPS == 7 }, "offline_expected_qps 7"},
		{"Offline user_conf wins", head + `"scenario": "Offline", "user_conf": "m.Offline.target_qps = 5\n"}`,
			func(s loadgen.Settings) bool { return s.OfflineExpectedQPS == 5 }, "offline_expected_qps 5"},
		{"Server keeps LoadGen's offline_expected_qps", head + `"scenario": "Server"}`,
			func(s loadgen.Settings) bool { return s.OfflineExpectedQPS == 1 && s.ServerTargetQPS == 1 }, "offline_expected_qps 1, server_target_qps 1"},
		{"MultiStream expected latency", head + `"scenario": "MultiStream"}`,
			func(s loadgen.Settings) bool { return s.MultiStreamExpectedLatencyNs == 1e6 }, "multi_stream_expected_latency_ns 1e6"},
		{"MultiStream expected_latency_ns wins", head + `"scenario": "MultiStream", "settings": {"expected_latency_ns": 3e6}}`,
			func(s loadgen.Settings) bool { return s.MultiStreamExpectedLatencyNs == 3e6 }, "multi_stream_expected_latency_ns 3e6"},
		{"v0.5 MultiStream keeps LoadGen's", head + `"scenario": "MultiStream", "ruleset": "v0.5"}`,
			func(s loadgen.Settings) bool { return s.MultiStreamExpectedLatencyNs == 8e6 }, "multi_stream_expected_latency_ns 8e6"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := build(t, c.body); !c.check(got) {
				t.Errorf("want %s; got early_verdict %v, offline_expected_qps %v, server_target_qps %v, multi_stream_expected_latency_ns %v",
					c.want, got.Engine.EarlyVerdict, got.OfflineExpectedQPS, got.ServerTargetQPS, got.MultiStreamExpectedLatencyNs)
			}
		})
	}
}

// TestSettingsRefusesGoValues: a spec built in Go, not decoded, can hold
// what JSON cannot; Settings still names the field.
func TestSettingsRefusesGoValues(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	huge := 1e300
	cases := []struct {
		name  string
		o     api.RunSettings
		field string
	}{
		{"NaN rate", api.RunSettings{TargetQPS: &nan}, "settings.target_qps"},
		{"infinite rate", api.RunSettings{ServerTargetQPS: &inf}, "settings.server_target_qps"},
		{"NaN percentile", api.RunSettings{LatencyPercentile: &nan}, "settings.latency_percentile"},
		{"huge latency bound", api.RunSettings{TargetLatencyMs: &huge}, "settings.target_latency_ms"},
		{"NaN interval", api.RunSettings{IntervalMs: &nan}, "settings.interval_ms"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := api.RunSpec{Target: "http://h:1", Model: "m", Scenario: "Server", Overrides: c.o}
			_, err := Settings(s)
			var fe *api.FieldError
			if !errors.As(err, &fe) || fe.Field != c.field {
				t.Fatalf("got %v, want a FieldError on %s", err, c.field)
			}
		})
	}
}

// The spec's slo becomes the engine's SLO; a bad one is a field error on
// slo that says what to write.
func TestSettingsSLO(t *testing.T) {
	s := api.RunSpec{Target: "http://h:1", Model: "m", SLO: "tpot=50ms, ttft=500ms"}
	ls, err := Settings(s)
	if err != nil {
		t.Fatal(err)
	}
	if want := (genai.SLO{TTFT: 500 * time.Millisecond, TPOT: 50 * time.Millisecond}); ls.Engine.SLO != want {
		t.Errorf("engine SLO %+v, want %+v", ls.Engine.SLO, want)
	}
	for _, bad := range []string{"ttft", "ttft=0s", "ttft=1s,ttft=2s", "goodput=1s"} {
		s.SLO = bad
		_, err := Settings(s)
		var fe *api.FieldError
		if !errors.As(err, &fe) || fe.Field != "slo" || !strings.Contains(fe.Message, "ttft") {
			t.Errorf("slo %q: got %v, want a FieldError on slo naming the bounds", bad, err)
		}
	}
}
