package search

import (
	"math"
	"math/rand/v2"
	"testing"
)

// drive runs p against pass until it ends, returning the targets tried.
func drive(t *testing.T, p Planner, pass func(Step) bool) []Step {
	t.Helper()
	var steps []Step
	for {
		s, ok := p.Next()
		if !ok {
			return steps
		}
		if len(steps) > 1000 {
			t.Fatal("planner did not end after 1000 trials")
		}
		steps = append(steps, s)
		p.Record(pass(s))
	}
}

func below(truth float64) func(Step) bool { return func(s Step) bool { return s.Target <= truth } }

// LOADGEN-REFERENCE.md §4 observed with the null SUT: base 1000, boundary
// runs 2000 … 512000, 18 bisection runs, peak 368,475.585938 (p = 0).
func TestFindPeakMatchesLoadGenObservation(t *testing.T) {
	p, err := NewFindPeak(FindPeakConfig{Start: 1000, StepSize: 1, Decimals: 0})
	if err != nil {
		t.Fatal(err)
	}
	steps := drive(t, p, below(368475.6))
	count := map[Phase]int{}
	for _, s := range steps {
		count[s.Phase]++
	}
	if count[PhaseBase] != 1 || count[PhaseBoundary] != 9 || count[PhaseBisect] != 18 {
		t.Errorf("trials by phase = %v, want base 1, boundary 9, bisect 18", count)
	}
	if b := steps[len(steps)-count[PhaseBisect]-1]; b.Target != 512000 {
		t.Errorf("last boundary run = %v, want 512000", b.Target)
	}
	o := p.Outcome()
	if !o.Found || math.Abs(o.Peak-368475.585938) > 1e-6 {
		t.Errorf("outcome = %+v, want peak 368475.585938", o)
	}
}

func TestFindPeakBracketsTheTruth(t *testing.T) {
	tests := []struct {
		name  string
		cfg   FindPeakConfig
		truth float64
	}{
		{"doubling, 1 decimal", FindPeakConfig{Start: 10, StepSize: 1, Decimals: 1}, 853.27},
		{"step 0.5, 0 decimals", FindPeakConfig{Start: 100, StepSize: 0.5, Decimals: 0}, 4321.9},
		{"2 decimals", FindPeakConfig{Start: 1, StepSize: 1, Decimals: 2}, 77.777},
		{"absolute precision", FindPeakConfig{Start: 100, StepSize: 1, Precision: 5}, 1234},
		{"truth at the start", FindPeakConfig{Start: 50, StepSize: 1, Decimals: 1}, 50},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewFindPeak(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			drive(t, p, below(tc.truth))
			o := p.Outcome()
			lo, hi := p.Bounds()
			if !o.Found || o.Peak != lo || o.Peak > tc.truth || hi <= tc.truth {
				t.Fatalf("outcome %+v bounds [%v, %v) do not bracket truth %v", o, lo, hi, tc.truth)
			}
			if tc.cfg.Precision > 0 {
				if hi-lo > tc.cfg.Precision {
					t.Errorf("bracket %v wide, precision %v", hi-lo, tc.cfg.Precision)
				}
			} else if s := math.Pow(10, float64(tc.cfg.Decimals)); math.Floor(lo*s)+1 < math.Floor(hi*s) {
				t.Errorf("bracket [%v, %v) not within %d decimals", lo, hi, tc.cfg.Decimals)
			}
		})
	}
}

func TestFindPeakBaseFailureEnds(t *testing.T) {
	p, _ := NewFindPeak(FindPeakConfig{Start: 1000, StepSize: 1, Decimals: 1})
	steps := drive(t, p, below(500))
	if len(steps) != 1 || p.Outcome().Found {
		t.Fatalf("steps %v outcome %+v: want one failed base run and no peak", steps, p.Outcome())
	}
}

func TestFindPeakUpperCaps(t *testing.T) {
	p, _ := NewFindPeak(FindPeakConfig{Start: 100, StepSize: 1, Decimals: 1, Upper: 300})
	steps := drive(t, p, below(1e9))
	if o := p.Outcome(); !o.Found || o.Peak != 300 {
		t.Fatalf("outcome %+v, want the cap 300", o)
	}
	for _, s := range steps {
		if s.Target > 300 {
			t.Errorf("trial at %v above the cap", s.Target)
		}
	}
}

func TestPlannersRefuseBadConfig(t *testing.T) {
	bad := []struct {
		name string
		err  error
	}{
		{"findpeak zero start", func() error { _, e := NewFindPeak(FindPeakConfig{StepSize: 1}); return e }()},
		{"findpeak zero step", func() error { _, e := NewFindPeak(FindPeakConfig{Start: 1}); return e }()},
		{"findpeak NaN start", func() error { _, e := NewFindPeak(FindPeakConfig{Start: math.NaN(), StepSize: 1}); return e }()},
		{"findpeak upper below start", func() error { _, e := NewFindPeak(FindPeakConfig{Start: 10, StepSize: 1, Upper: 5}); return e }()},
		{"verify fractional integer", func() error { _, e := NewVerify(VerifyConfig{Start: 1.5, Integer: true}); return e }()},
		{"verify delta 1", func() error { _, e := NewVerify(VerifyConfig{Start: 1, Delta: 1}); return e }()},
		{"verify upper at start", func() error { _, e := NewVerify(VerifyConfig{Start: 5, Upper: 5}); return e }()},
		{"verify negative runs", func() error { _, e := NewVerify(VerifyConfig{Start: 5, Runs: -1}); return e }()},
	}
	for _, b := range bad {
		if b.err == nil {
			t.Errorf("%s: accepted", b.name)
		}
	}
}

