package loadgen

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

func TestValidateNamesTheSetting(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Settings)
		want string
	}{
		{"ruleset", func(s *Settings) { s.Ruleset = "v9" }, "ruleset"},
		{"mode", func(s *Settings) { s.Mode = trace.AccuracyOnly }, "mode"},
		{"server qps", func(s *Settings) { s.Scenario, s.ServerTargetQPS = trace.Server, 0 }, "server_target_qps"},
		{"server percentile", func(s *Settings) { s.Scenario, s.ServerTargetLatencyPercentile = trace.Server, 99 }, "server_target_latency_percentile"},
		{"server bound", func(s *Settings) { s.Scenario, s.ServerTargetLatencyNs = trace.Server, 0 }, "server_target_latency_ns"},
		{"coalesce", func(s *Settings) { s.Scenario, s.ServerCoalesceQueries = trace.Server, true }, "server_coalesce_queries"},
		{"ss latency", func(s *Settings) { s.SingleStreamExpectedLatencyNs = -1 }, "single_stream_expected_latency_ns"},
		{"ms spq", func(s *Settings) { s.Scenario, s.MultiStreamSamplesPerQuery = trace.MultiStream, 0 }, "multi_stream_samples_per_query"},
		{"v0.5 ms async", func(s *Settings) {
			s.Ruleset, s.Scenario, s.MultiStreamMaxAsyncQueries = RulesetV05, trace.MultiStream, 2
		}, "multi_stream_max_async_queries"},
		{"offline qps", func(s *Settings) { s.Scenario, s.OfflineExpectedQPS = trace.Offline, 0 }, "offline_expected_qps"},
		{"tokens", func(s *Settings) { s.Scenario, s.UseTokenLatencies, s.ServerTTFTLatencyNs = trace.Server, true, 0 }, "server_ttft_latency"},
		{"drain", func(s *Settings) { s.Engine.DrainTimeoutMs = 0 }, "engine.drain_timeout_ms"},
		{"spin", func(s *Settings) { s.Engine.SpinThresholdNs = -1 }, "engine.spin_threshold_ns"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := DefaultSettings(RulesetLoadGen6)
			c.edit(&s)
			err := s.Validate()
			if !errors.Is(err, trace.ErrInvalidSettings) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Validate: %v, want an error naming %s", err, c.want)
			}
		})
	}
	for _, r := range []Ruleset{RulesetV05, RulesetLoadGen6} {
		if err := DefaultSettings(r).Validate(); err != nil {
			t.Errorf("defaults for %s: %v", r, err)
		}
	}
}

func TestPresets(t *testing.T) {
	cases := []struct {
		ruleset           Ruleset
		sc                trace.Scenario
		task              string
		bound             time.Duration
		interval          time.Duration
		p                 float64
		minMs, minQueries uint64
	}{
		{RulesetV05, trace.Server, "resnet50", 15 * time.Millisecond, 50 * time.Millisecond, 0.99, 60000, 270336},
		{RulesetV05, trace.Server, "gnmt", 250 * time.Millisecond, 100 * time.Millisecond, 0.97, 60000, 90112},
		{RulesetV05, trace.MultiStream, "mobilenet", 10 * time.Millisecond, 50 * time.Millisecond, 0.99, 60000, 270336},
		{RulesetV05, trace.MultiStream, "ssd-resnet34", 100 * time.Millisecond, 66 * time.Millisecond, 0.99, 60000, 270336},
		{RulesetV05, trace.SingleStream, "ssd-mobilenet", 10 * time.Millisecond, 50 * time.Millisecond, 0.90, 60000, 1024},
		{RulesetLoadGen6, trace.MultiStream, "resnet50", 15 * time.Millisecond, 50 * time.Millisecond, 0.99, 600000, 662},
	}
	for _, c := range cases {
		s, err := NewSettings(c.ruleset, c.sc, c.task)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(); err != nil {
			t.Errorf("%s %s: %v", c.task, c.sc, err)
		}
		if time.Duration(s.ServerTargetLatencyNs) != c.bound || s.TargetPercentile() != c.p || s.MinDurationMs != c.minMs || s.MinQueryCount != c.minQueries {
			t.Errorf("%s %s %s: bound %d, percentile %v, min %d ms / %d queries", c.ruleset, c.sc, c.task,
				s.ServerTargetLatencyNs, s.TargetPercentile(), s.MinDurationMs, s.MinQueryCount)
		}
		if c.ruleset == RulesetV05 && c.sc == trace.MultiStream && s.MultiStreamInterval() != c.interval {
			t.Errorf("%s interval %v, want %v", c.task, s.MultiStreamInterval(), c.interval)
		}
		e, _ := trace.EffectiveSettings(s.TraceSettings(), trace.QSL{TotalSampleCount: 1024, PerformanceSampleCount: 1024})
		if why := s.compliance(e); len(why) != 0 {
			t.Errorf("%s %s preset is not a compliant length: %v", c.task, c.sc, why)
		}
		s.MinDurationMs = 1000
		if why := s.compliance(e); len(why) == 0 {
			t.Errorf("%s %s shortened run counted as compliant", c.task, c.sc)
		}
	}
	if _, err := NewSettings(RulesetV05, trace.Server, "bert"); !errors.Is(err, trace.ErrInvalidSettings) {
		t.Errorf("unknown task: %v", err)
	}
}
