package runspec

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// DefaultRuleset applies when a spec names none.
const DefaultRuleset = loadgen.RulesetLoadGen6

// Settings builds the engine's settings from a spec, the one place they are
// built: the ruleset's defaults for the scenario (NewSettings), mlperf_conf
// and user_conf as LoadGen's FromConfig applies them (applyConfs), the
// preset, then each override that is set, then Validate. Errors are
// *api.FieldError naming the spec's field (the convenience the user wrote
// when one set the failing LoadGen setting). It checks no api.Limits:
// Admit does.
func Settings(s api.RunSpec) (loadgen.Settings, error) {
	ls, _, err := buildSettings(s, confNames{})
	return ls, err
}

// confNames are the names ParseConfig gives the conf texts in its
// messages: the spec's field names unless a caller read them from files.
type confNames struct{ mlperf, user string }

// buildSettings also returns, for each LoadGen setting an override wrote,
// the spec field that wrote it, so later checks can name what the user
// typed.
func buildSettings(s api.RunSpec, names confNames) (loadgen.Settings, map[string]string, error) {
	src := map[string]string{}
	if s.Scenario == "" {
		s.Scenario = api.DefaultScenario
	}
	sc, err := trace.ParseScenario(s.Scenario)
	if err != nil {
		return loadgen.Settings{}, src, fieldErr("scenario", "%q is not SingleStream, MultiStream, Server or Offline", s.Scenario)
	}
	rs := loadgen.Ruleset(s.Ruleset)
	if rs == "" {
		rs = DefaultRuleset
	}
	if rs != loadgen.RulesetV05 && rs != loadgen.RulesetLoadGen6 {
		return loadgen.Settings{}, src, fieldErr("ruleset", "%q is not v0.5 or loadgen6", s.Ruleset)
	}
	ls, err := loadgen.NewSettings(rs, sc, "")
	if err != nil {
		return ls, src, fieldErr("ruleset", "%s", trimSettingsErr(err))
	}
	applyDefaults(&ls)
	return layerSettings(s, names, ls, true)
}

// layerSettings applies what a spec says over settings it starts from (a
// ruleset's defaults for a run, a recorded run's for a rejudge): the conf
// texts, the preset, the overrides, the SLO, then Validate. builtIn: a
// user.conf alone follows LoadGen's built-in mlperf.conf (applyConfs).
func layerSettings(s api.RunSpec, names confNames, ls loadgen.Settings, builtIn bool) (loadgen.Settings, map[string]string, error) {
	src := map[string]string{}
	if err := applyConfs(s, names, &ls, builtIn); err != nil {
		return ls, src, err
	}
	if err := ls.ApplyPreset(s.Preset); err != nil {
		return ls, src, fieldErr("preset", "%s", trimSettingsErr(err))
	}
	if err := applyOverrides(s.Overrides, &ls, src); err != nil {
		return ls, src, err
	}
	if err := unusedTokenBounds(s.Overrides, ls); err != nil {
		return ls, src, err
	}
	if s.SLO != "" {
		slo, err := genai.ParseSLO(s.SLO)
		if err != nil {
			return ls, src, fieldErr("slo", "%s", strings.TrimPrefix(err.Error(), genai.ErrSLO.Error()+": "))
		}
		ls.Engine.SLO = slo
	}
	if err := ls.Validate(); err != nil {
		return ls, src, settingsFieldErr(err, src)
	}
	if n, c := ls.Engine.Issuers, ls.Engine.Concurrency; n > 1 && c > 0 && c < n {
		// The engine refuses it too, but only once the target is probed.
		return ls, src, fieldErr("settings.issuers", "%d issuers of a closed loop of %d: each issuer keeps a share of the outstanding requests, so the concurrency must be at least the issuers; lower issuers or raise concurrency", n, c)
	}
	return ls, src, nil
}

