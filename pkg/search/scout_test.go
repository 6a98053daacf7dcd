package search

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// scoutPlanner is the scout strategy over loadgen6's FindPeakPerformance
// from start, step 1, with the search's precision.
func scoutPlanner(t *testing.T, start, precision float64) Planner {
	t.Helper()
	s, err := loadgen.NewSettings(loadgen.RulesetLoadGen6, trace.Server, "")
	if err != nil {
		t.Fatal(err)
	}
	s.ServerTargetQPS, s.ServerFindPeakQPSBoundaryStepSize = start, 1
	p, algo, _, err := Plan(s, Options{Precision: precision, Strategy: StrategyScout})
	if err != nil || algo != AlgoFindPeak {
		t.Fatalf("Plan: %v, %q", err, algo)
	}
	return p
}

// twoTruths passes a short trial up to scout and a full-length one up to
// full: a server whose short trials see another law than its long ones.
func twoTruths(scout, full float64) func(Step) bool {
	return func(s Step) bool {
		if s.Scout {
			return s.Target <= scout
		}
		return s.Target <= full
	}
}

// The scout's trials are all short and bisect as FindPeakPerformance does;
// then one full-length trial verifies the scout's peak, which is the
// search's.
func TestScoutThenOneVerification(t *testing.T) {
	p := scoutPlanner(t, 100, 5)
	steps := drive(t, p, below(842))
	last := steps[len(steps)-1]
	for _, s := range steps[:len(steps)-1] {
		if !s.Scout || s.Phase == PhaseVerify {
			t.Fatalf("scout stage step %+v: want short, not verify", s)
		}
	}
	if last.Scout || last.Phase != PhaseVerify {
		t.Fatalf("last step %+v: want a full-length verification", last)
	}
	o := p.Outcome()
	if !o.Found || o.Peak != last.Target || o.Peak > 842 || 842-o.Peak > 5 {
		t.Fatalf("outcome %+v after %v; want the verified scout peak within 5 of 842", o, steps)
	}
	// The scout is FindPeakPerformance itself: the same targets as the
	// full strategy's, which ends where the verification begins.
	full, _, _, _ := Plan(settingsAt(t, 100), Options{Precision: 5})
	want := drive(t, full, below(842))
	if len(want) != len(steps)-1 {
		t.Fatalf("scout stage %d trials, full search %d", len(steps)-1, len(want))
	}
	for i := range want {
		if want[i].Target != steps[i].Target || want[i].Phase != steps[i].Phase {
			t.Errorf("step %d: scout %+v, full %+v", i, steps[i], want[i])
		}
	}
}

func settingsAt(t *testing.T, start float64) loadgen.Settings {
	t.Helper()
	s, err := loadgen.NewSettings(loadgen.RulesetLoadGen6, trace.Server, "")
	if err != nil {
		t.Fatal(err)
	}
	s.ServerTargetQPS, s.ServerFindPeakQPSBoundaryStepSize = start, 1
	return s
}

// A scout slightly above the full-length truth: the verification steps
// down by the precision until one passes, and that is the peak.
func TestVerifyStepsDownByThePrecision(t *testing.T) {
	p := scoutPlanner(t, 100, 5)
	steps := drive(t, p, twoTruths(842, 833))
	var verify []float64
	for _, s := range steps {
		if !s.Scout {
			verify = append(verify, s.Target)
		}
	}
	o := p.Outcome()
	// The scout's peak fails, 5 lower fails, 10 lower still passes (the
	// step doubles), 10 apart from the last failure: one full-length
	// bisection, which passes, within 5 of the failure.
	if len(verify) != 4 || verify[1] != verify[0]-5 || verify[2] != verify[1]-10 || verify[3] != verify[1]-5 {
		t.Fatalf("verifications %v: want the scout's peak, 5 lower, 10 lower still, then halfway back", verify)
	}
	if !o.Found || o.Peak != verify[3] || o.Peak > 833 {
		t.Fatalf("outcome %+v, verifications %v", o, verify)
	}
	if lo, hi := p.Bounds(); lo != verify[3] || hi != verify[1] {
		t.Errorf("bounds [%v, %v), want [%v, %v)", lo, hi, verify[3], verify[1])
	}
}

