package runner

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/search"
	"github.com/netloadgen/netloadgen/pkg/shape"
	"github.com/netloadgen/netloadgen/pkg/sutproxy"
	"github.com/netloadgen/netloadgen/pkg/sutproxy/sutproxytest"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// fixedShape is a load shape of n arrivals gap apart, arrival i's model
// model(i): the mix's routing tested on its own, whatever pkg/shape's
// draws.
type fixedShape struct {
	n     int
	gap   time.Duration
	model func(i int) int
}

func (s fixedShape) Arrivals() (trace.Arrivals, error) { return &fixedArrivals{s: s}, nil }
func (s fixedShape) End() time.Duration                { return time.Duration(s.n) * s.gap }

type fixedArrivals struct {
	s fixedShape
	i int
}

func (a *fixedArrivals) Next() (trace.Arrival, bool) {
	if a.i >= a.s.n {
		return trace.Arrival{}, false
	}
	x := trace.Arrival{At: time.Duration(a.i) * a.s.gap, Model: a.s.model(a.i)}
	a.i++
	return x, true
}
func (a *fixedArrivals) Err() error   { return nil }
func (a *fixedArrivals) Close() error { return nil }

// weighted draws 50%, 30% and 20% of the queries for models 0, 1, 2 by a
// multiplicative hash of the index: uneven, interleaved, fixed.
func weighted(i int) int {
	switch h := (uint32(i) * 2654435761) >> 22 % 10; {
	case h < 5:
		return 0
	case h < 8:
		return 1
	}
	return 2
}