// netloadgen's defaults where LoadGen's make a run that says nothing. Each
// applies before the conf texts, the preset and the settings block, so any
// of them replaces it.
const (
	// DefaultOfflineExpectedQPS sizes Offline's one query: 1.1 × 10 s ×
	// 1000 = 11,000 samples, a run of at least min_duration against an
	// endpoint of up to 1,100 samples/s. LoadGen's 1 makes 100 samples,
	// answered in milliseconds: INVALID whatever the endpoint.
	DefaultOfflineExpectedQPS = 1000
	// DefaultMultiStreamExpectedLatencyNs sizes loadgen6 MultiStream's
	// trace: twice min_duration at 1000 queries/s, enough for an endpoint
	// answering a query in 0.5 ms or more. LoadGen's 8 ms runs out of
	// queries against any endpoint faster than 4 ms a query. A longer
	// trace costs memory, not time: the run ends at its minimums. (v0.5
	// issues on its interval and never runs out.)
	DefaultMultiStreamExpectedLatencyNs = 1_000_000
)

// applyDefaults sets netloadgen's defaults on LoadGen's: early verdict
// (a performance run stops once its verdict can no longer change;
// settings.early_verdict false keeps LoadGen's full length; accuracy runs
// do not use it), and the two above.
func applyDefaults(ls *loadgen.Settings) {
	ls.Engine.EarlyVerdict = true
	switch {
	case ls.Scenario == trace.Offline:
		ls.OfflineExpectedQPS = DefaultOfflineExpectedQPS
	case ls.Scenario == trace.MultiStream && ls.Ruleset == loadgen.RulesetLoadGen6:
		ls.MultiStreamExpectedLatencyNs = DefaultMultiStreamExpectedLatencyNs
	}
}

// applyConfs applies the spec's mlperf.conf and user.conf, as LoadGen's
// FromConfig does: mlperf.conf first (conf_type 0, the only one whose seeds
// count), then user.conf. Under loadgen6 a user.conf without an mlperf.conf
// gets LoadGen 6.0.17's built-in one first, as FromConfig loads it; a run
// with neither keeps the defaults, with the official seeds
// (loadgen.DefaultSettings). v0.5's user passed their own mlperf.conf.
// Without builtIn (a rejudge: a recorded run's settings already hold the
// mlperf.conf it had) a user.conf alone is applied on its own.
func applyConfs(s api.RunSpec, names confNames, ls *loadgen.Settings, builtIn bool) error {
	if builtIn && s.MLPerfConf == "" && s.UserConf != "" && ls.Ruleset == loadgen.RulesetLoadGen6 {
		if err := ls.ApplyConfig(loadgen.OfficialConf(), loadgen.MLPerfConf, s.Model); err != nil {
			return fieldErr("user_conf", "applying %s before it: %v", loadgen.OfficialConfName, err)
		}
	}
	for _, c := range []struct {
		field, text string
		kind        loadgen.ConfigKind
		name        string
	}{{"mlperf_conf", s.MLPerfConf, loadgen.MLPerfConf, names.mlperf}, {"user_conf", s.UserConf, loadgen.UserConf, names.user}} {
		if c.text == "" {
			continue
		}
		if c.name == "" {
			c.name = c.field
		}
		cfg, err := loadgen.ParseConfig(c.name, strings.NewReader(c.text))
		if err != nil {
			return fieldErr(c.field, "%v", err)
		}
		if err := ls.ApplyConfig(cfg, c.kind, s.Model); err != nil {
			return fieldErr(c.field, "%v", err)
		}
	}
	return nil
}

// ambiguous refuses a convenience with a LoadGen name that writes the same
// setting.
func ambiguous(o api.RunSettings) error {
	pairs := []struct {
		conv, exact string
		a, b        bool
	}{
		{"target_qps", "server_target_qps", o.TargetQPS != nil, o.ServerTargetQPS != nil},
		{"target_qps", "offline_expected_qps", o.TargetQPS != nil, o.OfflineExpectedQPS != nil},
		{"target_latency_ms", "server_target_latency_ns", o.TargetLatencyMs != nil, o.ServerTargetLatencyNs != nil},
		{"latency_percentile", "server_target_latency_percentile", o.LatencyPercentile != nil, o.ServerTargetLatencyPercentile != nil},
		{"latency_percentile", "single_stream_target_latency_percentile", o.LatencyPercentile != nil, o.SingleStreamTargetLatencyPercentile != nil},
		{"latency_percentile", "multi_stream_target_latency_percentile", o.LatencyPercentile != nil, o.MultiStreamTargetLatencyPercentile != nil},
		{"expected_latency_ns", "single_stream_expected_latency_ns", o.ExpectedLatencyNs != nil, o.SingleStreamExpectedLatencyNs != nil},
		{"expected_latency_ns", "multi_stream_expected_latency_ns", o.ExpectedLatencyNs != nil, o.MultiStreamExpectedLatencyNs != nil},
		{"samples_per_query", "multi_stream_samples_per_query", o.SamplesPerQuery != nil, o.MultiStreamSamplesPerQuery != nil},
		{"interval_ms", "multi_stream_target_qps", o.IntervalMs != nil, o.MultiStreamTargetQPS != nil},
	}
	for _, p := range pairs {
		if p.a && p.b {
			return fieldErr("settings."+p.exact, "sets the same setting as settings.%s; give one of them", p.conv)
		}
	}
	return nil
}

