package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/netloadgen/netloadgen/pkg/atomicfile"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/search"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// networkTrials runs each trial as a full run of Base with the
// trial's target, writing its logs to the trial's directory.
type networkTrials struct {
	Base Spec
	// Options are passed to every run; Started sees each trial's engine run.
	Options Options
	// Observer, if set, watches every trial (live metrics).
	Observer loadgen.Observer
	// EarlyVerdict stops a trial once it can no longer pass.
	EarlyVerdict bool
	// Judge decides each trial (search.JudgeFor; zero: the ruleset's).
	Judge search.Judge
	// AtSpeed, when set, makes each trial's target a trace speed: the
	// trial replays the run's trace file at it (a sweep of speeds).
	AtSpeed func(speed float64) (trace.Shape, error)
	// WarmupMs, when set, replaces the base's engine.warmup_ms in every
	// trial (Search.TrialWarmupMs).
	WarmupMs *uint64
	// WarmupDefault, when set, warms each trial up for
	// DefaultTrialWarmupMs of its own minimum duration instead.
	WarmupDefault bool
	// ScoutDuration is a scout trial's minimum duration (0: scoutLength's
	// default).
	ScoutDuration time.Duration
}

// trialSpec is base with target applied: Server's target QPS, or
// MultiStream's samples per query.
func trialSpec(base Spec, target float64) (Spec, error) {
	s := base
	s.Settings.Mode = trace.PerformanceOnly
	switch s.Settings.Scenario {
	case trace.Server:
		s.Settings.ServerTargetQPS = target
	case trace.MultiStream:
		if target < 1 {
			return s, fmt.Errorf("%w: %v samples per query", search.ErrConfig, target)
		}
		s.Settings.MultiStreamSamplesPerQuery = uint64(target)
	default:
		return s, fmt.Errorf("%w: no peak search for %s", search.ErrConfig, s.Settings.Scenario)
	}
	return s, nil
}

// RunTrial runs one trial. Under v0.5 the engine's early verdict is exact
// for the search's verdict (it stops on failed samples or more samples
// over the bound than the percentile allows for the whole trial). Under
// loadgen6 the engine would also stop on early stopping, which
// FindPeakPerformance does not check, so the search stops the trial itself
// on the latency constraint alone (a stopper); with token latencies that
// constraint is TTFT and TPOT, and the stopper counts the samples over
// each token bound instead. A goodput trial runs to its end: its share of
// samples meeting the SLO is known only then, and the query latency the
// early verdicts watch decides nothing. (The engine ignores its own early
// verdict with token latencies, so a v0.5 token trial runs to its end too.)
func (n *networkTrials) RunTrial(ctx context.Context, req search.TrialRequest) (search.TrialResult, error) {
	spec, err := trialSpec(n.Base, req.Target)
	if n.AtSpeed != nil {
		// The trace at the trial's speed replaces the base's shape.
		spec = n.Base
		spec.Settings.Mode = trace.PerformanceOnly
		spec.Settings.Shape, err = n.AtSpeed(req.Target)
	}
	if err != nil {
		return search.TrialResult{}, err
	}
	spec.OutDir = req.Dir
	if req.Scout {
		// A short trial: its length alone, whatever the full trial's
		// query count would ask.
		spec.Settings.MinDurationMs = uint64(max(scoutLength(spec.Settings, n.ScoutDuration).Milliseconds(), 1))
		spec.Settings.MinQueryCount = 1
	}
	switch {
	case n.WarmupDefault:
		// Each trial warms its own connections at its own rate: a
		// transient of a cold start must not decide the search.
		spec.Settings.Engine.WarmupMs = DefaultTrialWarmupMs(spec.Settings.MinDurationMs)
	case n.WarmupMs != nil:
		spec.Settings.Engine.WarmupMs = *n.WarmupMs
	}
	early := n.EarlyVerdict && n.Judge.By != search.JudgedByGoodput
	own := early && spec.Settings.Ruleset == loadgen.RulesetLoadGen6 && spec.Settings.Scenario == trace.Server
	spec.Settings.Engine.EarlyVerdict = early && !own
	trialCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	opts := n.Options
	opts.Engine = append([]loadgen.Option(nil), opts.Engine...)
	var st *stopper
	obs := n.Observer
	if own {
		ls := spec.Settings
		st = &stopper{cancel: cancel, bound: time.Duration(ls.ServerTargetLatencyNs), next: obs,
			tokens: ls.UseTokenLatencies, ttftBound: time.Duration(ls.ServerTTFTLatencyNs), tpotBound: time.Duration(ls.ServerTPOTLatencyNs)}
		obs = st
		started := opts.Started
		opts.Started = func(r *loadgen.Run) {
			if err := st.plan(r); err != nil && n.Options.Logger != nil {
				n.Options.Logger.Warn("trial early verdict off", "error", err)
			}
			if started != nil {
				started(r)
			}
		}
	}
	if obs != nil {
		opts.Engine = append(opts.Engine, loadgen.WithObserver(obs))
	}
	start := time.Now()
	out, err := Run(trialCtx, spec, opts)
	if ctx.Err() != nil {
		return search.TrialResult{}, ctx.Err()
	}
	if err != nil {
		return search.TrialResult{}, err
	}
	tr := search.TrialResultOf(out.Result, time.Since(start), n.Judge)
	if st != nil && st.fired.Load() {
		tr.Pass, tr.Verdict = false, "INVALID"
		tr.EarlyVerdict = st.reason()
		if tr.Criteria != nil {
			// Cut short, the run's own figures do not show the failure the
			// stopper saw coming: the latency constraint cannot be met.
			c := *tr.Criteria
			c.LatencyMet = false
			tr.Criteria = &c
		}
		if req.Dir != "" {
			if err := writeEarlyVerdict(req.Dir, st.record()); err != nil {
				return tr, fmt.Errorf("writing the early verdict: %w", err)
			}
		}
	}
	return tr, nil
}

var errNoPlan = errors.New("no trace to plan against")

func writeEarlyVerdict(dir string, r record) error {
	return atomicfile.Write(dir, search.EarlyVerdictFile, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	})
}
