package shape

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// The bounds of --stages: past them a schedule is a typing mistake, not a
// test (a week at ten million queries a second is six trillion queries).
const (
	MaxStages        = 1000
	MaxStagesTotal   = 7 * 24 * time.Hour
	MaxRate          = 1e7
	MaxGammaCV       = 100.0
	stagesSyntaxHint = "write DURATION:RATE or DURATION:FROM->TO, stages separated by commas, e.g. 30s:100,60s:100->500 (a Go duration, a rate in queries a second)"
)

// Stage is one stage of --stages: Duration at a rate going linearly from
// From to To queries a second (To == From: a constant stage).
type Stage struct {
	Duration time.Duration
	From, To float64
}

// String is s in ParseStages' syntax.
func (s Stage) String() string {
	from := strconv.FormatFloat(s.From, 'g', -1, 64)
	if s.To == s.From {
		return s.Duration.String() + ":" + from
	}
	return s.Duration.String() + ":" + from + "->" + strconv.FormatFloat(s.To, 'g', -1, 64)
}

// Expected is the stage's expected arrival count: the integral of its rate.
func (s Stage) Expected() float64 { return (s.From + s.To) / 2 * s.Duration.Seconds() }

// FormatStages is stages in ParseStages' syntax.
func FormatStages(stages []Stage) string {
	parts := make([]string, len(stages))
	for i, s := range stages {
		parts[i] = s.String()
	}
	return strings.Join(parts, ",")
}

// ParseStages reads --stages: "30s:100,60s:100->500,30s:500" (DURATION:RATE
// or DURATION:FROM->TO, one after the other). Errors wrap ErrShape and
// name --stages, the stage (1-based) and what to write.
func ParseStages(v string) ([]Stage, error) {
	if strings.TrimSpace(v) == "" {
		return nil, fmt.Errorf("%w: --stages is empty; %s", ErrShape, stagesSyntaxHint)
	}
	parts := strings.Split(v, ",")
	if len(parts) > MaxStages {
		return nil, fmt.Errorf("%w: --stages has %d stages, more than %d; merge stages or shorten the run", ErrShape, len(parts), MaxStages)
	}
	stages := make([]Stage, 0, len(parts))
	for i, p := range parts {
		s, err := parseStage(strings.TrimSpace(p))
		if err != nil {
			return nil, fmt.Errorf("%w: --stages: stage %d (%q): %s; %s", ErrShape, i+1, p, err, stagesSyntaxHint)
		}
		stages = append(stages, s)
	}
	if err := checkStages(stages); err != nil {
		return nil, err
	}
	return stages, nil
}

// parseStage reads one DURATION:RATE or DURATION:FROM->TO; its error says
// what is wrong, the caller names the stage.
func parseStage(p string) (Stage, error) {
	ds, rs, ok := strings.Cut(p, ":")
	if !ok {
		return Stage{}, fmt.Errorf("no ':' between the duration and the rate")
	}
	d, err := time.ParseDuration(strings.TrimSpace(ds))
	if err != nil {
		return Stage{}, fmt.Errorf("duration %q is not a Go duration like 30s, 1m or 1h30m", strings.TrimSpace(ds))
	}
	s := Stage{Duration: d}
	from, to, ramp := strings.Cut(rs, "->")
	if s.From, err = parseRate(from); err != nil {
		return Stage{}, err
	}
	s.To = s.From
	if ramp {
		if s.To, err = parseRate(to); err != nil {
			return Stage{}, err
		}
	}
	return s, nil
}

// parseRate reads a rate in queries a second.
func parseRate(v string) (float64, error) {
	v = strings.TrimSpace(v)
	r, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(r) || math.IsInf(r, 0) {
		return 0, fmt.Errorf("rate %q is not a number of queries a second", v)
	}
	return r, nil
}

