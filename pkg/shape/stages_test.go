package shape

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// The statistical tests below draw with fixed seeds: each is deterministic
// (the same schedule every run), so it cannot flake; the bounds are the
// acceptance's (3σ, 5%) or, where noted, what the sample size gives.

func TestParseStages(t *testing.T) {
	got, err := ParseStages("30s:100, 60s:100->500,30s:500,10s:2000,1m:0.5,1m30s:500->0")
	if err != nil {
		t.Fatal(err)
	}
	want := []Stage{
		{30 * time.Second, 100, 100}, {60 * time.Second, 100, 500}, {30 * time.Second, 500, 500},
		{10 * time.Second, 2000, 2000}, {time.Minute, 0.5, 0.5}, {90 * time.Second, 500, 0},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	back, err := ParseStages(FormatStages(got))
	if err != nil || fmt.Sprint(back) != fmt.Sprint(got) {
		t.Errorf("FormatStages %q parses back as %v, %v", FormatStages(got), back, err)
	}
}

func TestParseStagesRefuses(t *testing.T) {
	many := strings.Repeat("1s:1,", MaxStages) + "1s:1"
	tests := []struct{ in, want string }{
		{"", "empty"},
		{"  ", "empty"},
		{"30s", "stage 1"},
		{"30:100", `stage 1 ("30:100"): duration "30" is not a Go duration`},
		{"30s:100,abc:1", "stage 2"},
		{"30s:fast", `rate "fast" is not a number`},
		{"30s:100->", `stage 1 ("30s:100->"): rate "" is not a number`},
		{"30s:NaN", "not a number"},
		{"30s:Inf", "not a number"},
		{"30s:100,30s:-1", "stage 2 (30s:-1) has a negative rate"},
		{"30s:100->-5", "stage 1 (30s:100->-5) has a negative rate"},
		{"0s:100", "stage 1 (0s:100) lasts 0s"},
		{"10s:1,-5s:100", "stage 2 (-5s:100) lasts -5s"},
		{"1s:2e7", "more than 1e+07 queries a second"},
		{"100h:1,100h:1", "last more than 168h0m0s by stage 2"},
		{"30s:0,10s:0->0", "every stage is at rate 0"},
		{"24h:1e6", "about 86400000000 queries, more than 268435456"},
		{"30s:100,,30s:1", "stage 2"},
		{many, "more than 1000"},
	}
	for _, tt := range tests {
		_, err := ParseStages(tt.in)
		if !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), "--stages") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseStages(%.40q): %v; want ErrShape naming --stages and %q", tt.in, err, tt.want)
		}
	}
	// A bad stage says what to write.
	if _, err := ParseStages("30s"); err == nil || !strings.Contains(err.Error(), "DURATION:FROM->TO") {
		t.Errorf("no hint of the syntax: %v", err)
	}
}

func TestParseArrivals(t *testing.T) {
	for in, want := range map[string]Process{
		"": {Kind: Poisson}, "poisson": {Kind: Poisson}, "constant": {Kind: Constant},
		"gamma:2": {Kind: Gamma, CV: 2}, "gamma:0.5": {Kind: Gamma, CV: 0.5}, "gamma:100": {Kind: Gamma, CV: 100},
	} {
		got, err := ParseArrivals(in)
		if err != nil || got != want {
			t.Errorf("ParseArrivals(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if back, err := ParseArrivals(got.String()); err != nil || back != got {
			t.Errorf("%+v.String() = %q parses back as %+v, %v", got, got.String(), back, err)
		}
	}
	for _, in := range []string{"gamma", "gamma:", "gamma:0", "gamma:-1", "gamma:101", "gamma:x", "gamma:NaN", "uniform", "Poisson"} {
		if _, err := ParseArrivals(in); !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), "--arrivals") {
			t.Errorf("ParseArrivals(%q): %v; want ErrShape naming --arrivals", in, err)
		}
	}
}

// Staged checks what it is given however it was made.
func TestStagedRefuses(t *testing.T) {
	ok := []Stage{{Duration: time.Second, From: 10, To: 10}}
	tests := []struct {
		o    StagedOptions
		want string
	}{
		{StagedOptions{}, "--stages has no stage"},
		{StagedOptions{Stages: []Stage{{Duration: time.Second, From: math.NaN(), To: 1}}}, "negative rate"},
		{StagedOptions{Stages: ok, Arrivals: Process{Kind: Gamma}}, "--arrivals gamma:0"},
		{StagedOptions{Stages: ok, Arrivals: Process{Kind: "bursty"}}, "--arrivals"},
		{StagedOptions{Stages: ok, Mix: &Mix{}}, "--mix has no entry"},
		{StagedOptions{Stages: ok, Mix: &Mix{Entries: []MixEntry{{Model: "a", Weight: -1}}}}, "--mix: entry 1"},
	}
	for _, tt := range tests {
		if _, err := Staged(tt.o); !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Staged(%+v): %v; want ErrShape and %q", tt.o, err, tt.want)
		}
	}
}

