package loadgen

import (
	"testing"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// TestOfficialConf: the built-in mlperf.conf parses, carries the seeds the
// loadgen6 defaults carry, and applies per model and scenario as LoadGen's
// lookup does (model.scenario before *.scenario).
func TestOfficialConf(t *testing.T) {
	pct := 99.9 // a variable: Go's constant arithmetic would be exact
	for _, c := range []struct {
		model    string
		scenario trace.Scenario
		check    func(s Settings) bool
		what     string
	}{
		{"resnet50", trace.Server, func(s Settings) bool { return s.ServerTargetLatencyNs == 15_000_000 && s.MinDurationMs == 600_000 }, "resnet50's 15 ms bound and 600 s"},
		{"anything", trace.Server, func(s Settings) bool { return s.ServerTargetLatencyNs == 10_000_000 }, "the default 10 ms bound"},
		{"resnet50", trace.Offline, func(s Settings) bool { return s.MinQueryCount == 24_576 && s.PerformanceSampleCountOverride == 1024 }, "24,576 samples of 1,024"},
		{"anything", trace.MultiStream, func(s Settings) bool {
			return s.MultiStreamSamplesPerQuery == 8 && s.MinQueryCount == 662 && s.MultiStreamExpectedLatencyNs == 80e6
		}, "8 streams, 662 queries, 80 ms"},
		// LoadGen multiplies the percent by 0.01 in double, as ApplyConfig does.
		{"pointpainting", trace.SingleStream, func(s Settings) bool { return s.SingleStreamTargetLatencyPercentile == pct*0.01 }, "p99.9"},
		{"llama2-70b", trace.Server, func(s Settings) bool {
			return s.UseTokenLatencies && s.ServerTTFTLatencyNs == 2_000_000_000 && s.ServerTPOTLatencyNs == 200_000_000 && s.ServerTargetLatencyNs == 0
		}, "TTFT 2 s, TPOT 200 ms, no target_latency"},
	} {
		s := Settings{Ruleset: RulesetLoadGen6, Scenario: c.scenario}
		if err := s.ApplyConfig(OfficialConf(), MLPerfConf, c.model); err != nil {
			t.Fatal(err)
		}
		if s.QSLRNGSeed != OfficialQSLRNGSeed || s.SampleIndexRNGSeed != OfficialSampleIndexRNGSeed || s.ScheduleRNGSeed != OfficialScheduleRNGSeed {
			t.Errorf("%s %s: seeds %d %d %d, want the official ones", c.model, c.scenario, s.QSLRNGSeed, s.SampleIndexRNGSeed, s.ScheduleRNGSeed)
		}
		if !c.check(s) {
			t.Errorf("%s %s: want %s, got %+v", c.model, c.scenario, c.what, s)
		}
	}
	d := DefaultSettings(RulesetLoadGen6)
	if d.QSLRNGSeed != 2085463073848966840 || d.SampleIndexRNGSeed != 2747215439041700203 || d.ScheduleRNGSeed != 16159082839903944936 {
		t.Errorf("loadgen6 default seeds %d %d %d, want LoadGen 6.0.17's", d.QSLRNGSeed, d.SampleIndexRNGSeed, d.ScheduleRNGSeed)
	}
	if v := DefaultSettings(RulesetV05); v.QSLRNGSeed != 0 || v.ScheduleRNGSeed != 0 {
		t.Errorf("v0.5 default seeds %d, %d: v0.5 keeps its own (0)", v.QSLRNGSeed, v.ScheduleRNGSeed)
	}
}
