package runner

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/search"
	"github.com/netloadgen/netloadgen/pkg/stats"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// Search makes a run a peak search over its Spec: the planner's options and
// the driver's own knobs.
type Search struct {
	Options search.Options
	// EarlyVerdict stops a trial as soon as it can no longer pass (same
	// answer, sooner).
	EarlyVerdict bool
	// MaxTrials bounds the trials; 0: search.DefaultMaxTrials.
	MaxTrials int
	// Rates, when set, make the search a load sweep (search.ModeSweep):
	// one Server trial per rate, in order, Options unused.
	Rates []float64
	// StopSaturated ends a sweep after a trial that completed less than
	// search.SaturatedShare of its rate.
	StopSaturated bool
	// TraceSpeeds, when set, make a sweep's trials replays of the run's
	// trace file at these speeds, in order (search.UnitSpeed), each
	// trial's shape opened by AtSpeed; Rates are then unused.
	TraceSpeeds []float64
	AtSpeed     func(speed float64) (trace.Shape, error)
	// TrialWarmupMs, when set, is every trial's warm-up (the engine's
	// warmup_ms per trial: its own rate, on the connections the trial
	// then uses; 0: none); nil leaves the base settings' warm-up.
	// runspec gives it its default (DefaultTrialWarmupMs).
	TrialWarmupMs *uint64
	// RetryFailed runs a trial that failed within a third of its minimum
	// duration, and would so bound the search from above, again up to
	// this many times before its failure stands (search.Retry; 0: never).
	RetryFailed int
	// TrialWarmupDefault, when set, warms each trial up for
	// DefaultTrialWarmupMs of its own minimum duration (a scout trial's is
	// short); TrialWarmupMs is then unused.
	TrialWarmupDefault bool
	// ScoutDuration is a scout trial's minimum duration with
	// Options.Strategy search.StrategyScout (0: scoutLength's default).
	ScoutDuration time.Duration
}

// MaxTrialWarmupMs caps the default trial warm-up: long enough for
// connections, caches and a JIT to settle, short beside a trial.
const MaxTrialWarmupMs = 1000

// DefaultTrialWarmupMs is a search trial's warm-up when none is asked for:
// 10% of the minimum duration, at most MaxTrialWarmupMs.
func DefaultTrialWarmupMs(minDurationMs uint64) uint64 {
	return min(MaxTrialWarmupMs, minDurationMs/10)
}

// DefaultScoutShare is a scout trial's default minimum duration as a share
// of the full trial's.
const DefaultScoutShare = 0.1

