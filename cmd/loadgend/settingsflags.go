package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runspec"
)

// settingsFlags are the flags that build LoadGen's settings through
// pkg/runspec. `loadgend run`, `schedule` and `rejudge` register them with
// this code, so a flag means one thing, with one default, in each: the same
// flags give `schedule` the trace that `run` issues (issue 27). Most fill a
// field of the spec; these hold what the spec takes otherwise.
type settingsFlags struct {
	mlperfConf, userConf      string
	totalSamples, perfSamples int
	shape                     shapeFlags
}

// addTraceFlags registers the flags that choose and size the trace: run
// and schedule. rejudge has none of them: a sample list records its
// scenario, its ruleset and what its trace was.
func (f *specFlags) addTraceFlags(sf *settingsFlags) {
	spec, o := &f.spec, &f.spec.Overrides
	f.str(&spec.Scenario, "scenario", "scenario", api.DefaultScenario, "SingleStream, MultiStream, Server or Offline")
	f.str(&spec.Ruleset, "ruleset", "ruleset", string(loadgen.RulesetLoadGen6), "v0.5 or loadgen6")
	f.float(&o.ExpectedLatencyNs, "expected-latency-ns", "settings.expected_latency_ns", "single_/multi_stream_expected_latency_ns")
	f.uint(&o.SamplesPerQuery, "samples-per-query", "settings.samples_per_query", "multi_stream_samples_per_query (the stream count)")
	f.integer(&sf.totalSamples, "total-samples", "total_samples", runspec.DefaultSamples, "QSL total sample count")
	f.integer(&sf.perfSamples, "performance-samples", "performance_samples", runspec.DefaultSamples, "QSL performance sample count")
	f.uint(&o.QSLRNGSeed, "qsl-seed", "settings.qsl_rng_seed", "qsl_rng_seed (default: the ruleset's)")
	f.uint(&o.SampleIndexRNGSeed, "sample-seed", "settings.sample_index_rng_seed", "sample_index_rng_seed (default: the ruleset's)")
	f.uint(&o.ScheduleRNGSeed, "schedule-seed", "settings.schedule_rng_seed", "schedule_rng_seed (default: the ruleset's)")
	f.boolean(&o.SampleConcatenatePermutation, "concat-perm", "settings.sample_concatenate_permutation", "sample_concatenate_permutation")
	f.boolean(&o.PerformanceIssueUnique, "issue-unique", "settings.performance_issue_unique", "performance_issue_unique")
	f.float(&o.IntervalMs, "interval-ms", "settings.interval_ms", "v0.5 MultiStream issue interval in ms")
	f.addShapeFlags(&sf.shape)
}

// addJudgeFlags registers the flags that set a run's load, length and
// bounds, and the conf files: run, schedule and rejudge.
func (f *specFlags) addJudgeFlags(sf *settingsFlags) {
	spec, o := &f.spec, &f.spec.Overrides
	f.str(&spec.Preset, "preset", "preset", "", "task preset: official bound, interval, percentile and minimums: resnet50, mobilenet, ssd-resnet34, ssd-mobilenet, gnmt; loadgen6 LLM tasks with LoadGen 6.0.17 mlperf.conf's token settings: llama2-70b, llama2-70b-interactive, llama3.1-405b, mixtral-8x7b, gptj")
	f.float(&o.TargetQPS, "target-qps", "settings.target_qps", "server_target_qps (Server) or offline_expected_qps (Offline)")
	f.uint(&o.MinDurationMs, "min-duration-ms", "settings.min_duration_ms", "min_duration_ms")
	f.uint(&o.MaxDurationMs, "max-duration-ms", "settings.max_duration_ms", "max_duration_ms")
	f.uint(&o.MinQueryCount, "min-query-count", "settings.min_query_count", "min_query_count")
	f.uint(&o.MaxQueryCount, "max-query-count", "settings.max_query_count", "max_query_count")
	f.float(&o.TargetLatencyMs, "target-latency-ms", "settings.target_latency_ms", "server_target_latency_ns, in ms")
	f.float(&o.LatencyPercentile, "latency-percentile", "settings.latency_percentile", "target latency percentile, e.g. 0.99 or 99")
	f.boolean(&o.UseTokenLatencies, "use-token-latencies", "settings.use_token_latencies", "use_token_latencies: judge a Server run by time to first token and time per output token (generative endpoints; the LLM presets set it)")
	f.float(&o.TTFTLatencyMs, "ttft-latency-ms", "settings.ttft_latency_ms", "server_ttft_latency in ms, the TTFT bound (needs --use-token-latencies)")
	f.float(&o.TPOTLatencyMs, "tpot-latency-ms", "settings.tpot_latency_ms", "server_tpot_latency in ms, the TPOT bound (needs --use-token-latencies)")
	f.boolean(&o.InferTokenLatencies, "infer-token-latencies", "settings.infer_token_latencies", "infer_token_latencies: token figures inferred from sample latencies (gptj)")
	f.uint(&o.TokenLatencyScalingFactor, "token-latency-scaling-factor", "settings.token_latency_scaling_factor", "token_latency_scaling_factor: tokens per sample when inferred (needs --infer-token-latencies)")
	f.str(&sf.mlperfConf, "mlperf-conf", "mlperf_conf", "", "an mlperf.conf to apply (LoadGen's syntax)")
	f.str(&sf.userConf, "user-conf", "user_conf", "", "a user.conf to apply after mlperf.conf (LoadGen's syntax)")
}

// addIssuersFlag registers --issuers: run and schedule. It never changes
// the trace, so schedule takes it only so that the flags of a run give it
// the run's trace, and refuses it where run does (SingleStream and
// MultiStream).
func (f *specFlags) addIssuersFlag() {
	f.uint(&f.spec.Overrides.Issuers, "issuers", "settings.issuers", "split the issuing between N issuers, each on its own OS thread with its own event-loop client and 1/N of the connections (Server, Offline and --concurrency runs; one host's cores: the trace, the statistics and the logs are the same for any N; default 1)")
}

// fill writes into the spec what the flags hold outside it: the sample
// counts that were given and the conf files' texts. applySet must have
// run (set).
func (sf *settingsFlags) fill(spec *api.RunSpec, set map[string]bool) error {
	if err := sf.shape.fill(&spec.TraceStartMs, &spec.TraceDurationMs); err != nil {
		return err
	}
	if set["total-samples"] || set["performance-samples"] {
		// The flags' 0 is no size; the spec's 0 is the default size.
		if sf.totalSamples <= 0 || sf.perfSamples <= 0 {
			return errors.New("--total-samples and --performance-samples must be at least 1")
		}
		if set["total-samples"] {
			spec.TotalSamples = sf.totalSamples
		}
		if set["performance-samples"] {
			spec.PerformanceSamples = sf.perfSamples
		}
	}
	for _, c := range []struct {
		flag, path string
		text       *string
	}{{"mlperf-conf", sf.mlperfConf, &spec.MLPerfConf}, {"user-conf", sf.userConf, &spec.UserConf}} {
		if c.path == "" {
			continue
		}
		b, err := os.ReadFile(c.path)
		if err != nil {
			return fmt.Errorf("--%s: %w", c.flag, err)
		}
		*c.text = string(b)
	}
	return nil
}

// env is where the spec's settings are built: the conf files' names in
// their errors.
func (sf *settingsFlags) env() runspec.Env {
	// The user's own files: a trace file is read as given.
	return runspec.Env{MLPerfConfName: sf.mlperfConf, UserConfName: sf.userConf, AnyData: true}
}
