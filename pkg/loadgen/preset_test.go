package loadgen

import (
	"errors"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

var llmTasks = []string{"llama2-70b", "llama2-70b-interactive", "llama3.1-405b", "mixtral-8x7b", "gptj"}

// TestLLMPresetsAreOfficialConf: each LLM preset sets what LoadGen
// 6.0.17's mlperf.conf (official.conf) sets for the task, read through
// ApplyConfig as FromConfig reads it, in every scenario: token latencies
// and their bounds, the query-latency bound, percentiles, equal issue,
// minimum duration and count.
func TestLLMPresetsAreOfficialConf(t *testing.T) {
	for _, task := range llmTasks {
		p, err := LookupPreset(task)
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range []trace.Scenario{trace.SingleStream, trace.Server, trace.Offline} {
			if sc == trace.Offline && p.OfflineSamples == 0 {
				continue // an interactive task has no Offline scenario; mlperf.conf sets it no count
			}
			got, err := NewSettings(RulesetLoadGen6, sc, task)
			if err != nil {
				t.Fatal(err)
			}
			want := DefaultSettings(RulesetLoadGen6)
			want.Scenario = sc
			if err := want.ApplyConfig(OfficialConf(), MLPerfConf, p.ConfName()); err != nil {
				t.Fatal(err)
			}
			type view struct {
				Use, Infer, Perm        bool
				TTFT, TPOT, Factor      uint64
				Bound, MinMs, MinCount  uint64
				ServerPct, SSPct, SSExp float64
			}
			of := func(s Settings) view {
				return view{s.UseTokenLatencies, s.InferTokenLatencies, s.SampleConcatenatePermutation,
					s.ServerTTFTLatencyNs, s.ServerTPOTLatencyNs, s.TokenLatencyScalingFactor,
					s.ServerTargetLatencyNs, s.MinDurationMs, s.MinQueryCount,
					s.ServerTargetLatencyPercentile, s.SingleStreamTargetLatencyPercentile, s.SingleStreamExpectedLatencyNs}
			}
			if g, w := of(got), of(want); g != w {
				t.Errorf("%s %s: preset %+v, mlperf.conf %+v", task, sc, g, w)
			}
			// The engine judges token latencies in every scenario and
			// infers them (gptj) as LoadGen 6.0.17 does: every preset
			// runs as mlperf.conf sets it, SingleStream included.
			if err := got.Validate(); err != nil {
				t.Errorf("%s %s: %v", task, sc, err)
			}
		}
	}
}

// TestLLMPresetFigures pins the figures, so that a wrong
// official.conf cannot pass TestLLMPresetsAreOfficialConf alone.
func TestLLMPresetFigures(t *testing.T) {
	for _, c := range []struct {
		task       string
		ttft, tpot uint64
	}{{"llama2-70b", 2_000_000_000, 200_000_000}, {"llama2-70b-interactive", 450_000_000, 40_000_000}} {
		s, err := NewSettings(RulesetLoadGen6, trace.Server, c.task)
		if err != nil {
			t.Fatal(err)
		}
		if !s.UseTokenLatencies || s.ServerTTFTLatencyNs != c.ttft || s.ServerTPOTLatencyNs != c.tpot || s.ServerTargetLatencyNs != 0 || s.Task != c.task {
			t.Errorf("%s: use %v ttft %d tpot %d bound %d", c.task, s.UseTokenLatencies, s.ServerTTFTLatencyNs, s.ServerTPOTLatencyNs, s.ServerTargetLatencyNs)
		}
	}
	s, err := NewSettings(RulesetLoadGen6, trace.Offline, "llama3.1-405b")
	if err != nil {
		t.Fatal(err)
	}
	e, _ := trace.EffectiveSettings(s.TraceSettings(), trace.QSL{TotalSampleCount: 8313, PerformanceSampleCount: 8313})
	if why := s.compliance(e); len(why) != 0 || s.MinQueryCount != 8313 {
		t.Errorf("llama3.1-405b Offline: min count %d, compliance %v; want 8,313 samples compliant", s.MinQueryCount, why)
	}
}

// TestLLMPresetNeedsLoadGen6: v0.5 had no LLM benchmarks; the error says
// which ruleset to use.
func TestLLMPresetNeedsLoadGen6(t *testing.T) {
	_, err := NewSettings(RulesetV05, trace.Server, "llama2-70b")
	if !errors.Is(err, trace.ErrInvalidSettings) || !strings.Contains(err.Error(), "loadgen6") {
		t.Errorf("v0.5 llama2-70b: %v, want an error naming loadgen6", err)
	}
}

// TestPresetTokenSettingsScope: an LLM preset sets every token setting of
// its task (gptj: token latencies off, LoadGen's default bounds, whatever
// a conf said); a vision preset leaves them as the confs gave them.
func TestPresetTokenSettingsScope(t *testing.T) {
	s := DefaultSettings(RulesetLoadGen6)
	s.Scenario, s.UseTokenLatencies, s.ServerTTFTLatencyNs, s.SampleConcatenatePermutation = trace.Server, true, 7, true
	if err := s.ApplyPreset("resnet50"); err != nil {
		t.Fatal(err)
	}
	if !s.UseTokenLatencies || s.ServerTTFTLatencyNs != 7 || !s.SampleConcatenatePermutation || s.ServerTargetLatencyNs != 15_000_000 {
		t.Errorf("resnet50 over a conf's token settings: %+v", s)
	}
	if err := s.ApplyPreset("gptj"); err != nil {
		t.Fatal(err)
	}
	d := DefaultSettings(RulesetLoadGen6)
	if s.UseTokenLatencies || s.ServerTTFTLatencyNs != d.ServerTTFTLatencyNs || !s.InferTokenLatencies || s.TokenLatencyScalingFactor != 69 {
		t.Errorf("gptj over token settings: %+v", s)
	}
}

// TestValidateTokenSettings: with token latencies a Server run needs its
// TTFT and TPOT bounds, not a query-latency bound; an inferred token
// count needs its factor.
func TestValidateTokenSettings(t *testing.T) {
	base := func() Settings {
		s := DefaultSettings(RulesetLoadGen6)
		s.Scenario, s.UseTokenLatencies, s.ServerTargetLatencyNs = trace.Server, true, 0
		return s
	}
	if err := base().Validate(); err != nil {
		t.Errorf("token latencies with target latency 0: %v", err)
	}
	for _, c := range []struct {
		edit func(*Settings)
		want string
	}{
		{func(s *Settings) { s.ServerTTFTLatencyNs = 0 }, "server_ttft_latency"},
		{func(s *Settings) { s.ServerTPOTLatencyNs = 1 << 63 }, "server_tpot_latency"},
		{func(s *Settings) { s.UseTokenLatencies = false }, "server_target_latency_ns"},
		// SingleStream and MultiStream judge tokens by LoadGen 6.0.17's
		// early stopping, which v0.5 has not.
		{func(s *Settings) { s.Scenario, s.Ruleset = trace.SingleStream, RulesetV05 }, "use_token_latencies"},
		// Inferred tokens need their factor (LoadGen leaves it uninitialized).
		{func(s *Settings) { s.InferTokenLatencies, s.TokenLatencyScalingFactor = true, 0 }, "token_latency_scaling_factor"},
	} {
		s := base()
		c.edit(&s)
		if err := s.Validate(); !errors.Is(err, trace.ErrInvalidSettings) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate: %v, want an error naming %s", err, c.want)
		}
	}
}