// scoutLength is a scout trial's minimum duration, ls being the trial's
// full-length settings: explicit when given, else DefaultScoutShare of the
// full trial (the longer of the minimum duration and the minimum query
// count at the trial's rate), and at least the time the percentile's
// early-stopping minimum of queries takes at that rate, so that the short
// trial's tail is an estimate LoadGen would make; never longer than the
// full trial.
func scoutLength(ls loadgen.Settings, explicit time.Duration) time.Duration {
	rate, pct := ls.ServerTargetQPS, ls.ServerTargetLatencyPercentile
	if ls.Scenario == trace.MultiStream {
		rate, pct = ls.MultiStreamTargetQPS, ls.MultiStreamTargetLatencyPercentile
	}
	full := time.Duration(ls.MinDurationMs) * time.Millisecond
	if rate > 0 {
		full = max(full, seconds(float64(ls.MinQueryCount)/rate))
	}
	if explicit > 0 {
		return min(explicit, full)
	}
	d := time.Duration(float64(full) * DefaultScoutShare)
	if f, err := stats.NewMinPassingFinder(pct, stats.EarlyStoppingConfidence); err == nil && rate > 0 {
		d = max(d, seconds(float64(f.MinQueries())/rate))
	}
	return min(d, full)
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// retryWithin is "early" for search.Retry: a third of the minimum
// duration (search.Retry says why).
func retryWithin(ls loadgen.Settings) time.Duration {
	return time.Duration(float64(time.Duration(ls.MinDurationMs)*time.Millisecond) * search.EarlyShare)
}

// SearchOptions observe a search.
type SearchOptions struct {
	// Options are passed to every trial's run; Started sees each trial's
	// engine run.
	Options
	// Observer, if set, watches every trial (live metrics).
	Observer loadgen.Observer
	// Starting is called before each trial with the current bracket and
	// the unit of the targets; Finished after it with the record so far.
	Starting func(req search.TrialRequest, lower, upper float64, unit string)
	Finished func(t search.Trial, r *search.Result)
}

// FindPeak carries out a peak search, the one driver `loadgend run --mode
// find-peak` and the daemon share: the planner for the settings' ruleset
// and scenario, then trial after trial, each a full run of base with the
// trial's target, its logs in base.OutDir's trial-NNN, the record in
// base.OutDir's search.json. A search that cannot be planned returns an
// error wrapping search.ErrConfig before anything is connected or written;
// otherwise the Result is returned even with an error, as search.Run.
//
// With s.Rates it is a load sweep instead: the same trials, records and
// logs, one per rate (search.ModeSweep).
func FindPeak(ctx context.Context, base Spec, s Search, o SearchOptions) (*search.Result, error) {
	planner, algo, unit, err := search.Plan(base.Settings, s.Options)
	mode := search.ModeFindPeak
	if s.Rates != nil || s.TraceSpeeds != nil {
		mode = search.ModeSweep
		planner, algo, unit, err = planSweep(base.Settings, s)
	}
	if err != nil {
		return nil, err
	}
	judge, err := search.JudgeFor(base.Settings, s.Options)
	if err != nil {
		return nil, err
	}
	if base.OutDir != "" {
		if err := os.MkdirAll(base.OutDir, 0o755); err != nil {
			return nil, err
		}
	}
	// Each trial is a Run, which scrubs its own text; the search's own log
	// lines quote the trials' errors.
	_, scr := scrubbing(base, Options{})
	c := search.Config{
		Planner: planner, Dir: base.OutDir, MaxTrials: s.MaxTrials, Logger: scr.Logger(o.Logger),
		Trials: &networkTrials{Base: base, Options: o.Options, Observer: o.Observer, EarlyVerdict: s.EarlyVerdict, Judge: judge,
			AtSpeed: speedsOnly(s), WarmupMs: s.TrialWarmupMs, WarmupDefault: s.TrialWarmupDefault, ScoutDuration: s.ScoutDuration},
		Ruleset: string(base.Settings.Ruleset), Scenario: base.Settings.Scenario.String(), Algorithm: algo, Unit: unit,
		Finished: o.Finished, Mode: mode, Judge: judge,
		Retry:         search.Retry{Times: s.RetryFailed, Within: retryWithin(base.Settings)},
		TrialWarmupMs: base.Settings.Engine.WarmupMs,
		Strategy:      s.Options.Strategy,
		MinDuration:   time.Duration(base.Settings.MinDurationMs) * time.Millisecond,
	}
	if mode == search.ModeFindPeak && c.Strategy == "" {
		c.Strategy = search.StrategyFull
	}
	switch {
	case s.TrialWarmupDefault:
		c.TrialWarmupMs = DefaultTrialWarmupMs(base.Settings.MinDurationMs)
	case s.TrialWarmupMs != nil:
		c.TrialWarmupMs = *s.TrialWarmupMs
	}
	if o.Starting != nil {
		c.Starting = func(req search.TrialRequest, lower, upper float64) { o.Starting(req, lower, upper, unit) }
	}
	return search.Run(ctx, c)
}

// planSweep is a sweep's planner: Server only, since a rate is Server's
// target QPS.
func planSweep(ls loadgen.Settings, s Search) (search.Planner, string, string, error) {
	if ls.Scenario != trace.Server {
		return nil, "", "", fmt.Errorf("%w: a sweep varies the Server scenario's rate, not %s's", search.ErrConfig, ls.Scenario)
	}
	if s.TraceSpeeds != nil {
		if s.AtSpeed == nil || ls.Shape == nil {
			return nil, "", "", fmt.Errorf("%w: a sweep of trace speeds needs a trace file to replay", search.ErrConfig)
		}
		// A trial's completions are the trace's, not a rate's: nothing
		// to call saturated.
		p, err := search.NewSpeedSweep(s.TraceSpeeds)
		return p, search.AlgoSweepSpeed, search.UnitSpeed, err
	}
	p, err := search.NewSweep(s.Rates, s.StopSaturated)
	return p, search.AlgoSweep, search.UnitQPS, err
}

// speedsOnly is s's AtSpeed for a sweep of trace speeds, nil otherwise.
func speedsOnly(s Search) func(float64) (trace.Shape, error) {
	if s.TraceSpeeds == nil {
		return nil
	}
	return s.AtSpeed
}
