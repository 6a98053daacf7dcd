package runspec

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/shape"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// shaped is a spec of a load shape for the tests: a target, the model
// and the shape's fields edited in.
func shaped(edit func(*api.RunSpec)) api.RunSpec {
	s := api.RunSpec{Target: "http://h:1", Model: "m", Stages: "1s:10"}
	edit(&s)
	return s
}

// TestShapeRefusals: what a shaped run cannot be is refused before any
// shape is built, each naming the field (the CLI turns it into the flag)
// and saying why.
func TestShapeRefusals(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(outside, []byte(`{"timestamp": 0, "input_length": 1, "output_length": 1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	daemon := Env{DataRoot: root}
	cases := []struct {
		name  string
		edit  func(*api.RunSpec)
		env   Env
		field string
		want  string
	}{
		{"Offline", func(s *api.RunSpec) { s.Scenario = "Offline" }, Env{}, "scenario", "stages"},
		{"SingleStream with a mix", func(s *api.RunSpec) { s.Stages, s.Mix, s.Scenario = "", "m=1", "SingleStream" }, Env{}, "scenario", "mix"},
		{"closed loop", func(s *api.RunSpec) { s.Overrides.Concurrency = new(uint64(4)) }, Env{}, "settings.concurrency", "closed loop"},
		{"workers", func(s *api.RunSpec) { s.Workers = 2 }, Env{}, "workers", "one host"},
		{"find-peak", func(s *api.RunSpec) { s.Search = &api.Search{Mode: api.SearchFindPeak} }, Env{}, "stages", "peak search"},
		{"sweep of rates", func(s *api.RunSpec) { s.Search = &api.Search{Mode: api.SearchSweep, Rates: []float64{1, 2}} }, Env{}, "stages", "sweep of rates"},
		{"stages and trace", func(s *api.RunSpec) { s.Trace = "t.jsonl" }, Env{}, "trace", "leave stages out"},
		{"arrivals alone", func(s *api.RunSpec) { s.Stages, s.Arrivals = "", "gamma:2" }, Env{}, "arrivals", "give stages"},
		{"arrivals with a trace", func(s *api.RunSpec) { s.Stages, s.Trace, s.Arrivals = "", "t.jsonl", "poisson" }, Env{}, "arrivals", "own arrival times"},
		{"trace speed without a trace", func(s *api.RunSpec) { s.TraceSpeed = 2 }, Env{}, "trace_speed", "give trace"},
		{"trace start without a trace", func(s *api.RunSpec) { s.TraceStartMs = 5 }, Env{}, "trace_start_ms", "give trace"},
		{"trace speed too high", func(s *api.RunSpec) { s.Stages, s.Trace, s.TraceSpeed = "", "t.jsonl", 1e6 }, Env{}, "trace_speed", "(0, 1000]"},
		{"trace speed negative", func(s *api.RunSpec) { s.Stages, s.Trace, s.TraceSpeed = "", "t.jsonl", -1 }, Env{}, "trace_speed", "(0, 1000]"},
		{"trace window over 30 days", func(s *api.RunSpec) { s.Stages, s.Trace, s.TraceDurationMs = "", "t.jsonl", 1<<40 }, Env{}, "trace_duration_ms", "30 days"},
		{"stages too long", func(s *api.RunSpec) { s.Stages = strings.Repeat("1s:1,", 1000) }, Env{}, "stages", "longer than"},
		{"no model, no mix", func(s *api.RunSpec) { s.Model = "" }, Env{}, "model", "required"},
		{"model not in the mix", func(s *api.RunSpec) { s.Stages, s.Mix = "", "a=1,b=1" }, Env{}, "model", "not in the mix"},
		{"trace without a data root", func(s *api.RunSpec) { s.Stages, s.Trace = "", "t.jsonl" }, Env{}, "trace", "LOADGEND_DATA_ROOT"},
		{"trace outside the data root", func(s *api.RunSpec) { s.Stages, s.Trace = "", outside }, daemon, "trace", "outside LOADGEND_DATA_ROOT"},
		{"trace missing", func(s *api.RunSpec) { s.Stages, s.Trace = "", "none.jsonl" }, daemon, "trace", "no such file"},
		{"trace speeds without a trace", func(s *api.RunSpec) {
			s.Search = &api.Search{Mode: api.SearchSweep, TraceSpeeds: []float64{1, 2}}
		}, Env{}, "search.trace_speeds", "give trace too"},
		{"trace speeds and rates", func(s *api.RunSpec) {
			s.Stages, s.Trace = "", "t.jsonl"
			s.Search = &api.Search{Mode: api.SearchSweep, TraceSpeeds: []float64{1}, Rates: []float64{5}}
		}, Env{}, "search.trace_speeds", "give one of rates and trace_speeds"},
		{"trace speeds in find-peak", func(s *api.RunSpec) {
			s.Stages, s.Trace = "", "t.jsonl"
			s.Search = &api.Search{Mode: api.SearchFindPeak, TraceSpeeds: []float64{1}}
		}, Env{}, "search.trace_speeds", "sweep"},
		{"trace speeds stopping saturated", func(s *api.RunSpec) {
			s.Stages, s.Trace = "", "t.jsonl"
			s.Search = &api.Search{Mode: api.SearchSweep, TraceSpeeds: []float64{1}, StopSaturated: true}
		}, Env{}, "search.stop_saturated", "leave it out"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := shaped(c.edit)
			_, err := Build(s, c.env)
			fe, ok := errors.AsType[*api.FieldError](err)
			if !ok {
				t.Fatalf("got %v, want a field error on %s", err, c.field)
			}
			if fe.Field != c.field || !strings.Contains(fe.Message, c.want) {
				t.Fatalf("got %s: %s; want %s mentioning %q", fe.Field, fe.Message, c.field, c.want)
			}
		})
	}
}

// TestShapeErrorsNameTheirField: what pkg/shape refuses comes back as a
// field error on the field that said it (the flag's, in the CLI).
func TestShapeErrorsNameTheirField(t *testing.T) {
	for _, c := range []struct {
		edit  func(*api.RunSpec)
		field string
	}{
		{func(s *api.RunSpec) { s.Stages = "fast" }, "stages"},
		{func(s *api.RunSpec) { s.Arrivals = "sometimes" }, "arrivals"},
		{func(s *api.RunSpec) { s.Stages, s.Mix = "", "=" }, "mix"},
	} {
		s := shaped(c.edit)
		_, err := Build(s, Env{})
		fe, ok := errors.AsType[*api.FieldError](err)
		if !ok || fe.Field != c.field {
			t.Errorf("%+v: got %v, want a field error on %s", s, err, c.field)
		}
	}
}

// TestStagesBuildTheShape: --stages builds the run's schedule from its
// schedule seed: the same seed the same arrivals, the Server scenario,
// about rate × duration of them; the mix alone one stage at target_qps.
func TestStagesBuildTheShape(t *testing.T) {
	count := func(s api.RunSpec) (int, []time.Duration) {
		t.Helper()
		r, err := Build(s, Env{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Spec.Settings.Shape == nil {
			t.Fatal("no shape built")
		}
		a, err := r.Spec.Settings.Shape.Arrivals()
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		var at []time.Duration
		for x, ok := a.Next(); ok; x, ok = a.Next() {
			at = append(at, x.At)
		}
		return len(at), at
	}
	n, a1 := count(shaped(func(s *api.RunSpec) { s.Stages = "10s:100" }))
	if n < 900 || n > 1100 {
		t.Errorf("10s at 100/s: %d arrivals, want 1000 ± 100 (Poisson's 3σ)", n)
	}
	_, a2 := count(shaped(func(s *api.RunSpec) { s.Stages = "10s:100" }))
	if len(a1) != len(a2) || a1[len(a1)/2] != a2[len(a2)/2] {
		t.Error("the same seeds made another schedule")
	}
	seed := uint64(99)
	_, a3 := count(shaped(func(s *api.RunSpec) { s.Stages, s.Overrides.ScheduleRNGSeed = "10s:100", &seed }))
	if len(a1) == len(a3) && a1[len(a1)/2] == a3[len(a3)/2] {
		t.Error("another schedule seed made the same schedule")
	}
	qps, dur := 50.0, uint64(4000)
	n, _ = count(shaped(func(s *api.RunSpec) {
		s.Stages, s.Model, s.Mix = "", "", "a=0.5,b=0.5"
		s.Overrides.TargetQPS, s.Overrides.MinDurationMs = &qps, &dur
	}))
	if n < 140 || n > 260 {
		t.Errorf("a mix alone at 50/s for 4s: %d arrivals, want 200 ± 60", n)
	}
}

// TestMixModelDefaultsToTheFirst: with a mix, model may be left out: the
// run's model is the mix's first, and the runner gets every entry.
func TestMixModelDefaultsToTheFirst(t *testing.T) {
	r, err := Build(api.RunSpec{Target: "http://h:1", Stages: "1s:10", Mix: "a=0.7,b=0.3@grpc://other:8001"}, Env{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Spec.Model != "a" || len(r.Spec.Mix) != 2 || r.Spec.Mix[1].Model != "b" || r.Spec.Mix[1].Target != "grpc://other:8001" {
		t.Fatalf("model %q, mix %+v", r.Spec.Model, r.Spec.Mix)
	}
}

// TestScheduleBuildsTheShape: `loadgend schedule`'s settings carry the
// shape `run` would issue.
func TestScheduleBuildsTheShape(t *testing.T) {
	ls, _, err := Schedule(api.RunSpec{Model: "m", Stages: "2s:5"}, Env{})
	if err != nil {
		t.Fatal(err)
	}
	if ls.Shape == nil {
		t.Fatal("schedule built no shape")
	}
	tr, err := trace.New(ls.TraceSettings(), trace.QSL{TotalSampleCount: 8, PerformanceSampleCount: 8})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Shape() == nil || tr.Len() == 0 {
		t.Fatalf("trace of %d queries, shape %v", tr.Len(), tr.Shape())
	}
}

// TestShapeUnderDaemonLimits: a shaped spec is bounded by the daemon's
// limits on its arrivals, its length and its stages' rates, not by
// LoadGen's Poisson trace.
func TestShapeUnderDaemonLimits(t *testing.T) {
	lim := api.Limits{MaxTraceSamples: 500, MaxDuration: time.Minute, MaxQPS: 5000}
	if _, err := Admit(shaped(func(s *api.RunSpec) { s.Stages = "10s:20" }), lim, ""); err != nil {
		t.Fatalf("200 arrivals in 10s refused: %v", err)
	}
	for _, c := range []struct{ stages, want string }{{"10s:100", "limit of 500 samples"}, {"2m:1", "lasts"}, {"1s:1,1ms:1->6000", "limit of 5000 QPS"}} {
		_, err := Admit(shaped(func(s *api.RunSpec) { s.Stages = c.stages }), lim, "")
		fe, ok := errors.AsType[*api.FieldError](err)
		if !ok || fe.Field != "stages" || !strings.Contains(fe.Message, c.want) {
			t.Errorf("%s: got %v, want stages: ...%s", c.stages, err, c.want)
		}
	}
}

// writeTrace writes a Mooncake-layout trace of n requests gap ms apart.
func writeTrace(t *testing.T, dir string, n, gapMs int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		b.WriteString(`{"timestamp": ` + strconv.Itoa(i*gapMs) + `, "input_length": 8, "output_length": 2}` + "\n")
	}
	p := filepath.Join(dir, "trace.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// arrivalTimes walks one pass of a shape.
func arrivalTimes(t *testing.T, sh trace.Shape) []time.Duration {
	t.Helper()
	a, err := sh.Arrivals()
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var at []time.Duration
	for x, ok := a.Next(); ok; x, ok = a.Next() {
		at = append(at, x.At)
	}
	if err := a.Err(); err != nil {
		t.Fatal(err)
	}
	return at
}

// TestTraceBuildsTheShape: --trace replays the file at its speed, the
// daemon's under its data root only, and a sweep of speeds reopens it at
// each speed.
func TestTraceBuildsTheShape(t *testing.T) {
	root := t.TempDir()
	p := writeTrace(t, root, 5, 100)
	for _, c := range []struct {
		env   Env
		trace string
		speed float64
		last  time.Duration
	}{
		{Env{AnyData: true}, p, 0, 400 * time.Millisecond},
		{Env{AnyData: true}, p, 2, 200 * time.Millisecond},
		{Env{DataRoot: root}, "trace.jsonl", 4, 100 * time.Millisecond},
	} {
		r, err := Build(api.RunSpec{Target: "http://h:1", Model: "m", Trace: c.trace, TraceSpeed: c.speed}, c.env)
		if err != nil {
			t.Fatal(err)
		}
		at := arrivalTimes(t, r.Spec.Settings.Shape)
		if len(at) != 5 || at[4] != c.last {
			t.Errorf("%s at %v: arrivals %v, want 5, the last at %v", c.trace, c.speed, at, c.last)
		}
	}
	r, err := Build(api.RunSpec{Target: "http://h:1", Model: "m", Trace: p,
		Search: &api.Search{Mode: api.SearchSweep, TraceSpeeds: []float64{1, 8}}}, Env{AnyData: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Search == nil || len(r.Search.TraceSpeeds) != 2 || r.Search.AtSpeed == nil {
		t.Fatalf("search %+v", r.Search)
	}
	sh, err := r.Search.AtSpeed(8)
	if err != nil {
		t.Fatal(err)
	}
	if at := arrivalTimes(t, sh); len(at) != 5 || at[4] != 50*time.Millisecond {
		t.Errorf("at speed 8: %v", at)
	}
	// A bad line is refused naming the field and the line.
	bad := filepath.Join(root, "bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"timestamp": 0, "input_length": 8, "output_length": 2}`+"\nnot json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Build(api.RunSpec{Target: "http://h:1", Model: "m", Trace: bad}, Env{AnyData: true})
	fe, ok := errors.AsType[*api.FieldError](err)
	if !ok || fe.Field != "trace" || !strings.Contains(fe.Message, "line 2") {
		t.Errorf("a bad line: %v, want a field error on trace naming line 2", err)
	}
}

// TestSweptTraceSpeedsUnderDaemonLimits: each speed a sweep replays the
// trace at is held to LOADGEND_MAX_QPS and LOADGEND_MAX_DURATION as
// trace_speed is: a 100 QPS trace under a 150 QPS limit refuses speed 10
// whether asked as trace_speed or among search.trace_speeds, and a slow
// speed that makes the replay outlast the limit is refused too, each
// naming search.trace_speeds and the speed. A swept speed is the trace's
// own time scaled, whatever the base trace_speed.
func TestSweptTraceSpeedsUnderDaemonLimits(t *testing.T) {
	root := t.TempDir()
	writeTrace(t, root, 101, 10) // 101 arrivals over 1 s
	lim := api.Limits{MaxQPS: 150, MaxDuration: time.Minute, MaxTraceSamples: 1000, AllowSearch: true, DataRoot: root}
	spec := func(base float64, speeds ...float64) api.RunSpec {
		s := api.RunSpec{Target: "http://h:1", Model: "m", Trace: "trace.jsonl", TraceSpeed: base}
		if len(speeds) > 0 {
			s.Search = &api.Search{Mode: api.SearchSweep, TraceSpeeds: speeds}
		}
		return s
	}
	for _, c := range []struct {
		name         string
		s            api.RunSpec
		field, want1 string
		want2        string
	}{
		{"base speed over the rate", spec(10), "trace", "the mean rate, 1010 QPS", "LOADGEND_MAX_QPS"},
		{"a swept speed over the rate", spec(0, 1, 1000), "search.trace_speeds", "speed 1000: the replay's mean rate, 101000 QPS", "limit of 150 QPS"},
		{"from the base speed", spec(0.5, 1.6), "search.trace_speeds", "speed 1.6: the replay's mean rate, 161.6 QPS", "limit of 150 QPS"},
		{"a slow speed too long", spec(0, 1, 0.01), "search.trace_speeds", "speed 0.01: the replay lasts 1m40s", "LOADGEND_MAX_DURATION"},
	} {
		_, err := Admit(c.s, lim, "")
		fe, ok := errors.AsType[*api.FieldError](err)
		if !ok || fe.Field != c.field || !strings.Contains(fe.Message, c.want1) || !strings.Contains(fe.Message, c.want2) {
			t.Errorf("%s: got %v, want %s: ...%s...%s", c.name, err, c.field, c.want1, c.want2)
		}
	}
	for _, s := range []api.RunSpec{spec(0, 0.5, 1, 1.4), spec(0.5, 0.02, 1.4)} {
		if _, err := Admit(s, lim, ""); err != nil {
			t.Errorf("speeds %v from %v: %v, want admitted", s.Search.TraceSpeeds, s.TraceSpeed, err)
		}
	}
}

// TestTraceMixDrawsFromTheScheduleSeed: a trace's lines that name no model
// take one drawn from the mix with the run's schedule seed, as stages do
// (and `loadgend schedule` prints): the same seed, the same models; two
// seeds, two sequences.
func TestTraceMixDrawsFromTheScheduleSeed(t *testing.T) {
	p := writeTrace(t, t.TempDir(), 64, 10)
	models := func(seed uint64) string {
		t.Helper()
		s := api.RunSpec{Target: "http://h:1", Trace: p, Mix: "a=1,b=1"}
		s.Overrides.ScheduleRNGSeed = &seed
		r, err := Build(s, Env{AnyData: true})
		if err != nil {
			t.Fatal(err)
		}
		a, err := r.Spec.Settings.Shape.Arrivals()
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		var b strings.Builder
		for x, ok := a.Next(); ok; x, ok = a.Next() {
			b.WriteString(strconv.Itoa(x.Model))
		}
		if err := a.Err(); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	one, again, other := models(1), models(1), models(2)
	if one != again {
		t.Errorf("seed 1 drew %s, then %s", one, again)
	}
	if one == other {
		t.Errorf("seeds 1 and 2 drew the same models %s", one)
	}
	mix, _ := shape.ParseMix("a=1,b=1")
	var want strings.Builder
	for i := range 64 {
		want.WriteString(strconv.Itoa(mix.Pick(2, i)))
	}
	if other != want.String() {
		t.Errorf("seed 2 drew %s, want Mix.Pick with the schedule seed: %s", other, want.String())
	}
}
