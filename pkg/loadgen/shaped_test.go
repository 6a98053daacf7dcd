package loadgen

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/shape"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// partsShape is a fixed shape that says its stages and names its models,
// as shape.Staged with a mix does.
type partsShape struct {
	fixedShape
	stages []shape.Stage
	models []string
}

func (s partsShape) Stages() []shape.Stage { return s.stages }
func (s partsShape) Models() []string      { return s.models }

// modelsOnly names models and has no stages (a trace file's shape).
type modelsOnly struct {
	fixedShape
	models []string
}

func (s modelsOnly) Models() []string { return s.models }

// twoStages: stage 0 is 1 s at 100/s (100 arrivals), stage 1 a ramp over
// 2 s from 100 to 300/s (400 arrivals); query i's model is i%3.
func twoStages() partsShape {
	var a fixedShape
	for i := range 100 {
		a = append(a, trace.Arrival{At: time.Duration(i) * 10 * time.Millisecond, Stage: 0, Model: i % 3})
	}
	for i := range 400 {
		a = append(a, trace.Arrival{At: time.Second + time.Duration(i)*5*time.Millisecond, Stage: 1, Model: (100 + i) % 3})
	}
	return partsShape{fixedShape: a, stages: []shape.Stage{{Duration: time.Second, From: 100, To: 100}, {Duration: 2 * time.Second, From: 100, To: 300}},
		models: []string{"identity", "resnet50", "bert"}}
}