// A server fast for its first seconds fools the scout (7× too high); the
// verification finds a full-length pass in a few doubling steps, then
// bisects at full length to the precision: the peak is the full-length
// truth's, never the scout's.
func TestVerifyNotFooledByADegradingServer(t *testing.T) {
	for _, prec := range []float64{5, 0} {
		p := scoutPlanner(t, 50, prec)
		steps := drive(t, p, twoTruths(760.9, 104.1))
		o := p.Outcome()
		tol := prec
		if prec == 0 {
			tol = DefaultVerifyStepShare * 104.1
		}
		if !o.Found || o.Peak > 104.1 || 104.1-o.Peak > tol {
			t.Fatalf("precision %v: outcome %+v, want within %v below 104.1", prec, o, tol)
		}
		var full int
		for _, s := range steps {
			if !s.Scout {
				full++
			}
		}
		if full > 20 {
			t.Errorf("precision %v: %d full-length trials: the doubling step should reach 104 from 760 in few", prec, full)
		}
		t.Logf("precision %v: %d trials, %d at full length, peak %v", prec, len(steps), full, o.Peak)
	}
}

// Nothing passes at full length: no peak, and the search ends.
func TestVerifyNothingPasses(t *testing.T) {
	p := scoutPlanner(t, 100, 5)
	drive(t, p, twoTruths(842, 0))
	if o := p.Outcome(); o.Found || !strings.Contains(o.Reason, "passed its full-length verification") {
		t.Fatalf("outcome %+v", o)
	}
}

// A scout that finds nothing ends the search with its reason; no
// full-length trial runs.
func TestScoutFindsNothing(t *testing.T) {
	p := scoutPlanner(t, 100, 5)
	steps := drive(t, p, below(50))
	if len(steps) != 1 || !steps[0].Scout {
		t.Fatalf("steps %+v: want one failed scout trial", steps)
	}
	if o := p.Outcome(); o.Found || !strings.HasPrefix(o.Reason, "scout: ") {
		t.Fatalf("outcome %+v", o)
	}
}

// v0.5 verifies already: its bracketing is scouted and its verifying runs
// are full length; MultiStream's stream search too.
func TestScoutV05(t *testing.T) {
	for _, sc := range []trace.Scenario{trace.Server, trace.MultiStream} {
		s, err := loadgen.NewSettings(loadgen.RulesetV05, sc, "")
		if err != nil {
			t.Fatal(err)
		}
		s.ServerTargetQPS, s.MultiStreamSamplesPerQuery = 100, 8
		p, _, _, err := Plan(s, Options{Strategy: StrategyScout})
		if err != nil {
			t.Fatal(err)
		}
		truth := 842.0
		if sc == trace.MultiStream {
			truth = 45
		}
		steps := drive(t, p, below(truth))
		var verify int
		for _, st := range steps {
			if st.Scout == (st.Phase == PhaseVerify) {
				t.Errorf("%s: step %+v: a verifying run must be full length, every other short", sc, st)
			}
			if st.Phase == PhaseVerify {
				verify++
			}
		}
		if o := p.Outcome(); !o.Found || o.Peak > truth || verify != DefaultVerifyRuns {
			t.Errorf("%s: outcome %+v with %d verifying runs", sc, o, verify)
		}
	}
}

func TestPlanRefusesAnUnknownStrategy(t *testing.T) {
	if _, _, _, err := Plan(settingsAt(t, 100), Options{Strategy: "fast"}); err == nil || !strings.Contains(err.Error(), `"fast"`) {
		t.Fatalf("err %v", err)
	}
	if _, err := NewScoutVerify(nil, 1); err == nil {
		t.Fatal("no inner planner accepted")
	}
	if _, err := NewScoutVerify(scoutPlanner(t, 1, 0), math.NaN()); err == nil {
		t.Fatal("NaN precision accepted")
	}
}

// The record of a scout search: each trial's stage, the time in each
// stage, the full-length equivalent; the peak is a verification's trial.
func TestRunRecordsTheStages(t *testing.T) {
	dir := t.TempDir()
	trials := fakeTrials(func(r TrialRequest) bool {
		if r.Scout != (r.Stage == StageScout) || r.Stage == "" {
			t.Errorf("trial %d: scout %v, stage %q", r.Index, r.Scout, r.Stage)
		}
		if r.Scout {
			return r.Target <= 842
		}
		return r.Target <= 833
	})
	res, err := Run(t.Context(), Config{Planner: scoutPlanner(t, 100, 5), Trials: trials, Dir: dir, Strategy: StrategyScout,
		MinDuration: 10 * time.Second, Ruleset: "loadgen6", Scenario: "Server", Algorithm: AlgoFindPeak, Unit: UnitQPS})
	if err != nil {
		t.Fatal(err)
	}
	pk, ok := res.PeakRecord()
	if !ok || pk.Stage != StageVerify || !pk.Pass || pk.Target > 833 {
		t.Fatalf("peak trial %+v (found %v)", pk, ok)
	}
	if len(res.Stages) != 2 || res.Stages[0].Stage != StageScout || res.Stages[1].Stage != StageVerify ||
		res.Stages[0].Trials+res.Stages[1].Trials != len(res.Trials) || res.Stages[1].Trials != 4 {
		t.Fatalf("stages %+v for %d trials", res.Stages, len(res.Trials))
	}
	if want := float64(len(res.Trials)) * 10; res.FullLengthS != want || res.MinDurationS != 10 || res.Strategy != StrategyScout {
		t.Errorf("full-length equivalent %v (min %v, %q), want %v", res.FullLengthS, res.MinDurationS, res.Strategy, want)
	}
	got, err := Load(dir)
	if err != nil || len(got.Stages) != 2 || got.Trials[0].Stage != StageScout {
		t.Fatalf("search.json: %+v, %v", got, err)
	}
	sum := Summary(res)
	for _, want := range []string{"scout base", "scout bisect", "Strategy: scout", "scout ", "verify 4 trials", fmt.Sprintf("(%d × 10.0 s minimum duration)", len(res.Trials))} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
}

