package loadgen

import (
	"errors"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

func parse(t *testing.T, name, text string) *Config {
	t.Helper()
	c, err := ParseConfig(name, strings.NewReader(text))
	if err != nil {
		t.Fatalf("ParseConfig(%s): %v", name, err)
	}
	return c
}

// The most specific key wins whatever the line order: model.scenario,
// *.scenario, model.*, *.*.
func TestConfigLookupOrder(t *testing.T) {
	cases := []struct {
		name, text string
		want       uint64
	}{
		{"exact beats all", "*.*.min_duration = 1\nresnet50.*.min_duration = 2\n*.Server.min_duration = 3\nresnet50.Server.min_duration = 4\n", 4},
		{"scenario wildcard model beats model wildcard scenario", "resnet50.*.min_duration = 2\n*.Server.min_duration = 3\n*.*.min_duration = 1\n", 3},
		{"model beats all-wildcard", "*.*.min_duration = 1\nresnet50.*.min_duration = 2\n", 2},
		{"other model and scenario ignored", "mobilenet.Server.min_duration = 9\nresnet50.Offline.min_duration = 8\n*.*.min_duration = 1\n", 1},
		{"last duplicate wins", "*.*.min_duration = 1\n*.*.min_duration = 5\n", 5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := DefaultSettings(RulesetLoadGen6)
			s.Scenario = trace.Server
			if err := s.ApplyConfig(parse(t, "user.conf", c.text), UserConf, "resnet50"); err != nil {
				t.Fatal(err)
			}
			if s.MinDurationMs != c.want {
				t.Errorf("min_duration_ms = %d, want %d", s.MinDurationMs, c.want)
			}
		})
	}
}

const mlperfConfExcerpt = `# The format of this config file is 'key = value'.
resnet50.*.performance_sample_count_override = 1024
*.*.qsl_rng_seed = 1780908523862526354
*.*.sample_index_rng_seed = 14771362308971278857
*.*.schedule_rng_seed = 18209322760996052031
*.SingleStream.target_latency_percentile = 90
*.SingleStream.min_duration = 600000
*.MultiStream.target_latency_percentile = 99
*.MultiStream.samples_per_query = 8
*.MultiStream.min_query_count = 662
*.Server.target_latency = 10
*.Server.target_latency_percentile = 99
*.Server.target_duration = 0
*.Server.min_duration = 600000
resnet50.Server.target_latency = 15
llama2-70b.*.use_token_latencies = 1
llama2-70b.Server.ttft_latency = 2000
resnet50.Offline.min_query_count = 24576
*.SingleStream.target_latency = 10
*.Server.target_qps = 1.0
`

// mlperf.conf then user.conf: user.conf wins for what it sets, but under
// loadgen6 its seeds are ignored; under v0.5 every file sets them.
func TestConfigPrecedenceAndSeeds(t *testing.T) {
	user := "*.Server.target_qps = 2500.5\n*.*.min_duration = 60000\n*.*.qsl_rng_seed = 77\nresnet50.Server.target_latency_percentile = 97\n"
	for _, r := range []Ruleset{RulesetLoadGen6, RulesetV05} {
		t.Run(string(r), func(t *testing.T) {
			s := DefaultSettings(r)
			s.Scenario = trace.Server
			if err := s.ApplyConfig(parse(t, "mlperf.conf", mlperfConfExcerpt), MLPerfConf, "resnet50"); err != nil {
				t.Fatal(err)
			}
			if s.ServerTargetLatencyNs != 15_000_000 || s.ServerTargetLatencyPercentile != 0.99 || s.MinDurationMs != 600000 || s.PerformanceSampleCountOverride != 1024 {
				t.Errorf("after mlperf.conf: latency %d, percentile %v, min duration %d, perf count %d",
					s.ServerTargetLatencyNs, s.ServerTargetLatencyPercentile, s.MinDurationMs, s.PerformanceSampleCountOverride)
			}
			if s.QSLRNGSeed != 1780908523862526354 || s.ScheduleRNGSeed != 18209322760996052031 {
				t.Errorf("seeds from mlperf.conf: %d %d", s.QSLRNGSeed, s.ScheduleRNGSeed)
			}
			if s.UseTokenLatencies {
				t.Error("another model's key applied")
			}
			if err := s.ApplyConfig(parse(t, "user.conf", user), UserConf, "resnet50"); err != nil {
				t.Fatal(err)
			}
			if s.ServerTargetQPS != 2500.5 || s.MinDurationMs != 60000 || s.ServerTargetLatencyPercentile != 0.97 {
				t.Errorf("after user.conf: qps %v, min duration %d, percentile %v", s.ServerTargetQPS, s.MinDurationMs, s.ServerTargetLatencyPercentile)
			}
			wantSeed := uint64(1780908523862526354)
			if r == RulesetV05 {
				wantSeed = 77
			}
			if s.QSLRNGSeed != wantSeed {
				t.Errorf("qsl_rng_seed = %d, want %d", s.QSLRNGSeed, wantSeed)
			}
		})
	}
}