func shapedRun(t *testing.T, sh trace.Shape, slo genai.SLO, sut SUT) (*Run, *Result) {
	t.Helper()
	s := testSettings(t, RulesetLoadGen6, trace.Server)
	s.Shape, s.Engine.SLO = sh, slo
	r, err := NewRun(s, sut, &fakeQSL{total: 1000, perf: 256}, WithClock(newFakeClock()), quiet)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Execute(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return r, res
}

// latencyByID: query i answers after (1 + i%10) ms; query 7 fails.
func latencyByID(id int) time.Duration { return time.Duration(1+id%10) * time.Millisecond }

func failSeven(id int) error {
	if id == 7 {
		return errors.New("boom")
	}
	return nil
}

// Without an SLO a shaped run has no verdict: N/A, no LoadGen reasons or
// early stopping, its failures still counted; with every sample answered
// it passes as an exit status reads it, with one failed it does not.
func TestShapedRunWithoutSLOIsNA(t *testing.T) {
	_, res := shapedRun(t, twoStages(), genai.SLO{}, &fakeSUT{clock: newFakeClock(), latency: latencyByID, fail: failSeven, inline: true})
	if res.Validity != ValidityNA || res.Valid || res.InvalidReasons != nil || res.EarlyStopping != nil || res.EarlyVerdict != nil {
		t.Errorf("validity %q valid %v reasons %q early stopping %v early verdict %v; want N/A and none of LoadGen's",
			res.Validity, res.Valid, res.InvalidReasons, res.EarlyStopping, res.EarlyVerdict)
	}
	if res.LoadShape == nil || res.LoadShape.VerdictBy != VerdictByNone || !res.Shaped() {
		t.Errorf("load_shape = %+v", res.LoadShape)
	}
	// 500 arrivals over the shape's 3 s (its last arrival at 2.995 s).
	if res.TargetQPS != 500/2.995 || res.TargetQPS != res.Effective.TargetQPS {
		t.Errorf("target_qps %v, effective %v: want the shape's mean rate %v", res.TargetQPS, res.Effective.TargetQPS, 500/2.995)
	}
	if res.SamplesFailed != 1 || res.SamplesIssued != 500 || res.Passed() {
		t.Errorf("failed %d of %d, passed %v: want 1 of 500, not passed", res.SamplesFailed, res.SamplesIssued, res.Passed())
	}
	_, ok := shapedRun(t, twoStages(), genai.SLO{}, &fakeSUT{clock: newFakeClock(), latency: latencyByID, inline: true})
	if ok.Validity != ValidityNA || !ok.Passed() {
		t.Errorf("every sample answered: validity %q, passed %v; want N/A, passed", ok.Validity, ok.Passed())
	}
}

// A failure would end a LoadGen run at once by the early verdict; a
// shaped run runs its whole shape.
func TestShapedRunIgnoresEarlyVerdict(t *testing.T) {
	s := testSettings(t, RulesetLoadGen6, trace.Server)
	s.Shape, s.Engine.EarlyVerdict = twoStages(), true
	r, err := NewRun(s, &fakeSUT{clock: newFakeClock(), latency: latencyByID, fail: func(int) error { return errors.New("down") }, inline: true},
		&fakeQSL{total: 1000, perf: 256}, WithClock(newFakeClock()), quiet)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Execute(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if res.SamplesIssued != 500 || res.EndReason != StopCompleted || res.EarlyVerdict != nil {
		t.Errorf("issued %d (want 500), end %q, early verdict %+v", res.SamplesIssued, res.EndReason, res.EarlyVerdict)
	}
}

// The SLO judges a shaped run, each bound at its percentile over every
// sample, a failure counted as over: the test computes sorted[floor(n·p)]
// itself.
func TestShapedRunSLOVerdict(t *testing.T) {
	// 500 samples, 50 each of 1..10 ms but query 7's 8 ms failed, sorted
	// last: 1 ms at 0-49, ..., 8 ms at 350-398, 9 ms at 399-448, 10 ms at
	// 449-498, the failure at 499. p50 → index 250: 6 ms; p90 → 450 and
	// p99 (the default) → 495: 10 ms; p99.9 → 499: the failure.
	for _, c := range []struct {
		slo    string
		valid  bool
		reason string
	}{
		{"latency=6ms@p50", true, ""},
		{"latency=5ms@p50", false, "SLO latency=5ms@p50 not met: p50 latency is 6ms"},
		{"latency=10ms@p90,e2e=10ms@p90", true, ""},
		{"latency=1h@p99.9", false, "p99.9 latency is a failed sample (1 of 500 failed)"},
		{"latency=10ms", true, ""},
		{"latency=9ms", false, "SLO latency=9ms@p99 not met: p99 latency is 10ms"},
	} {
		t.Run(c.slo, func(t *testing.T) {
			slo, err := genai.ParseSLO(c.slo)
			if err != nil {
				t.Fatal(err)
			}
			_, res := shapedRun(t, twoStages(), slo, &fakeSUT{clock: newFakeClock(), latency: latencyByID, fail: failSeven, inline: true})
			want := ""
			if c.valid {
				want = "VALID"
			} else {
				want = "INVALID"
			}
			if res.Validity != want || res.Valid != c.valid {
				t.Fatalf("validity %q (%v), want %s; reasons %q", res.Validity, res.Valid, want, res.InvalidReasons)
			}
			if !c.valid && (len(res.InvalidReasons) == 0 || !strings.Contains(res.InvalidReasons[0], c.reason)) {
				t.Errorf("reasons %q, want one with %q", res.InvalidReasons, c.reason)
			}
			if len(res.Recommendations) != len(res.InvalidReasons) {
				t.Errorf("%d recommendations for %d reasons", len(res.Recommendations), len(res.InvalidReasons))
			}
			if res.LoadShape.VerdictBy != VerdictBySLO || res.LoadShape.SLO != slo.String() || len(res.LoadShape.Bounds) != len(slo.Bounds()) {
				t.Errorf("load_shape %+v", res.LoadShape)
			}
		})
	}
}

// The test's own percentile of the scripted latencies with the failure
// counted as over, checked against the bound the engine reports.
func TestShapedRunSLOBoundFigures(t *testing.T) {
	slo, _ := genai.ParseSLO("latency=100ms@p99,e2e=9ms@p80")
	_, res := shapedRun(t, twoStages(), slo, &fakeSUT{clock: newFakeClock(), latency: latencyByID, fail: failSeven, inline: true})
	var lat []time.Duration
	for i := range 500 {
		if i == 7 {
			lat = append(lat, math.MaxInt64)
			continue
		}
		lat = append(lat, latencyByID(i))
	}
	slices.Sort(lat)
	for _, b := range res.LoadShape.Bounds {
		want := lat[int(500*b.Percentile)]
		wantNs := int64(want)
		if want == math.MaxInt64 {
			wantNs = -1
		}
		if b.MeasuredNs != wantNs || b.Samples != 500 || b.Failed != 1 || b.Met != (wantNs >= 0 && wantNs <= b.BoundNs) {
			t.Errorf("bound %+v: want measured %d over 500 samples, 1 failed", b, wantNs)
		}
	}
	if res.Validity != "VALID" {
		t.Errorf("validity %q: %q", res.Validity, res.InvalidReasons)
	}
}

// stages[] and models[] count each sample in its query's stage and model,
// as the test counts them from the shape; rates are counts over the
// stage's length; a ramp gives its ends.
func TestShapedRunStagesAndModels(t *testing.T) {
	sh := twoStages()
	slo, _ := genai.ParseSLO("latency=5ms")
	_, res := shapedRun(t, sh, slo, &fakeSUT{clock: newFakeClock(), latency: latencyByID, fail: failSeven, inline: true})
	if len(res.Stages) != 2 || len(res.Models) != 3 {
		t.Fatalf("%d stages, %d models; want 2, 3", len(res.Stages), len(res.Models))
	}
	type counts struct{ issued, completed, failed, met int64 }
	var st [2]counts
	var mo [3]counts
	for i, a := range sh.fixedShape {
		for _, c := range []*counts{&st[a.Stage], &mo[a.Model]} {
			c.issued++
			if i == 7 {
				c.failed++
				continue
			}
			c.completed++
			if latencyByID(i) <= 5*time.Millisecond {
				c.met++
			}
		}
	}
	s0, s1 := res.Stages[0], res.Stages[1]
	if s0.Stage != 0 || s0.StartS != 0 || s0.EndS != 1 || s0.RateAsked != 100 || s0.RateFrom != nil ||
		s1.Stage != 1 || s1.StartS != 1 || s1.EndS != 3 || s1.RateAsked != 200 || s1.RateFrom == nil || *s1.RateFrom != 100 || *s1.RateTo != 300 {
		t.Errorf("stage metadata: %+v / %+v", s0, s1)
	}
	for i, sr := range res.Stages {
		c := st[i]
		secs := []float64{1, 2}[i]
		if sr.SamplesIssued != c.issued || sr.SamplesCompleted != c.completed || sr.SamplesFailed != c.failed ||
			sr.RateAchieved != float64(c.issued)/secs || sr.CompletedPerSecond != float64(c.completed)/secs ||
			sr.SamplesMeetingSLO == nil || *sr.SamplesMeetingSLO != c.met || *sr.GoodputSamplesPerSecond != float64(c.met)/secs {
			t.Errorf("stage %d: %+v, want %+v", i, sr, c)
		}
		if sr.SampleLatency.Count != int(c.completed) || sr.SampleLatency.Failed != int(c.failed) || sr.SampleLatency.MaxNs < int64(10*time.Millisecond) {
			t.Errorf("stage %d latency: %+v", i, sr.SampleLatency)
		}
	}
	for i, mr := range res.Models {
		c := mo[i]
		if mr.Model != sh.models[i] || mr.SamplesIssued != c.issued || mr.SamplesCompleted != c.completed || mr.SamplesFailed != c.failed || *mr.SamplesMeetingSLO != c.met {
			t.Errorf("model %d: %+v, want %s %+v", i, mr, sh.models[i], c)
		}
	}
	// Within the histogram's 0.1% of the test's exact p50 over the answered
	// samples of stage 0: its 99 latencies of 1..10 ms.
	var lat []time.Duration
	for i := range 100 {
		if i != 7 {
			lat = append(lat, latencyByID(i))
		}
	}
	slices.Sort(lat)
	want := lat[len(lat)/2]
	got, _ := res.Stages[0].SampleLatency.At(0.5)
	if d := math.Abs(float64(got-want)) / float64(want); d > 0.001 {
		t.Errorf("stage 0 p50 %v, want %v within 0.1%%", got, want)
	}
}

// A shape with models and no stages has models[] only; one without either
// has neither.
func TestShapedRunPartsFollowTheShape(t *testing.T) {
	sh := twoStages()
	_, res := shapedRun(t, modelsOnly{sh.fixedShape, sh.models}, genai.SLO{}, &fakeSUT{clock: newFakeClock(), latency: latencyByID, inline: true})
	if res.Stages != nil || len(res.Models) != 3 || res.Models[0].SamplesMeetingSLO != nil {
		t.Errorf("models only: stages %v, models %d, goodput without an SLO %v", res.Stages, len(res.Models), res.Models[0].SamplesMeetingSLO)
	}
	_, res = shapedRun(t, sh.fixedShape, genai.SLO{}, &fakeSUT{clock: newFakeClock(), latency: latencyByID, inline: true})
	if res.Stages != nil || res.Models != nil || res.LoadShape == nil {
		t.Errorf("neither: stages %v, models %v, load_shape %v", res.Stages, res.Models, res.LoadShape)
	}
	b, _ := json.Marshal(res)
	if bytes.Contains(b, []byte(`"stages"`)) || bytes.Contains(b, []byte(`"models"`)) {
		t.Error("result.json carries stages or models for a shape without them")
	}
}

// A generative shaped run judges ttft and tpot at their percentiles over
// the samples with tokens (tpot: two tokens or more), failures as over,
// and gives each part its TTFT and TPOT.
func TestShapedRunTokenBounds(t *testing.T) {
	sh := twoStages()
	fail := func(id int) error {
		if id == 3 {
			return errors.New("boom")
		}
		return nil
	}
	slo, _ := genai.ParseSLO("ttft=11ms@p90,tpot=2ms@p50")
	_, res := shapedRun(t, sh, slo, &genSUT{law: lawOf, generative: true, fail: fail})
	var ttft, tpot []time.Duration
	for i := range 500 {
		if i == 3 {
			ttft, tpot = append(ttft, math.MaxInt64), append(tpot, math.MaxInt64)
			continue
		}
		l := lawOf(i)
		ttft = append(ttft, l.ttft)
		if l.tokens >= 2 {
			tpot = append(tpot, samplePOT(int64(l.e2e()), int64(l.ttft), int64(l.tokens)))
		}
	}
	at := func(vs []time.Duration, p float64) int64 {
		slices.Sort(vs)
		v := vs[int(float64(len(vs))*p)]
		if v == math.MaxInt64 {
			return -1
		}
		return int64(v)
	}
	want := map[string]int64{"ttft": at(ttft, 0.9), "tpot": at(tpot, 0.5)}
	n := map[string]int64{"ttft": int64(len(ttft)), "tpot": int64(len(tpot))}
	for _, b := range res.LoadShape.Bounds {
		if b.MeasuredNs != want[b.Name] || b.Samples != n[b.Name] || b.Failed != 1 || b.Met != (b.MeasuredNs >= 0 && b.MeasuredNs <= b.BoundNs) {
			t.Errorf("bound %+v: want measured %d over %d samples", b, want[b.Name], n[b.Name])
		}
	}
	wantValid := want["ttft"] <= int64(11*time.Millisecond) && want["tpot"] <= int64(2*time.Millisecond)
	if res.Valid != wantValid {
		t.Errorf("valid %v, want %v (%q)", res.Valid, wantValid, res.InvalidReasons)
	}
	for i, sr := range res.Stages {
		if sr.TTFT == nil || sr.TPOT == nil || sr.TTFT.Count != sr.SamplesCompleted {
			t.Errorf("stage %d token figures: ttft %+v tpot %+v", i, sr.TTFT, sr.TPOT)
		}
	}
	// A run without tokens cannot meet a ttft bound: INVALID, saying so.
	_, res = shapedRun(t, sh, slo, &fakeSUT{clock: newFakeClock(), latency: latencyByID, inline: true})
	if res.Valid || len(res.InvalidReasons) != 2 || !strings.Contains(res.InvalidReasons[0], "no sample measured ttft") {
		t.Errorf("no tokens: valid %v, reasons %q", res.Valid, res.InvalidReasons)
	}
}

// The samples export names each line's stage and model for a shaped run,
// and keeps a plain run's lines as they were.
func TestWriteSamplesShaped(t *testing.T) {
	sh := twoStages()
	r, _ := shapedRun(t, sh, genai.SLO{}, &genSUT{law: lawOf, generative: true})
	var buf bytes.Buffer
	if err := r.WriteSamples(&buf); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(&buf)
	i := 0
	for ; sc.Scan(); i++ {
		var line struct {
			Sample int     `json:"sample"`
			Stage  *int    `json:"stage"`
			Model  *string `json:"model"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		a := sh.fixedShape[line.Sample]
		if line.Stage == nil || *line.Stage != a.Stage || line.Model == nil || *line.Model != sh.models[a.Model] {
			t.Fatalf("line %s: want stage %d, model %s", sc.Bytes(), a.Stage, sh.models[a.Model])
		}
	}
	if i != 500 {
		t.Errorf("%d lines, want 500", i)
	}
	// A shape without parts: no stage, no model.
	r, _ = shapedRun(t, sh.fixedShape, genai.SLO{}, &genSUT{law: lawOf, generative: true})
	buf.Reset()
	if err := r.WriteSamples(&buf); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(buf.Bytes(), []byte(`"stage"`)) || bytes.Contains(buf.Bytes(), []byte(`"model"`)) {
		t.Error("a shape without stages or models writes them")
	}
}
