package daemon

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/runner"
	"github.com/netloadgen/netloadgen/pkg/search"
)

// runSearch carries out a spec with a search block: trial after trial in
// subdirectories of the run's directory, search.json rewritten after each
// so GET /v1/runs/{id} lists the trials as they finish. The Outcome is the
// peak trial's result (the last trial's when there is no peak), whose logs
// the search copies to the run's directory.
func (s *Service) runSearch(ctx context.Context, a *activeRun, base runner.Spec, sp runner.Search, log *slog.Logger) (*runner.Outcome, error) {
	res, err := runner.FindPeak(ctx, base, sp, runner.SearchOptions{
		Options:  runner.Options{Logger: log, Started: func(r *loadgen.Run) { a.run.Store(r) }, Scraping: a.scraping, ServerQueue: a.noteServerQueue},
		Observer: s.met.Observer(),
		Starting: func(r search.TrialRequest, lo, hi float64, unit string) {
			// The status and the event stream's progress say which trial
			// runs, and in a scout search which stage (issue 33 #4).
			a.trial.Store(&api.SearchTrialProgress{Index: r.Index, Target: r.Target, Phase: string(r.Phase), Stage: r.Stage})
			if r.Stage != "" {
				s.sums.setSearchStage(a.id, r.Stage)
			}
			if unit == search.UnitQPS {
				if err := s.met.SetTargetQPS(r.Target); err != nil {
					log.Warn("metrics", "error", err)
				}
			}
			if err := s.met.SearchProgress(r.Index, lo, hi); err != nil {
				log.Warn("metrics", "error", err)
			}
		},
		Finished: func(_ search.Trial, res *search.Result) {
			// The trial's run is over: let it go before the next trial
			// generates its own, or both would be held at once.
			s.saveProgress(a)
			a.run.Store(nil)
			a.serverQueue.Store(nil) // the next trial's figure is its own
			s.sums.setSearch(a.id, res)
			s.notify(a.id)
		},
	})
	if res == nil || len(res.Trials) == 0 {
		return nil, err
	}
	pick := res.Trials[len(res.Trials)-1].Index
	if res.Found {
		pick = res.PeakTrial
	}
	r, lerr := runlog.Load(base.OutDir + "/" + search.TrialDir(pick))
	if lerr != nil {
		return nil, fmt.Errorf("the search ran %d trials but trial %d's result does not load: %w", len(res.Trials), pick, lerr)
	}
	if err != nil && ctx.Err() != nil {
		err = nil // cancelled or interrupted: the worker reports it from a.stoppedAs
	}
	return &runner.Outcome{Result: r}, err
}

// failedTailMs is where a tail latency in ms is a failed sample's
// (stats.FailedLatency: 9223372036854.775 ms), with float slack.
const failedTailMs = 9.2e12

// searchStatus is a search's trials so far and its answer (or its state
// while it runs) for the run's status.
func searchStatus(res *search.Result, id string) ([]api.Trial, *api.SearchStatus) {
	out := make([]api.Trial, 0, len(res.Trials))
	for _, t := range res.Trials {
		tr := api.Trial{
			Index: t.Index, RunID: id + "/" + t.Dir, Target: t.Target, Achieved: t.Achieved,
			TailLatencyMs: t.TailLatencyMs, Percentile: t.Percentile, Verdict: t.Verdict, DurationS: t.DurationS,
			Phase: string(t.Phase), Stage: t.Stage, MinDurationS: t.MinDurationS, Pass: t.Pass, LatencyBoundMs: t.LatencyBoundMs,
		}
		if l := t.Latency; l != nil {
			tr.LatencyMs = &api.TrialLatency{P50: l.P50, P90: l.P90, P99: l.P99}
		}
		if tr.TailLatencyMs >= failedTailMs {
			// A failed sample's INT64_MAX ns: -1, as LatencyMs says it.
			tr.TailLatencyMs = search.FailedPercentile
		}
		if l := t.LatencyAnswered; l != nil {
			tr.LatencyAnsweredMs = &api.TrialLatency{P50: l.P50, P90: l.P90, P99: l.P99}
		}
		tr.TailLatencyAnsweredMs, tr.FailedSamples = t.TailLatencyAnsweredMs, t.FailedSamples
		tr.OverBoundSamples = t.OverBound
		if c := t.Criteria; c != nil {
			tr.Criteria = &api.TrialCriteria{LatencyMet: c.LatencyMet, EarlyStoppingMet: c.EarlyStoppingMet,
				MinDurationMet: c.MinDurationMet, MinQueriesMet: c.MinQueriesMet, NoFailedSamples: c.NoFailedSamples}
		}
		tr.TokenLatencies, tr.Goodput = trialTokens(t)
		tr.RetryOf, tr.RetriedAs = t.RetryOf, t.RetriedAs
		out = append(out, tr)
	}
	st := &api.SearchStatus{
		Mode: res.Mode, Algorithm: res.Algorithm, Unit: res.Unit, JudgedBy: res.JudgedBy, Criterion: res.Criterion,
		GoodputPercent: res.GoodputPercent,
		Ended:          !res.Ended.IsZero(), EndReason: res.EndReason, Found: res.Found, Lower: res.Lower, Upper: res.Upper,
		Strategy: res.Strategy, MinDurationS: res.MinDurationS, FullLengthEquivalentS: res.FullLengthS,
	}
	for _, sg := range res.Stages {
		st.Stages = append(st.Stages, api.SearchStage{Stage: sg.Stage, Trials: sg.Trials, DurationS: sg.DurationS})
	}
	if t, ok := res.PeakRecord(); ok {
		st.Peak, st.Reported, st.Trial, st.TrialRunID = res.Peak, res.Reported, t.Index, id+"/"+t.Dir
		st.PeakRunValidity, st.PeakRunNotMet = res.PeakRunVerdict, res.PeakRunNotMet
	}
	return out, st
}

// trialTokens are a trial's token-latency and goodput figures for its
// status (nil where it has none).
func trialTokens(t search.Trial) (*api.TrialTokenLatencies, *api.TrialGoodput) {
	var tl *api.TrialTokenLatencies
	var g *api.TrialGoodput
	if k := t.TokenLatencies; k != nil {
		tl = &api.TrialTokenLatencies{TTFTMs: k.TTFTMs, TTFTBoundMs: k.TTFTBoundMs, TTFTMet: k.TTFTMet,
			TPOTMs: k.TPOTMs, TPOTBoundMs: k.TPOTBoundMs, TPOTMet: k.TPOTMet,
			TTFTAnsweredMs: k.TTFTAnsweredMs, TPOTAnsweredMs: k.TPOTAnsweredMs}
	}
	if k := t.Goodput; k != nil {
		g = &api.TrialGoodput{SamplesIssued: k.SamplesIssued, SamplesMeetingSLO: k.SamplesMeetingSLO, Percent: k.Percent}
	}
	return tl, g
}
