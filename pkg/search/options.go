package search

import (
	"fmt"
	"math"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// Options are a search's own knobs; zero values take the settings' or the
// algorithm's defaults.
type Options struct {
	// Start is the first target (0: server_target_qps, or MultiStream's
	// samples per query).
	Start float64
	// Upper caps (loadgen6) or closes (v0.5) the bracket from above.
	Upper float64
	// Precision ends the bisection once the bracket is this narrow, in
	// the target's unit.
	Precision float64
	// Delta is v0.5's lowering after a failed verification (fraction).
	Delta float64
	// VerifyRuns is v0.5's verifying run count (0: 5).
	VerifyRuns int
	// GoodputPercent, when set, makes the search a goodput search: a
	// trial passes when at least this percentage of its samples met the
	// settings' SLO (JudgeFor).
	GoodputPercent float64
	// Strategy is StrategyFull ("" too: every trial full length) or
	// StrategyScout (short trials bracket the peak, full-length ones
	// verify it).
	Strategy string
}

// Algorithm names.
const (
	AlgoFindPeak       = "loadgen6 FindPeakPerformance"
	AlgoV05Server      = "v0.5 binary search and 5 verifying runs"
	AlgoV05MultiStream = "v0.5 binary search over streams and 5 verifying runs"
)

// Units of a search's targets.
const (
	UnitQPS     = "queries/s"
	UnitStreams = "samples/query"
	// UnitSpeed is a sweep of a trace's replay speed: 2 is twice as fast.
	UnitSpeed = "x trace speed"
)

// Plan picks the algorithm for the settings' ruleset and scenario, under
// o.Strategy.
func Plan(s loadgen.Settings, o Options) (p Planner, algorithm, unit string, err error) {
	p, algorithm, unit, err = planFull(s, o)
	if err != nil {
		return nil, "", "", err
	}
	switch o.Strategy {
	case "", StrategyFull:
		return p, algorithm, unit, nil
	case StrategyScout:
		if algorithm != AlgoFindPeak {
			// v0.5 verifies already: only its bracketing is scouted.
			return scoutBoundary{p}, algorithm, unit, nil
		}
		p, err = NewScoutVerify(p, o.Precision)
		return p, algorithm, unit, err
	}
	return nil, "", "", fmt.Errorf("%w: strategy %q is not %q or %q", ErrConfig, o.Strategy, StrategyScout, StrategyFull)
}

// planFull is the algorithm itself, every trial full length.
func planFull(s loadgen.Settings, o Options) (p Planner, algorithm, unit string, err error) {
	for _, v := range []float64{o.Start, o.Upper, o.Precision, o.Delta} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, "", "", fmt.Errorf("%w: search options must be finite and not negative", ErrConfig)
		}
	}
	if o.VerifyRuns < 0 {
		return nil, "", "", fmt.Errorf("%w: verify runs %d", ErrConfig, o.VerifyRuns)
	}
	switch {
	case s.Scenario == trace.Server && s.Ruleset == loadgen.RulesetLoadGen6:
		if o.VerifyRuns > 0 || o.Delta > 0 {
			return nil, "", "", fmt.Errorf("%w: loadgen6's FindPeakPerformance has no verifying runs (verify runs and delta are v0.5's)", ErrConfig)
		}
		start := o.Start
		if start == 0 {
			start = s.ServerTargetQPS
		}
		p, err = NewFindPeak(FindPeakConfig{Start: start, StepSize: s.ServerFindPeakQPSBoundaryStepSize,
			Decimals: s.ServerFindPeakQPSDecimalsOfPrecision, Precision: o.Precision, Upper: o.Upper})
		return p, AlgoFindPeak, UnitQPS, err
	case s.Scenario == trace.Server && s.Ruleset == loadgen.RulesetV05:
		start := o.Start
		if start == 0 {
			start = s.ServerTargetQPS
		}
		p, err = NewVerify(VerifyConfig{Start: start, Upper: o.Upper, Precision: o.Precision, Delta: o.Delta, Runs: o.VerifyRuns})
		return p, AlgoV05Server, UnitQPS, err
	case s.Scenario == trace.MultiStream && s.Ruleset == loadgen.RulesetV05:
		start := o.Start
		if start == 0 {
			start = float64(s.MultiStreamSamplesPerQuery)
		}
		p, err = NewVerify(VerifyConfig{Start: start, Upper: o.Upper, Integer: true, Runs: o.VerifyRuns})
		return p, AlgoV05MultiStream, UnitStreams, err
	case s.Scenario == trace.MultiStream:
		return nil, "", "", fmt.Errorf("%w: loadgen6 has no MultiStream peak (LoadGen logs error_invalid_config); use ruleset v0.5", ErrConfig)
	}
	return nil, "", "", fmt.Errorf("%w: a peak search is for Server (QPS) or v0.5 MultiStream (streams), not %s", ErrConfig, s.Scenario)
}