// override is one field of the settings block: the LoadGen settings it
// writes and how, nil set when the spec leaves it out.
type override struct {
	field string
	wrote []string
	set   func() error
}

// applyOverrides writes the overrides that are set, in `loadgend run`'s
// order, and records in src which field wrote each LoadGen setting.
func applyOverrides(o api.RunSettings, ls *loadgen.Settings, src map[string]string) error {
	if err := ambiguous(o); err != nil {
		return err
	}
	for _, ov := range overrides(o, ls) {
		if ov.set == nil {
			continue
		}
		if err := ov.set(); err != nil {
			return fieldErr("settings."+ov.field, "%v", err)
		}
		for _, n := range ov.wrote {
			src[n] = "settings." + ov.field
		}
	}
	return nil
}

// overrides lists the settings block's fields, each with its check.
func overrides(o api.RunSettings, ls *loadgen.Settings) []override {
	same := func(field string, set func() error) override { return override{field, []string{field}, set} }
	e := &ls.Engine
	return []override{
		{"target_qps", []string{"server_target_qps", "offline_expected_qps"}, positiveTo(o.TargetQPS, &ls.ServerTargetQPS, &ls.OfflineExpectedQPS)},
		same("server_target_qps", positiveTo(o.ServerTargetQPS, &ls.ServerTargetQPS)),
		same("offline_expected_qps", positiveTo(o.OfflineExpectedQPS, &ls.OfflineExpectedQPS)),
		{"expected_latency_ns", []string{"single_stream_expected_latency_ns", "multi_stream_expected_latency_ns"},
			positiveTo(o.ExpectedLatencyNs, &ls.SingleStreamExpectedLatencyNs, &ls.MultiStreamExpectedLatencyNs)},
		same("single_stream_expected_latency_ns", positiveTo(o.SingleStreamExpectedLatencyNs, &ls.SingleStreamExpectedLatencyNs)),
		same("multi_stream_expected_latency_ns", positiveTo(o.MultiStreamExpectedLatencyNs, &ls.MultiStreamExpectedLatencyNs)),
		{"samples_per_query", []string{"multi_stream_samples_per_query"}, oneOrMoreTo(o.SamplesPerQuery, &ls.MultiStreamSamplesPerQuery)},
		same("multi_stream_samples_per_query", oneOrMoreTo(o.MultiStreamSamplesPerQuery, &ls.MultiStreamSamplesPerQuery)),
		same("min_duration_ms", copyTo(o.MinDurationMs, &ls.MinDurationMs)),
		same("max_duration_ms", copyTo(o.MaxDurationMs, &ls.MaxDurationMs)),
		same("min_query_count", copyTo(o.MinQueryCount, &ls.MinQueryCount)),
		same("max_query_count", copyTo(o.MaxQueryCount, &ls.MaxQueryCount)),
		same("qsl_rng_seed", copyTo(o.QSLRNGSeed, &ls.QSLRNGSeed)),
		same("sample_index_rng_seed", copyTo(o.SampleIndexRNGSeed, &ls.SampleIndexRNGSeed)),
		same("schedule_rng_seed", copyTo(o.ScheduleRNGSeed, &ls.ScheduleRNGSeed)),
		same("sample_concatenate_permutation", copyTo(o.SampleConcatenatePermutation, &ls.SampleConcatenatePermutation)),
		same("performance_issue_unique", copyTo(o.PerformanceIssueUnique, &ls.PerformanceIssueUnique)),
		same("performance_issue_same", copyTo(o.PerformanceIssueSame, &ls.PerformanceIssueSame)),
		same("performance_issue_same_index", copyTo(o.PerformanceIssueSameIndex, &ls.PerformanceIssueSameIndex)),
		same("performance_sample_count_override", copyTo(o.PerformanceSampleCountOverride, &ls.PerformanceSampleCountOverride)),
		same("server_max_async_queries", copyTo(o.ServerMaxAsyncQueries, &ls.ServerMaxAsyncQueries)),
		{"target_latency_ms", []string{"server_target_latency_ns"}, msTo(o.TargetLatencyMs, &ls.ServerTargetLatencyNs)},
		same("server_target_latency_ns", ifSet(o.ServerTargetLatencyNs, func(ns uint64) error {
			if ns == 0 || ns > math.MaxInt64 {
				return fmt.Errorf("must be positive and at most %d, got %d", int64(math.MaxInt64), ns)
			}
			ls.ServerTargetLatencyNs = ns
			return nil
		})),
		{"latency_percentile", []string{"server_target_latency_percentile", "single_stream_target_latency_percentile", "multi_stream_target_latency_percentile"},
			ifSet(o.LatencyPercentile, func(p float64) error {
				// The CLI's rule: 99 means 0.99. Exactly 1 stays a fraction
				// and is refused; nothing in (1, 100) is a fraction.
				asked := p
				if p > 1 && p < 100 {
					p /= 100
				}
				if !(p > 0 && p < 1) {
					return fmt.Errorf("must be a fraction in (0, 1) or a percent in (1, 100), got %v", asked)
				}
				ls.ServerTargetLatencyPercentile, ls.SingleStreamTargetLatencyPercentile, ls.MultiStreamTargetLatencyPercentile = p, p, p
				return nil
			})},
		same("server_target_latency_percentile", fractionTo(o.ServerTargetLatencyPercentile, &ls.ServerTargetLatencyPercentile)),
		same("single_stream_target_latency_percentile", fractionTo(o.SingleStreamTargetLatencyPercentile, &ls.SingleStreamTargetLatencyPercentile)),
		same("multi_stream_target_latency_percentile", fractionTo(o.MultiStreamTargetLatencyPercentile, &ls.MultiStreamTargetLatencyPercentile)),
		{"interval_ms", []string{"multi_stream_target_qps"}, ifSet(o.IntervalMs, func(ms float64) error {
			if !positive(ms) {
				return fmt.Errorf("must be a positive number, got %v", ms)
			}
			ls.MultiStreamTargetQPS = 1000 / ms
			return nil
		})},
		same("multi_stream_target_qps", positiveTo(o.MultiStreamTargetQPS, &ls.MultiStreamTargetQPS)),
		same("use_token_latencies", copyTo(o.UseTokenLatencies, &ls.UseTokenLatencies)),
		{"ttft_latency_ms", []string{"server_ttft_latency"}, msTo(o.TTFTLatencyMs, &ls.ServerTTFTLatencyNs)},
		{"tpot_latency_ms", []string{"server_tpot_latency"}, msTo(o.TPOTLatencyMs, &ls.ServerTPOTLatencyNs)},
		same("infer_token_latencies", copyTo(o.InferTokenLatencies, &ls.InferTokenLatencies)),
		same("token_latency_scaling_factor", oneOrMoreTo(o.TokenLatencyScalingFactor, &ls.TokenLatencyScalingFactor)),
		{"drain_timeout_ms", []string{"engine.drain_timeout_ms"}, copyTo(o.DrainTimeoutMs, &e.DrainTimeoutMs)},
		{"early_verdict", []string{"engine.early_verdict"}, copyTo(o.EarlyVerdict, &e.EarlyVerdict)},
		{"warmup_ms", []string{"engine.warmup_ms"}, copyTo(o.WarmupMs, &e.WarmupMs)},
		{"concurrency", []string{"engine.concurrency"}, ifSet(o.Concurrency, func(n uint64) error {
			if n == 0 || n > loadgen.MaxConcurrency {
				return fmt.Errorf("must be in [1, %d], got %d", loadgen.MaxConcurrency, n)
			}
			e.Concurrency = int(n)
			return nil
		})},
		{"issuers", []string{"engine.issuers"}, ifSet(o.Issuers, func(n uint64) error {
			if n == 0 || n > loadgen.MaxIssuers {
				return fmt.Errorf("must be in [1, %d], got %d", loadgen.MaxIssuers, n)
			}
			e.Issuers = int(n)
			return nil
		})},
	}
}