// A planner that claims a peak only a scout trial passed at: no peak is
// reported, whatever it says.
type scoutClaims struct{ n int }

func (l *scoutClaims) Next() (Step, bool) {
	if l.n == 2 {
		return Step{}, false
	}
	l.n++
	return Step{Target: 10 * float64(l.n), Phase: PhaseBisect, Scout: l.n == 2}, true
}
func (l *scoutClaims) Record(bool)                {}
func (l *scoutClaims) Bounds() (float64, float64) { return 0, math.Inf(1) }
func (l *scoutClaims) Outcome() Outcome           { return Outcome{Found: true, Peak: 20, Reason: "lie"} }

func TestRunNeverReportsAScoutTrialsPeak(t *testing.T) {
	res, err := Run(t.Context(), Config{Planner: &scoutClaims{}, Strategy: StrategyScout, Trials: fakeTrials(func(TrialRequest) bool { return true })})
	if err != nil {
		t.Fatal(err)
	}
	if res.Found || !strings.Contains(res.EndReason, "no passing trial at 20") {
		t.Fatalf("reported %+v", res)
	}
}

// A scout trial's "early" is a share of its own minimum duration, not of
// the full trial's: a 1 s scout that failed 0.5 s in failed late.
func TestRetryEarlyIsAShareOfTheTrialsOwnLength(t *testing.T) {
	r := Retry{Times: 1, Within: 10 * time.Second / 3}
	for _, c := range []struct {
		run, min time.Duration
		want     bool
	}{
		{500 * time.Millisecond, time.Second, false},
		{200 * time.Millisecond, time.Second, true},
		{2 * time.Second, 0, true}, // not known: the full trial's
		{2 * time.Second, 10 * time.Second, true},
		{4 * time.Second, 10 * time.Second, false},
	} {
		if got := r.failedEarly(TrialResult{RunDuration: c.run, MinDuration: c.min}); got != c.want {
			t.Errorf("failed after %v of a %v trial: early %v, want %v", c.run, c.min, got, c.want)
		}
	}
}

// With the warm-up and retry off, the full strategy is today's search:
// for the same seeds (a flaky endpoint whose verdict near the peak is a
// seeded draw per trial), its trials, peak and end are identical to
// FindPeakPerformance's planner driven with nothing of issue 33.
func TestFullStrategyIsTodaysSearch(t *testing.T) {
	for seed := range uint64(20) {
		flaky := func() TrialFunc {
			rng := rand.New(rand.NewPCG(seed, 33))
			return fakeTrials(func(r TrialRequest) bool {
				if r.Scout {
					t.Errorf("trial %d asked for a scout in a full search", r.Index)
				}
				// Certain far from 842, a coin within 5% of it.
				return r.Target < 800 || (r.Target <= 884 && rng.IntN(2) == 0)
			})
		}
		today, err := NewFindPeak(FindPeakConfig{Start: 100, StepSize: 1, Decimals: 1, Precision: 5})
		if err != nil {
			t.Fatal(err)
		}
		s := settingsAt(t, 100)
		s.ServerFindPeakQPSDecimalsOfPrecision = 1
		full, _, _, err := Plan(s, Options{Precision: 5, Strategy: StrategyFull})
		if err != nil {
			t.Fatal(err)
		}
		a, err := Run(t.Context(), Config{Planner: today, Trials: flaky()})
		if err != nil {
			t.Fatal(err)
		}
		b, err := Run(t.Context(), Config{Planner: full, Trials: flaky(), Strategy: StrategyFull, Retry: Retry{Times: 0, Within: time.Hour}})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a.Trials, b.Trials) || a.Peak != b.Peak || a.Found != b.Found || a.EndReason != b.EndReason || b.Stages != nil {
			t.Fatalf("seed %d: the full strategy changed the search:\n%+v\n%+v", seed, a, b)
		}
	}
}
