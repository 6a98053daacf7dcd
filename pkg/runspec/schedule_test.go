package runspec

import (
	"errors"
	"reflect"
	"testing"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// TestScheduleIsBuildsTrace: Schedule gives the settings Build gives a run
// of the same spec and the synthetic library's sizes (the spec's, or
// DefaultSamples), without a target or a model.
func TestScheduleIsBuildsTrace(t *testing.T) {
	qps := 50.0
	spec := api.RunSpec{Target: "http://h:8000", Model: "m", Scenario: "Server", PerformanceSamples: 512,
		Overrides: api.RunSettings{TargetQPS: &qps}, UserConf: "*.Server.min_query_count = 33\n"}
	r, err := Build(spec, Env{})
	if err != nil {
		t.Fatal(err)
	}
	bare := spec
	bare.Target, bare.Model = "", ""
	ls, qsl, err := Schedule(bare, Env{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ls, r.Spec.Settings) {
		t.Errorf("settings differ from Build's:\n%+v\n%+v", ls, r.Spec.Settings)
	}
	if want := (trace.QSL{TotalSampleCount: DefaultSamples, PerformanceSampleCount: 512}); qsl != want {
		t.Errorf("library %+v, want %+v", qsl, want)
	}
	if ls.QSLRNGSeed != loadgen.OfficialQSLRNGSeed || ls.MinQueryCount != 33 {
		t.Errorf("seed %d, min_query_count %d: want the official seed and user.conf's 33", ls.QSLRNGSeed, ls.MinQueryCount)
	}
	zero := 0.0
	if _, _, err := Schedule(api.RunSpec{Overrides: api.RunSettings{TargetQPS: &zero}}, Env{}); !isField(err, "settings.target_qps") {
		t.Errorf("target_qps 0: %v; want a field error on settings.target_qps", err)
	}
}

// TestRejudgeSettingsLayers: over a recorded run's settings, RejudgeSettings
// applies a run's layers (user.conf, preset, overrides); a user.conf alone
// does not bring LoadGen's built-in mlperf.conf back over the recorded
// values, which already hold it.
func TestRejudgeSettingsLayers(t *testing.T) {
	base := loadgen.DefaultSettings(loadgen.RulesetLoadGen6)
	base.Scenario, base.ServerTargetQPS, base.MinDurationMs = trace.Server, 3.4, 1234
	got, err := RejudgeSettings(base, api.RunSpec{UserConf: "*.Server.target_latency = 40\n"}, Env{})
	if err != nil {
		t.Fatal(err)
	}
	if got.ServerTargetLatencyNs != 40_000_000 || got.ServerTargetQPS != 3.4 || got.MinDurationMs != 1234 {
		t.Errorf("user.conf: latency %d ns, qps %v, min_duration %d; want 40 ms over the recorded 3.4 and 1234",
			got.ServerTargetLatencyNs, got.ServerTargetQPS, got.MinDurationMs)
	}
	got, err = RejudgeSettings(base, api.RunSpec{Preset: "resnet50"}, Env{})
	if err != nil || got.ServerTargetLatencyNs != 15_000_000 || got.Task != "resnet50" {
		t.Errorf("preset resnet50: %v, bound %d ns; want 15 ms", err, got.ServerTargetLatencyNs)
	}
	ttft := 10.0
	if _, err := RejudgeSettings(base, api.RunSpec{Overrides: api.RunSettings{TTFTLatencyMs: &ttft}}, Env{}); !isField(err, "settings.ttft_latency_ms") {
		t.Errorf("a TTFT bound without token latencies: %v; want a field error on settings.ttft_latency_ms", err)
	}
}

func isField(err error, field string) bool {
	fe, ok := errors.AsType[*api.FieldError](err)
	return ok && fe.Field == field
}