// inferences is each model's inference count on p (Triton's statistics).
func inferences(t *testing.T, p *sutproxy.Proxy) map[string]uint64 {
	t.Helper()
	st, err := p.Backend().ModelStatistics(context.Background(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]uint64{}
	for _, m := range st.ModelStats {
		out[m.Name] += m.InferenceCount
	}
	return out
}

// TestMixRoutesEachQueryToItsModel: a mix of three models, two on the
// run's target and one at a target of its own, each query sent to the
// model its Query.Model names, each model's samples its own (of its own
// shape: the server checks them): the servers' inference counts are the
// shape's counts per model, and every sample is answered.
func TestMixRoutesEachQueryToItsModel(t *testing.T) {
	p := startProxy(t, "name=a,dims=16,latency=constant:200us", "name=b,dims=4,dtype=INT32,latency=constant:200us")
	q := startProxy(t, "name=c,dims=32,latency=constant:200us")
	const n = 600
	want := map[string]uint64{}
	names := []string{"a", "b", "c"}
	for i := range n {
		want[names[weighted(i)]]++
	}
	s := serverSettings(t, loadgen.RulesetLoadGen6, 0)
	s.Engine.EarlyVerdict = false
	s.Shape = fixedShape{n: n, gap: time.Millisecond, model: weighted}
	spec := Spec{Target: targetOf(p, "http"), Model: "a", Settings: s, TotalSamples: 64, PerformanceSamples: 64,
		Mix: []shape.MixEntry{{Model: "a", Weight: 0.5}, {Model: "b", Weight: 0.3}, {Model: "c", Weight: 0.2, Target: targetOf(q, "grpc")}}}
	out, err := Run(t.Context(), spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := out.Result; r.SamplesCompleted != n || r.SamplesFailed != 0 {
		t.Fatalf("completed %d, failed %d of %d samples", r.SamplesCompleted, r.SamplesFailed, n)
	}
	got := inferences(t, p)
	for k, v := range inferences(t, q) {
		got[k] += v
	}
	for _, m := range names {
		if got[m] != want[m] {
			t.Errorf("model %s: the servers counted %d inferences, the shape drew %d (all: %v, want %v)", m, got[m], want[m], got, want)
		}
	}
}

// TestMixRefusesWhatItCannotCarry: a mix names its refusals before a
// query is sent: several issuers, a model the server lacks (naming it),
// tensor and generative models together.
func TestMixRefusesWhatItCannotCarry(t *testing.T) {
	p := startProxy(t, "name=a", "kind=llm,name=g")
	s := serverSettings(t, loadgen.RulesetLoadGen6, 0)
	s.Shape = fixedShape{n: 10, gap: time.Millisecond, model: func(int) int { return 0 }}
	base := Spec{Target: targetOf(p, "http"), Model: "a", Settings: s, TotalSamples: 8, PerformanceSamples: 8}
	cases := []struct {
		name string
		mix  []shape.MixEntry
		edit func(*Spec)
		want string
	}{
		{"issuers", []shape.MixEntry{{Model: "a"}}, func(s *Spec) { s.Settings.Engine.Issuers = 2 }, "issuers"},
		{"unknown model", []shape.MixEntry{{Model: "a"}, {Model: "nope"}}, nil, "nope"},
		{"tensor and generative", []shape.MixEntry{{Model: "a"}, {Model: "g"}}, nil, "generative"},
		{"bad api", []shape.MixEntry{{Model: "a", API: "smoke-signals"}}, nil, "smoke-signals"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := base
			spec.Mix = c.mix
			if c.edit != nil {
				c.edit(&spec)
			}
			_, err := Run(t.Context(), spec, Options{})
			if !errors.Is(err, ErrMix) {
				t.Fatalf("got %v, want ErrMix", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not name %q", err, c.want)
			}
		})
	}
}

// TestMixSUTFailsAQueryOutsideTheMix: a query naming a model past the
// mix fails at once, named, rather than panicking on the issuer.
func TestMixSUTFailsAQueryOutsideTheMix(t *testing.T) {
	m := &mixSUT{suts: []loadgen.SUT{nil}, names: []string{"a"}, index: [][]int{{0}}}
	var got []loadgen.Completion
	m.IssueQuery(t.Context(), loadgen.Query{ID: 7, Samples: []int{0}, Model: 3}, func(c loadgen.Completion) { got = append(got, c) })
	if len(got) != 1 || !errors.Is(got[0].Err, ErrMix) || got[0].Count != 1 {
		t.Fatalf("completions %+v, want one failure wrapping ErrMix", got)
	}
}

// TestSweepOfTraceSpeeds: a sweep of a trace's speeds runs one trial per
// speed, in order, each replaying the shape AtSpeed opens at that speed
// (not a Server rate), and labels its record with the speed's unit.
func TestSweepOfTraceSpeeds(t *testing.T) {
	p := startProxy(t, "name=a,latency=constant:100us")
	s := serverSettings(t, loadgen.RulesetLoadGen6, 0)
	s.Engine.EarlyVerdict = false
	const n = 50
	s.Shape = fixedShape{n: n, gap: 2 * time.Millisecond, model: func(int) int { return 0 }}
	var asked []float64
	at := func(speed float64) (trace.Shape, error) {
		asked = append(asked, speed)
		// Twice as fast: the same arrivals at half the gaps.
		return fixedShape{n: n, gap: time.Duration(float64(2*time.Millisecond) / speed), model: func(int) int { return 0 }}, nil
	}
	base := Spec{Target: targetOf(p, "http"), Model: "a", Settings: s, TotalSamples: 8, PerformanceSamples: 8, OutDir: t.TempDir()}
	res, err := FindPeak(t.Context(), base, Search{TraceSpeeds: []float64{1, 4}, AtSpeed: at}, SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 2 || asked[0] != 1 || asked[1] != 4 {
		t.Fatalf("the trials opened the trace at speeds %v, want [1 4]", asked)
	}
	if res.Unit != search.UnitSpeed || len(res.Trials) != 2 {
		t.Fatalf("unit %q, %d trials", res.Unit, len(res.Trials))
	}
	for i, tr := range res.Trials {
		if tr.Target != asked[i] {
			t.Errorf("trial %d: target %v, want speed %v", i, tr.Target, asked[i])
		}
	}
	// A sweep of speeds needs the trace to replay.
	bare := base
	bare.Settings.Shape = nil
	if _, err := FindPeak(t.Context(), bare, Search{TraceSpeeds: []float64{1}, AtSpeed: at}, SearchOptions{}); !errors.Is(err, search.ErrConfig) {
		t.Errorf("a sweep of speeds without a trace: %v, want search.ErrConfig", err)
	}
}

// TestMixOfGenerativeModels: a mix of two simulated LLMs, one over the
// OpenAI API, one over Triton's generate API on the same server: each
// request reaches the model its query names, over its entry's API.
func TestMixOfGenerativeModels(t *testing.T) {
	p, rec := sutproxytest.StartReceiving(t, "kind=llm,name=g1", "kind=llm,name=g2")
	const n = 40
	s := serverSettings(t, loadgen.RulesetLoadGen6, 0)
	s.Engine.EarlyVerdict = false
	pick := func(i int) int { return i % 3 / 2 } // 0, 0, 1, ...
	s.Shape = fixedShape{n: n, gap: 2 * time.Millisecond, model: pick}
	prompts, err := genai.NewSynthetic(genai.SyntheticOptions{Total: 8, Input: genai.Fixed(16), Output: genai.Fixed(4)})
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{Target: targetOf(p, "http"), Model: "g1", Settings: s, TotalSamples: 8, PerformanceSamples: 8, Prompts: prompts,
		Mix: []shape.MixEntry{{Model: "g1", API: "openai-completions"}, {Model: "g2", API: "generate-stream"}}}
	out, err := Run(t.Context(), spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := out.Result; r.SamplesCompleted != n || r.SamplesFailed != 0 {
		t.Fatalf("completed %d, failed %d of %d", r.SamplesCompleted, r.SamplesFailed, n)
	}
	want := map[string]int{}
	for i := range n {
		want[[]string{"g1", "g2"}[pick(i)]]++
	}
	got := map[string]int{}
	for _, r := range rec.All() {
		got[r.Model]++
	}
	if got["g1"] != want["g1"] || got["g2"] != want["g2"] {
		t.Errorf("the server received %v, the shape drew %v", got, want)
	}
}

// TestMixWarmsUp: the warm-up's queries go through the mix as the run's
// do, before the clock, every one answered.
func TestMixWarmsUp(t *testing.T) {
	p := startProxy(t, "name=a,latency=constant:100us", "name=b,dims=4,latency=constant:100us")
	s := serverSettings(t, loadgen.RulesetLoadGen6, 0)
	s.Engine.EarlyVerdict, s.Engine.WarmupMs = false, 100
	s.Shape = fixedShape{n: 100, gap: time.Millisecond, model: func(i int) int { return i % 2 }}
	spec := Spec{Target: targetOf(p, "http"), Model: "a", Settings: s, TotalSamples: 16, PerformanceSamples: 16,
		Mix: []shape.MixEntry{{Model: "a"}, {Model: "b"}}}
	out, err := Run(t.Context(), spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := out.Result
	if w := r.Warmup; w == nil || w.SamplesIssued == 0 || w.SamplesFailed != 0 || r.SamplesFailed != 0 || r.SamplesCompleted != 100 {
		t.Fatalf("warm-up %+v; run completed %d, failed %d", r.Warmup, r.SamplesCompleted, r.SamplesFailed)
	}
	got := inferences(t, p)
	if got["a"]+got["b"] != uint64(100+r.Warmup.SamplesIssued) || got["b"] == 0 {
		t.Errorf("the server counted %v, want %d in all", got, 100+r.Warmup.SamplesIssued)
	}
}