// ifSet is f applied to *v, or nil (nothing to do) when v is nil.
func ifSet[T any](v *T, f func(T) error) func() error {
	if v == nil {
		return nil
	}
	return func() error { return f(*v) }
}

func copyTo[T any](v *T, dst *T) func() error {
	return ifSet(v, func(x T) error { *dst = x; return nil })
}

func positiveTo(v *float64, dst ...*float64) func() error {
	return ifSet(v, func(x float64) error {
		if !positive(x) {
			return fmt.Errorf("must be a positive number, got %v", x)
		}
		for _, d := range dst {
			*d = x
		}
		return nil
	})
}

func fractionTo(v *float64, dst *float64) func() error {
	return ifSet(v, func(x float64) error {
		if !(x > 0 && x < 1) {
			return fmt.Errorf("must be a fraction in (0, 1), got %v", x)
		}
		*dst = x
		return nil
	})
}

func oneOrMoreTo(v *uint64, dst *uint64) func() error {
	return ifSet(v, func(x uint64) error {
		if x == 0 {
			return errors.New("must be at least 1")
		}
		*dst = x
		return nil
	})
}

// msTo sets a bound in ns from ms, positive and within int64 ns.
func msTo(v *float64, dst *uint64) func() error {
	return ifSet(v, func(ms float64) error {
		if !positive(ms) {
			return fmt.Errorf("must be a positive number, got %v", ms)
		}
		if ms*1e6 >= math.MaxInt64 {
			return fmt.Errorf("too large: %v ms", ms)
		}
		*dst = uint64(ms * 1e6)
		return nil
	})
}