// checkStages checks what Staged needs of stages, however they were made
// (parsed, or built by a caller): each error wraps ErrShape and names
// --stages and the stage.
func checkStages(stages []Stage) error {
	if len(stages) == 0 {
		return fmt.Errorf("%w: --stages has no stage; %s", ErrShape, stagesSyntaxHint)
	}
	if len(stages) > MaxStages {
		return fmt.Errorf("%w: --stages has %d stages, more than %d; merge stages or shorten the run", ErrShape, len(stages), MaxStages)
	}
	var total time.Duration
	expected := 0.0
	for i, s := range stages {
		switch {
		case s.Duration <= 0:
			return fmt.Errorf("%w: --stages: stage %d (%s) lasts %v; give it a positive duration like 30s", ErrShape, i+1, s, s.Duration)
		case !(s.From >= 0 && s.To >= 0):
			return fmt.Errorf("%w: --stages: stage %d (%s) has a negative rate; rates are 0 or more queries a second", ErrShape, i+1, s)
		case s.From > MaxRate || s.To > MaxRate:
			return fmt.Errorf("%w: --stages: stage %d (%s) asks more than %g queries a second; lower its rate", ErrShape, i+1, s, MaxRate)
		}
		if total += s.Duration; total > MaxStagesTotal {
			return fmt.Errorf("%w: --stages: the stages last more than %v by stage %d; shorten them", ErrShape, MaxStagesTotal, i+1)
		}
		expected += s.Expected()
	}
	if expected == 0 {
		return fmt.Errorf("%w: --stages: every stage is at rate 0, so no query would be sent; give one stage a rate", ErrShape)
	}
	// The trace refuses more arrivals than it can number; say so now, by
	// the expected count, rather than after counting them.
	if expected > trace.MaxSamples {
		return fmt.Errorf("%w: --stages: the stages make about %.0f queries, more than %d; shorten them or lower their rates", ErrShape, expected, trace.MaxSamples)
	}
	return nil
}

// Process is --arrivals: how queries arrive at a stage's rate.
type Process struct {
	// Kind is "poisson" (the default), "constant" or "gamma".
	Kind string
	// CV is gamma's coefficient of variation of the inter-arrival times
	// (> 1: burstier than Poisson, whose CV is 1).
	CV float64
}

// The processes' kinds.
const (
	Poisson  = "poisson"
	Constant = "constant"
	Gamma    = "gamma"
)

// ParseArrivals reads --arrivals: poisson | constant | gamma:CV ("":
// poisson). Errors wrap ErrShape and name --arrivals.
func ParseArrivals(v string) (Process, error) {
	v = strings.TrimSpace(v)
	switch v {
	case "", Poisson:
		return Process{Kind: Poisson}, nil
	case Constant:
		return Process{Kind: Constant}, nil
	}
	cv, ok := strings.CutPrefix(v, Gamma+":")
	if !ok {
		return Process{}, fmt.Errorf("%w: --arrivals %q is not poisson, constant or gamma:CV (e.g. gamma:2, burstier than Poisson)", ErrShape, v)
	}
	p := Process{Kind: Gamma}
	var err error
	if p.CV, err = strconv.ParseFloat(strings.TrimSpace(cv), 64); err != nil {
		return Process{}, fmt.Errorf("%w: --arrivals %q: the CV %q is not a number; write gamma:CV with 0 < CV ≤ %g (1 is Poisson's)", ErrShape, v, cv, MaxGammaCV)
	}
	if err := p.check(); err != nil {
		return Process{}, err
	}
	return p, nil
}

// check checks p however it was made; "" is poisson.
func (p Process) check() error {
	switch p.Kind {
	case "", Poisson, Constant:
		return nil
	case Gamma:
		if !(p.CV > 0 && p.CV <= MaxGammaCV) {
			return fmt.Errorf("%w: --arrivals gamma:%g: the CV must be above 0 and at most %g (1 is Poisson's, above 1 burstier)", ErrShape, p.CV, MaxGammaCV)
		}
		return nil
	}
	return fmt.Errorf("%w: --arrivals %q is not poisson, constant or gamma:CV", ErrShape, p.Kind)
}

// String is p in ParseArrivals' syntax.
func (p Process) String() string {
	switch p.Kind {
	case Gamma:
		return Gamma + ":" + strconv.FormatFloat(p.CV, 'g', -1, 64)
	case "":
		return Poisson
	}
	return p.Kind
}

// StagedOptions configure Staged.
type StagedOptions struct {
	Stages   []Stage
	Arrivals Process
	// Seed draws the arrival times (the run's schedule seed).
	Seed uint64
	// Mix, when set, draws each query's model (Arrival.Model); MixSeed
	// seeds it. The run's schedule seed may serve for both: Pick salts its
	// seed, so the models drawn are independent of the arrival times.
	Mix     *Mix
	MixSeed uint64
}

