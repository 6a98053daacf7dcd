package search

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runner"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// NetworkTrials runs each trial as a full pkg/runner run of Base with the
// trial's target, writing its logs to the trial's directory.
type NetworkTrials struct {
	Base runner.Spec
	// Options are passed to every run; Started sees each trial's engine run.
	Options runner.Options
	// Observer, if set, watches every trial (live metrics).
	Observer loadgen.Observer
	// EarlyVerdict stops a trial once it can no longer pass.
	EarlyVerdict bool
}

// Passes is the verdict a search decides on. v0.5: the run is VALID.
// loadgen6: FindPeakPerformance checks only the latency constraint
// (loadgen.cc:1000-1033); netloadgen also requires no failed samples, since
// an endpoint that drops requests does not sustain the load.
func Passes(r *loadgen.Result) bool {
	if r.Ruleset == loadgen.RulesetV05 {
		return r.Valid
	}
	return r.PerfConstraintsMet && r.NoFailedSamples
}

// TrialSpec is base with target applied: Server's target QPS, or
// MultiStream's samples per query.
func TrialSpec(base runner.Spec, target float64) (runner.Spec, error) {
	s := base
	s.Settings.Mode = trace.PerformanceOnly
	switch s.Settings.Scenario {
	case trace.Server:
		s.Settings.ServerTargetQPS = target
	case trace.MultiStream:
		if target < 1 {
			return s, fmt.Errorf("%w: %v samples per query", ErrConfig, target)
		}
		s.Settings.MultiStreamSamplesPerQuery = uint64(target)
	default:
		return s, fmt.Errorf("%w: no peak search for %s", ErrConfig, s.Settings.Scenario)
	}
	return s, nil
}

// RunTrial runs one trial. Under v0.5 the engine's early verdict is exact
// for the search's verdict (it stops on failed samples or more samples
// over the bound than the percentile allows for the whole trial). Under
// loadgen6 the engine would also stop on early stopping, which
// FindPeakPerformance does not check, so the search stops the trial itself
// on the latency constraint alone (a stopper).
func (n *NetworkTrials) RunTrial(ctx context.Context, req TrialRequest) (TrialResult, error) {
	spec, err := TrialSpec(n.Base, req.Target)
	if err != nil {
		return TrialResult{}, err
	}
	spec.OutDir = req.Dir
	own := n.EarlyVerdict && spec.Settings.Ruleset == loadgen.RulesetLoadGen6 && spec.Settings.Scenario == trace.Server
	spec.Settings.Engine.EarlyVerdict = n.EarlyVerdict && !own
	trialCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	opts := n.Options
	opts.Engine = append([]loadgen.Option(nil), opts.Engine...)
	var st *stopper
	obs := n.Observer
	if own {
		st = &stopper{cancel: cancel, bound: time.Duration(spec.Settings.ServerTargetLatencyNs), next: obs}
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
	out, err := runner.Run(trialCtx, spec, opts)
	if ctx.Err() != nil {
		return TrialResult{}, ctx.Err()
	}
	if err != nil {
		return TrialResult{}, err
	}
	tr := resultOf(out.Result, time.Since(start))
	if st != nil && st.fired.Load() {
		tr.Pass, tr.Verdict = false, "INVALID"
		tr.EarlyVerdict = st.reason()
		if req.Dir != "" {
			if err := writeJSON(req.Dir+"/early_verdict.json", st.record()); err != nil {
				return tr, fmt.Errorf("writing the early verdict: %w", err)
			}
		}
	}
	return tr, nil
}

func resultOf(r *loadgen.Result, d time.Duration) TrialResult {
	tr := TrialResult{Pass: Passes(r), Verdict: r.Validity, Achieved: r.CompletedSamplesPerSec, Duration: d}
	switch r.Scenario {
	case trace.MultiStream.String():
		tr.Metric = float64(r.Effective.SamplesPerQuery)
		tr.Percentile = r.Effective.TargetLatencyPercentile
		tr.Achieved = float64(r.SamplesCompleted) / max(float64(r.DurationNs)/1e9, 1e-9)
		if at, ok := r.QueryLatency.At(tr.Percentile); ok {
			tr.TailLatency = at
		}
	default:
		tr.Metric = r.ScheduledSamplesPerSec
		tr.Percentile = r.Effective.TargetLatencyPercentile
		if at, ok := r.SampleLatency.At(tr.Percentile); ok {
			tr.TailLatency = at
		}
	}
	if ev := r.EarlyVerdict; ev != nil && ev.Stopped {
		tr.EarlyVerdict = ev.Reason
	}
	return tr
}

var errNoPlan = errors.New("no trace to plan against")