func TestVerifyFindsTheTruth(t *testing.T) {
	tests := []struct {
		name  string
		cfg   VerifyConfig
		truth float64
		// the peak must lie in (truth - tol, truth]
		tol float64
	}{
		{"server from below", VerifyConfig{Start: 100}, 853.2, 0.011 * 853.2},
		{"server from above", VerifyConfig{Start: 5000}, 853.2, 0.011 * 853.2},
		{"server with upper", VerifyConfig{Start: 100, Upper: 2000, Precision: 2}, 853.2, 2},
		{"streams from below", VerifyConfig{Start: 1, Integer: true}, 37, 0.5},
		{"streams from above", VerifyConfig{Start: 64, Integer: true}, 37, 0.5},
		{"streams truth 1", VerifyConfig{Start: 4, Integer: true}, 1, 0.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewVerify(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			steps := drive(t, p, below(tc.truth))
			o := p.Outcome()
			if !o.Found || o.Peak > tc.truth || o.Peak <= tc.truth-tc.tol {
				t.Fatalf("outcome %+v, want a peak in (%v, %v]", o, tc.truth-tc.tol, tc.truth)
			}
			if o.Verifying != DefaultVerifyRuns {
				t.Errorf("verifying = %d, want %d", o.Verifying, DefaultVerifyRuns)
			}
			for _, s := range steps[len(steps)-o.Verifying:] {
				if s.Phase != PhaseVerify || s.Target != o.Peak {
					t.Errorf("verifying step %+v, want verify at %v", s, o.Peak)
				}
			}
		})
	}
}

func TestVerifyLowersAfterAFailedVerification(t *testing.T) {
	tests := []struct {
		name    string
		cfg     VerifyConfig
		want    float64
		lowered int // verification rounds that failed
	}{
		// Truth 100 for boundary and bisection, but the 3rd verifying run
		// of the first candidate fails: the candidate drops by 1% (or 1).
		{"real", VerifyConfig{Start: 100, Upper: 200, Precision: 0.5}, 100 * 0.99, 1},
		{"integer", VerifyConfig{Start: 10, Integer: true}, 9, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := NewVerify(tc.cfg)
			verifies := 0
			var first float64
			steps := drive(t, p, func(s Step) bool {
				if s.Phase != PhaseVerify {
					return s.Target <= 10 || (!tc.cfg.Integer && s.Target <= 100)
				}
				if first == 0 {
					first = s.Target
				}
				verifies++
				return !(verifies == 3 && s.Target == first)
			})
			o := p.Outcome()
			if !o.Found || math.Abs(o.Peak-first*(1-0.01)) > 1e-9 && !(tc.cfg.Integer && o.Peak == first-1) {
				t.Fatalf("outcome %+v after first candidate %v; steps %v", o, first, steps)
			}
			// 3 verifying runs of the first candidate, then 5 of the next.
			if verifies != 3+DefaultVerifyRuns {
				t.Errorf("verifying trials = %d, want 8", verifies)
			}
		})
	}
}

func TestVerifyNoPeakWhenNothingPasses(t *testing.T) {
	for _, integer := range []bool{false, true} {
		p, _ := NewVerify(VerifyConfig{Start: 8, Integer: integer})
		drive(t, p, func(Step) bool { return false })
		if p.Outcome().Found {
			t.Errorf("integer=%v: found %+v with no pass", integer, p.Outcome())
		}
	}
}

// A peak is reported only when its verifying runs all passed, whatever
// the trials do: flaky trials pass or fail at random near the truth.
func TestVerifyFlakyNeverReportsAnUnverifiedPeak(t *testing.T) {
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		integer := seed%2 == 0
		start := 100.0
		truth := 500.0
		if integer {
			start, truth = 4, 20
		}
		p, _ := NewVerify(VerifyConfig{Start: start, Integer: integer})
		var log []struct {
			s    Step
			pass bool
		}
		for {
			s, ok := p.Next()
			if !ok {
				break
			}
			// Within 10% of the truth a trial passes with a probability
			// falling from 1 to 0.
			x := (s.Target - 0.9*truth) / (0.2 * truth)
			pass := rng.Float64() >= x
			log = append(log, struct {
				s    Step
				pass bool
			}{s, pass})
			p.Record(pass)
		}
		o := p.Outcome()
		if !o.Found {
			continue
		}
		n := len(log)
		for _, e := range log[n-o.Verifying:] {
			if !e.pass || e.s.Target != o.Peak || e.s.Phase != PhaseVerify {
				t.Fatalf("seed %d: peak %v reported but verifying trial %+v", seed, o.Peak, e)
			}
		}
		// Every trial at or above a target that failed verification ...
		// the peak never exceeds a failed verification target.
		for _, e := range log {
			if e.s.Phase == PhaseVerify && !e.pass && e.s.Target <= o.Peak {
				t.Fatalf("seed %d: peak %v at or above a failed verification at %v", seed, o.Peak, e.s.Target)
			}
		}
	}
}