func TestConfigUnitsAndNumbers(t *testing.T) {
	text := "*.SingleStream.target_latency = 0.5\n*.MultiStream.target_latency = 80\n*.*.max_query_count = 0x3E8\n*.*.min_query_count = 010\n*.MultiStream.target_qps = 20\n*.*.performance_issue_same = 1\n"
	s := DefaultSettings(RulesetLoadGen6)
	if err := s.ApplyConfig(parse(t, "user.conf", text), UserConf, "m"); err != nil {
		t.Fatal(err)
	}
	if s.SingleStreamExpectedLatencyNs != 500_000 || s.MultiStreamExpectedLatencyNs != 80_000_000 {
		t.Errorf("expected latencies %v %v", s.SingleStreamExpectedLatencyNs, s.MultiStreamExpectedLatencyNs)
	}
	if s.MaxQueryCount != 1000 || s.MinQueryCount != 8 || !s.PerformanceIssueSame {
		t.Errorf("max %d (0x3E8), min %d (octal 010), same %v", s.MaxQueryCount, s.MinQueryCount, s.PerformanceIssueSame)
	}
	if s.MultiStreamTargetQPS != 10 {
		t.Errorf("loadgen6 read v0.5's MultiStream.target_qps: %v", s.MultiStreamTargetQPS)
	}
	v := DefaultSettings(RulesetV05)
	v.Scenario = trace.MultiStream
	// v0.5 read SingleStream.target_latency as an integer: 0.5 is refused.
	if err := v.ApplyConfig(parse(t, "mlperf.conf", text), MLPerfConf, "m"); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("v0.5 fractional SingleStream.target_latency: %v", err)
	}
	v = DefaultSettings(RulesetV05)
	v.Scenario = trace.MultiStream
	if err := v.ApplyConfig(parse(t, "mlperf.conf", strings.Replace(text, "0.5", "2", 1)), MLPerfConf, "m"); err != nil {
		t.Fatal(err)
	}
	if v.SingleStreamExpectedLatencyNs != 2_000_000 {
		t.Errorf("v0.5 SingleStream.target_latency = 2 gave %v ns", v.SingleStreamExpectedLatencyNs)
	}
	if v.MultiStreamTargetQPS != 20 || v.MultiStreamInterval().Milliseconds() != 50 {
		t.Errorf("v0.5 MultiStream target qps %v, interval %v", v.MultiStreamTargetQPS, v.MultiStreamInterval())
	}
}

func TestConfigBadLines(t *testing.T) {
	cases := []struct{ name, text, want string }{
		{"comment without space", "#text\n", "c.conf:1"},
		{"missing equals", "\n*.*.min_duration 5\n", "c.conf:2"},
		{"no value", "*.*.min_duration =\n", "has no value"},
		{"unknown key", "# ok\n*.*.min_durations = 5\n", `c.conf:2: key "*.*.min_durations": unknown setting`},
		{"unknown scenario", "*.server.min_duration = 5\n", `unknown scenario "server"`},
		{"not model.scenario.key", "min_duration = 5\n", "not model.scenario.name"},
		{"not a number", "*.*.min_duration = ten\n", "needs to be an integer or a double"},
		{"trailing junk", "*.*.min_duration = 5 6\n", "unexpected"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseConfig("c.conf", strings.NewReader(c.text))
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
	// Values that parse as numbers but not as what the key needs fail at
	// apply time, naming file, line and key.
	applyCases := []struct{ text, want string }{
		{"*.*.min_duration = 6e5\n", "c.conf:1: min_duration: needs an integer"},
		{"*.*.min_query_count = -1\n", "min_query_count: needs an integer"},
		{"*.*.mode = 7\n", "mode: must be 0-3"},
	}
	for _, c := range applyCases {
		s := DefaultSettings(RulesetLoadGen6)
		err := s.ApplyConfig(parse(t, "c.conf", c.text), UserConf, "m")
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.text, err, c.want)
		}
	}
}