// Staged is the shape of stages one after the other, Arrival.Stage the
// index of the stage an arrival falls in, End the stages' total.
//
// The arrivals are a process of rate λ(t), the stages' piecewise-linear
// rate, made by time rescaling: unit-rate inter-arrival times u_k are
// drawn (exponential for poisson, 1 for constant, gamma of shape 1/CV²
// and scale CV² for gamma: each of mean 1), summed to S_k = u_1 + … + u_k,
// and arrival k is at Λ⁻¹(S_k), Λ(t) the integral of λ from the start.
// Poisson thus gives a non-homogeneous Poisson process; constant gives
// evenly spaced arrivals at a constant rate; a stage at rate 0 has none.
// The pass ends at the first S_k past Λ(End).
func Staged(o StagedOptions) (trace.Shape, error) {
	if err := checkStages(o.Stages); err != nil {
		return nil, err
	}
	if err := o.Arrivals.check(); err != nil {
		return nil, err
	}
	if o.Mix != nil {
		if err := o.Mix.check(); err != nil {
			return nil, err
		}
	}
	s := &staged{o: o, stages: append([]Stage(nil), o.Stages...)}
	s.o.Stages = s.stages
	s.mass = make([]float64, len(s.stages))
	s.start = make([]time.Duration, len(s.stages))
	for i, st := range s.stages {
		s.mass[i] = st.Expected()
		s.start[i] = s.end
		s.end += st.Duration
	}
	return s, nil
}

// staged is Staged's shape: the stages and, per stage, its start and its
// Λ mass (expected arrivals).
type staged struct {
	o      StagedOptions
	stages []Stage
	mass   []float64
	start  []time.Duration
	end    time.Duration
}

func (s *staged) End() time.Duration { return s.end }

// Stages are the stages as given (result.json's stages[] reads them).
func (s *staged) Stages() []Stage { return append([]Stage(nil), s.stages...) }

// Models are the mix's model names in entry order, nil without a mix
// (result.json's models[] reads them).
func (s *staged) Models() []string {
	if s.o.Mix == nil {
		return nil
	}
	return s.o.Mix.Models()
}

// Process is the arrival process (schedule's printout says it).
func (s *staged) Process() Process { return s.o.Arrivals }

func (s *staged) Arrivals() (trace.Arrivals, error) {
	return &stagedPass{s: s, u: newUnitDraws(s.o.Arrivals, s.o.Seed)}, nil
}

// stagedPass is one pass: the draws, the stage reached and the Λ mass
// already spent in it. O(1) memory whatever the pass's length.
type stagedPass struct {
	s     *staged
	u     unitDraws
	stage int
	into  float64 // S_k minus the mass of the stages before stage
	n     int
	last  time.Duration
}

func (p *stagedPass) Next() (trace.Arrival, bool) {
	s := p.s
	p.into += p.u.next()
	// A stage holds the arrivals with into ≤ its mass (a constant stage
	// at rate r for d seconds holds r·d of them, the last at its end); a
	// stage without mass (rate 0) holds none and is skipped.
	for p.stage < len(s.stages) && (p.into > s.mass[p.stage] || s.mass[p.stage] == 0) {
		p.into -= s.mass[p.stage]
		p.stage++
	}
	if p.stage >= len(s.stages) {
		return trace.Arrival{}, false
	}
	st := s.stages[p.stage]
	at := s.start[p.stage] + time.Duration(math.Round(invertStage(st, p.into)*1e9))
	// Rounding may put an arrival a nanosecond before the one before it;
	// the shape promises time order.
	at = max(at, p.last)
	p.last = at
	a := trace.Arrival{At: at, Stage: p.stage}
	if s.o.Mix != nil {
		a.Model = s.o.Mix.Pick(s.o.MixSeed, p.n)
	}
	p.n++
	return a, true
}

func (p *stagedPass) Err() error   { return nil }
func (p *stagedPass) Close() error { return nil }

// invertStage is the offset τ (seconds) into stage st at which its
// cumulative intensity a·τ + c·τ² (c = (To−From)/2D) reaches m, clamped to
// the stage. The root is written 2m/(a+√(a²+4cm)), which has no
// cancellation and holds for c = 0 (τ = m/a), for c < 0 (a ramp down) and
// for a = 0 (a ramp from 0: τ = √(m/c)).
func invertStage(st Stage, m float64) float64 {
	d := st.Duration.Seconds()
	if m <= 0 {
		return 0
	}
	a := st.From
	c := (st.To - st.From) / (2 * d)
	disc := max(a*a+4*c*m, 0)
	tau := 2 * m / (a + math.Sqrt(disc))
	if math.IsNaN(tau) || tau > d {
		return d
	}
	return tau
}