// pass collects one pass of s.
func pass(t testing.TB, s trace.Shape) []trace.Arrival {
	t.Helper()
	a, err := s.Arrivals()
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var out []trace.Arrival
	for x, ok := a.Next(); ok; x, ok = a.Next() {
		out = append(out, x)
	}
	if err := a.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func mustStaged(t testing.TB, stages, arrivals string, seed uint64) trace.Shape {
	t.Helper()
	st, err := ParseStages(stages)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseArrivals(arrivals)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Staged(StagedOptions{Stages: st, Arrivals: p, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// perSecond counts the arrivals in each whole second from 0 to end.
func perSecond(arr []trace.Arrival, end time.Duration) []int {
	c := make([]int, int(end/time.Second))
	for _, a := range arr {
		if i := int(a.At / time.Second); i < len(c) {
			c[i]++
		}
	}
	return c
}

// Acceptance: per-second counts within Poisson's 3σ of each stage's rate,
// and Poisson's dispersion (a constant process would pass the 3σ bound
// too: the variance of the counts tells them apart).
func TestStagedPoissonPerSecondCounts(t *testing.T) {
	s := mustStaged(t, "30s:100,30s:500,20s:2000", "poisson", 16159082839903944936)
	arr := pass(t, s)
	counts := perSecond(arr, s.End())
	for _, st := range []struct {
		from, to int
		rate     float64
	}{{0, 30, 100}, {30, 60, 500}, {60, 80, 2000}} {
		sigma := math.Sqrt(st.rate)
		sum, sq := 0.0, 0.0
		for sec := st.from; sec < st.to; sec++ {
			c := float64(counts[sec])
			if math.Abs(c-st.rate) > 3*sigma {
				t.Errorf("second %d: %v arrivals, rate %v: beyond 3σ (%.1f)", sec, c, st.rate, 3*sigma)
			}
			sum += c
			sq += c * c
		}
		n := float64(st.to - st.from)
		mean := sum / n
		variance := (sq - n*mean*mean) / (n - 1)
		// The sample variance's ratio to the rate is χ²(n−1)/(n−1): for n
		// = 20..30 seconds, 0.4..1.8 holds it beyond 3σ.
		if r := variance / st.rate; r < 0.4 || r > 1.8 {
			t.Errorf("seconds %d–%d: variance %.1f of counts at rate %v (ratio %.2f): not Poisson's", st.from, st.to, variance, st.rate, r)
		}
	}
	for i, a := range arr {
		want := 0
		if a.At > 30*time.Second {
			want = 1
		}
		if a.At > 60*time.Second {
			want = 2
		}
		if a.Stage != want {
			t.Fatalf("arrival %d at %v: stage %d, want %d", i, a.At, a.Stage, want)
		}
		if i > 0 && a.At < arr[i-1].At {
			t.Fatalf("arrival %d at %v, before the one before it (%v)", i, a.At, arr[i-1].At)
		}
	}
	if s.End() != 80*time.Second || arr[len(arr)-1].At > s.End() {
		t.Errorf("End %v, last arrival %v", s.End(), arr[len(arr)-1].At)
	}
}

// Over several seeds, each stage's whole count is within 3σ of rate ×
// duration.
func TestStagedStageCounts(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		s := mustStaged(t, "20s:50,10s:0,30s:100->400,20s:300->0", "poisson", seed)
		n := make([]float64, 4)
		for _, a := range pass(t, s) {
			n[a.Stage]++
		}
		for i, want := range []float64{1000, 0, 7500, 3000} {
			if math.Abs(n[i]-want) > 3*math.Sqrt(want) {
				t.Errorf("seed %d, stage %d: %v arrivals, want %v ± 3σ", seed, i, n[i], want)
			}
		}
	}
}

// slope is the least-squares slope of counts against each second's middle.
func slope(counts []int) float64 {
	n := float64(len(counts))
	var sx, sy, sxx, sxy float64
	for i, c := range counts {
		x, y := float64(i)+0.5, float64(c)
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	return (n*sxy - sx*sy) / (n*sxx - sx*sx)
}

// Acceptance: a ramp's fitted slope within 5% of the asked one: the
// issue's 60 s ramp from 100 to 500 (the slope's standard error is 1.9%),
// a ten-minute one (0.6%) and a ramp down.
func TestStagedRampSlope(t *testing.T) {
	for _, tt := range []struct {
		stages string
		want   float64
	}{{"60s:100->500", 400.0 / 60}, {"10m:100->500", 400.0 / 600}, {"2m:800->200", -600.0 / 120}} {
		s := mustStaged(t, tt.stages, "poisson", 2747215439041700203)
		got := slope(perSecond(pass(t, s), s.End()))
		if math.Abs(got-tt.want) > 0.05*math.Abs(tt.want) {
			t.Errorf("%s: fitted slope %.4f/s², asked %.4f/s²: off by more than 5%%", tt.stages, got, tt.want)
		}
	}
}

// cumulative is Λ(t) of stages, in arrivals.
func cumulative(stages []Stage, t time.Duration) float64 {
	total := 0.0
	for _, s := range stages {
		if t >= s.Duration {
			total += s.Expected()
			t -= s.Duration
			continue
		}
		x, d := t.Seconds(), s.Duration.Seconds()
		return total + s.From*x + (s.To-s.From)*x*x/(2*d)
	}
	return total
}

// With constant arrivals arrival k (from 1) is where Λ reaches k: Λ⁻¹ is
// checked on ramps up, down and from 0, and across a stage at rate 0
// (which gets no arrival).
func TestStagedConstantFollowsLambda(t *testing.T) {
	const spec = "10s:100,5s:0,20s:0->300,10s:300->50,3s:7"
	stages, _ := ParseStages(spec)
	s := mustStaged(t, spec, "constant", 1)
	arr := pass(t, s)
	total := cumulative(stages, s.End())
	if want := int(math.Floor(total + 1e-9)); len(arr) != want {
		t.Fatalf("%d arrivals, want ⌊Λ(end)⌋ = %d", len(arr), want)
	}
	for i, a := range arr {
		if got := cumulative(stages, a.At); math.Abs(got-float64(i+1)) > 1e-3 {
			t.Fatalf("arrival %d (stage %d) at %v: Λ = %.6f, want %d", i, a.Stage, a.At, got, i+1)
		}
		if a.Stage == 1 {
			t.Fatalf("arrival %d at %v in the stage at rate 0", i, a.At)
		}
	}
}

// Acceptance: constant arrivals are exactly evenly spaced.
func TestStagedConstantEvenlySpaced(t *testing.T) {
	s := mustStaged(t, "10s:100,5s:400", "constant", 99)
	arr := pass(t, s)
	if len(arr) != 3000 {
		t.Fatalf("%d arrivals, want 1000 + 2000", len(arr))
	}
	for i, a := range arr {
		want := time.Duration(i+1) * 10 * time.Millisecond
		if i >= 1000 {
			want = 10*time.Second + time.Duration(i+1-1000)*2500*time.Microsecond
		}
		if a.At != want {
			t.Fatalf("arrival %d at %v, want %v", i, a.At, want)
		}
	}
}

// Acceptance: the same seed gives the same schedule (in every pass, and
// from a second shape), another seed another.
func TestStagedDeterministic(t *testing.T) {
	for _, arrivals := range []string{"poisson", "gamma:3"} {
		a := mustStaged(t, "5s:200,5s:200->1000", arrivals, 7)
		first := pass(t, a)
		if again, other := pass(t, a), pass(t, mustStaged(t, "5s:200,5s:200->1000", arrivals, 7)); fmt.Sprint(again) != fmt.Sprint(first) || fmt.Sprint(other) != fmt.Sprint(first) {
			t.Errorf("%s: the same seed gave another schedule", arrivals)
		}
		b := pass(t, mustStaged(t, "5s:200,5s:200->1000", arrivals, 8))
		same := 0
		for i := range min(len(first), len(b)) {
			if first[i].At == b[i].At {
				same++
			}
		}
		if same > len(first)/100 {
			t.Errorf("%s: seeds 7 and 8 share %d of %d arrival times", arrivals, same, len(first))
		}
	}
}

// cv is the coefficient of variation of xs.
func cv(xs []float64) (mean, c float64) {
	var s, sq float64
	for _, x := range xs {
		s += x
	}
	mean = s / float64(len(xs))
	for _, x := range xs {
		sq += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sq/float64(len(xs)-1)) / mean
}

// Acceptance: gamma's inter-arrival CV as asked. The unit draws (10^6 of
// them) have mean 1 and the CV within 5% (their standard errors are below
// 1% even at CV 5, shape 0.04); a shape's inter-arrival times at a
// constant rate keep that CV.
func TestGammaCV(t *testing.T) {
	for _, want := range []float64{0.5, 1, 2, 5} {
		u := newUnitDraws(Process{Kind: Gamma, CV: want}, 42)
		xs := make([]float64, 1_000_000)
		for i := range xs {
			xs[i] = u.next()
		}
		mean, got := cv(xs)
		if math.Abs(mean-1) > 0.03 || math.Abs(got-want) > 0.05*want {
			t.Errorf("gamma:%v: unit draws of mean %.4f and CV %.4f; want 1 and %v", want, mean, got, want)
		}
	}
	arr := pass(t, mustStaged(t, "1000s:100", "gamma:2", 5))
	gaps := make([]float64, 0, len(arr))
	for i := 1; i < len(arr); i++ {
		gaps = append(gaps, (arr[i].At - arr[i-1].At).Seconds())
	}
	if mean, got := cv(gaps); math.Abs(mean-0.01) > 0.001 || math.Abs(got-2) > 0.1 {
		t.Errorf("gamma:2 at 100/s: gaps of mean %.5fs and CV %.3f; want 0.01s and 2", mean, got)
	}
	// Poisson's own draws have CV 1.
	u := newUnitDraws(Process{Kind: Poisson}, 3)
	xs := make([]float64, 200_000)
	for i := range xs {
		xs[i] = u.next()
	}
	if mean, got := cv(xs); math.Abs(mean-1) > 0.01 || math.Abs(got-1) > 0.01 {
		t.Errorf("poisson: unit draws of mean %.4f and CV %.4f; want 1 and 1", mean, got)
	}
}

// A pass holds O(1) memory: its allocations do not grow with its length.
func TestStagedPassMemoryBounded(t *testing.T) {
	allocs := func(stages string) float64 {
		s := mustStaged(t, stages, "gamma:2", 1)
		return testing.AllocsPerRun(3, func() {
			a, _ := s.Arrivals()
			for _, ok := a.Next(); ok; _, ok = a.Next() {
			}
		})
	}
	short, long := allocs("1s:1000"), allocs("100s:1000")
	if short > 2 || long != short {
		t.Errorf("a pass of 1,000 arrivals allocates %v times, of 100,000 %v; want the same, at most 2", short, long)
	}
}

// What h31-results reads by type assertion: Stages as parsed (a copy),
// Models nil without a mix and the mix's names with one.
func TestStagedStagesAndModels(t *testing.T) {
	st, _ := ParseStages("1s:10,2s:10->20")
	mix, err := ParseMix("b=1,a=2")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		mix  *Mix
		want []string
	}{{nil, nil}, {mix, []string{"b", "a"}}} {
		s, err := Staged(StagedOptions{Stages: st, Mix: tt.mix, MixSeed: 11, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		x, ok := s.(interface {
			Stages() []Stage
			Models() []string
		})
		if !ok {
			t.Fatal("Staged's shape has no Stages() and Models()")
		}
		got := x.Stages()
		if fmt.Sprint(got) != fmt.Sprint(st) {
			t.Errorf("Stages() = %v, want %v", got, st)
		}
		got[0].From = 99
		if x.Stages()[0].From != 10 {
			t.Error("Stages() shares the shape's slice")
		}
		if m := x.Models(); fmt.Sprint(m) != fmt.Sprint(tt.want) || (tt.want == nil) != (m == nil) {
			t.Errorf("Models() = %#v, want %#v", m, tt.want)
		}
		for i, a := range pass(t, s) {
			want := 0
			if tt.mix != nil {
				want = tt.mix.Pick(11, i)
			}
			if a.Model != want {
				t.Fatalf("arrival %d: model %d, want Pick's %d", i, a.Model, want)
			}
		}
	}
}

// A staged shape drives a Server trace: the trace counts its arrivals and
// its cursor walks them.
func TestStagedDrivesTrace(t *testing.T) {
	s := mustStaged(t, "2s:100,1s:0,1s:50", "poisson", 4)
	want := pass(t, s)
	req := trace.DefaultSettings()
	req.Scenario, req.Shape = trace.Server, s
	tr, err := trace.New(req, trace.QSL{TotalSampleCount: 10, PerformanceSampleCount: 10})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Len() != len(want) || tr.Duration != 4*time.Second {
		t.Fatalf("trace of %d queries over %v; want %d over 4s", tr.Len(), tr.Duration, len(want))
	}
	c := tr.Cursor()
	defer c.Close()
	for i := 0; ; i++ {
		q, ok := c.Next()
		if !ok {
			if i != len(want) || c.Err() != nil {
				t.Fatalf("cursor stopped after %d of %d: %v", i, len(want), c.Err())
			}
			break
		}
		if q.Scheduled != want[i].At || q.Stage != want[i].Stage {
			t.Fatalf("query %d at %v stage %d; the shape says %v stage %d", i, q.Scheduled, q.Stage, want[i].At, want[i].Stage)
		}
	}
}

// BenchmarkStagedPass: arrivals a pass generates, as ns/arrival.
func BenchmarkStagedPass(b *testing.B) {
	for _, arrivals := range []string{"poisson", "constant", "gamma:2"} {
		b.Run(arrivals, func(b *testing.B) {
			s := mustStaged(b, "100s:1000,100s:1000->5000,100s:5000->0", arrivals, 1)
			a, _ := s.Arrivals()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, ok := a.Next(); !ok {
					a, _ = s.Arrivals()
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/arrival")
		})
	}
}