// unusedTokenBounds refuses a token setting that the settings in the end
// ignore: LoadGen reads the TTFT/TPOT bounds only with
// use_token_latencies, the factor only with infer_token_latencies, so a
// bound given without them would silently judge nothing.
func unusedTokenBounds(o api.RunSettings, ls loadgen.Settings) error {
	const presets = "llama2-70b, llama2-70b-interactive, llama3.1-405b or mixtral-8x7b"
	for _, c := range []struct {
		field string
		set   bool
	}{{"ttft_latency_ms", o.TTFTLatencyMs != nil}, {"tpot_latency_ms", o.TPOTLatencyMs != nil}} {
		if c.set && !ls.UseTokenLatencies {
			return fieldErr("settings."+c.field, "has no effect without use_token_latencies: set it too (--use-token-latencies, settings.use_token_latencies) or use the preset %s", presets)
		}
	}
	if o.TokenLatencyScalingFactor != nil && !ls.InferTokenLatencies {
		return fieldErr("settings.token_latency_scaling_factor", "has no effect without infer_token_latencies: set it too (--infer-token-latencies, settings.infer_token_latencies) or use the preset gptj")
	}
	return nil
}

func positive(v float64) bool { return v > 0 && !math.IsInf(v, 0) }

// settingsFieldErr turns a loadgen settings error ("invalid test settings:
// server_target_qps: must be ...") into a FieldError on the spec field that
// wrote the setting, or on settings.<name> when a preset or conf did.
func settingsFieldErr(err error, src map[string]string) error {
	msg := trimSettingsErr(err)
	name, rest, ok := strings.Cut(msg, ": ")
	if !ok || strings.ContainsAny(name, " \"") {
		return &api.FieldError{Field: "settings", Message: msg}
	}
	switch name {
	case "ruleset", "scenario":
		return &api.FieldError{Field: name, Message: rest}
	}
	if f, ok := src[name]; ok {
		return &api.FieldError{Field: f, Message: fmt.Sprintf("%s (as %s)", rest, name)}
	}
	return &api.FieldError{Field: "settings." + strings.TrimPrefix(name, "engine."), Message: rest}
}

func trimSettingsErr(err error) string {
	msg := err.Error()
	if errors.Is(err, trace.ErrInvalidSettings) {
		msg = strings.TrimPrefix(msg, trace.ErrInvalidSettings.Error()+": ")
	}
	return msg
}

func fieldErr(field, format string, args ...any) *api.FieldError {
	return &api.FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}
