package search

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"path/filepath"
	"slices"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
)

// DefaultMaxTrials bounds a search that gives no bound: LoadGen's own
// search has none, but a daemon must not run forever on a flaky endpoint.
const DefaultMaxTrials = 100

// Config is one search.
type Config struct {
	Planner Planner
	Trials  TrialRunner
	// Mode labels the record: ModeFindPeak (""), or ModeSweep.
	Mode string
	// Ruleset, Scenario, Algorithm and Unit label the record.
	Ruleset, Scenario, Algorithm, Unit string
	// Dir holds search.json, the summary and one subdirectory per trial;
	// "" writes nothing.
	Dir       string
	MaxTrials int // 0: DefaultMaxTrials
	Logger    *slog.Logger
	// Starting is called before each trial with the current bracket;
	// Finished after it with the record so far (search.json is written by
	// then). Both run on the search's goroutine.
	Starting func(req TrialRequest, lower, upper float64)
	Finished func(t Trial, r *Result)
	// Judge labels how the trials are judged (the TrialRunner judges
	// them); its zero value is the ruleset's (JudgedBy).
	Judge Judge
	// Retry runs again a trial that failed early and would bound the
	// search from above (zero: never, today's search).
	Retry Retry
	// TrialWarmupMs labels the record with each trial's warm-up (the
	// TrialRunner sends it).
	TrialWarmupMs uint64
	// Strategy labels the record (the Planner carries it out: Plan);
	// StrategyScout also stages the trials and holds the peak to a
	// full-length trial. MinDuration is a full-length trial's, for the
	// record's full-length equivalent.
	Strategy    string
	MinDuration time.Duration
}

// Record and summary file names in a search's directory, and the record of
// why the search stopped a trial early, in the trial's directory.
const (
	ResultFile       = "search.json"
	SummaryFile      = "search_summary.txt"
	EarlyVerdictFile = "early_verdict.json"
)

// TrialDir is trial i's subdirectory name.
func TrialDir(i int) string { return fmt.Sprintf("trial-%03d", i) }

// Run drives c.Planner trial by trial until it ends. The Result is returned
// (and written) even with an error: a trial that could not run, or ctx
// cancelled, ends the search with what it had.
func Run(ctx context.Context, c Config) (*Result, error) {
	if c.Planner == nil || c.Trials == nil {
		return nil, fmt.Errorf("%w: a planner and a trial runner are required", ErrConfig)
	}
	log := c.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	maxTrials := c.MaxTrials
	if maxTrials <= 0 {
		maxTrials = DefaultMaxTrials
	}
	mode := c.Mode
	if mode == "" {
		mode = ModeFindPeak
	}
	res := &Result{Mode: mode, Ruleset: c.Ruleset, Scenario: c.Scenario, Algorithm: c.Algorithm, Unit: c.Unit,
		JudgedBy: JudgedBy(c.Ruleset), Started: time.Now(), Trials: []Trial{}}
	if c.Judge.By != "" {
		res.JudgedBy = c.Judge.By
	}
	if c.Judge.By == JudgedByGoodput {
		slo := c.Judge.SLO
		res.GoodputPercent, res.SLO = c.Judge.GoodputPercent, &slo
	}
	res.Criterion = criterionText(res)
	res.TrialWarmupMs, res.RetryFailedTrials = c.TrialWarmupMs, c.Retry.Times
	res.Strategy, res.MinDurationS = c.Strategy, c.MinDuration.Seconds()
	sr := &searchRun{c: c, res: res, log: log, maxTrials: maxTrials}
	var runErr error
	for runErr == nil && res.EndReason == "" {
		step, ok := c.Planner.Next()
		if !ok {
			break
		}
		runErr = sr.step(ctx, step)
	}
	res.Ended = time.Now()
	res.DurationS = res.Ended.Sub(res.Started).Seconds()
	if res.EndReason == "" {
		conclude(res, c.Planner.Outcome())
	}
	if c.Dir != "" {
		if err := writeRecord(c.Dir, res); err != nil {
			return res, errors.Join(runErr, err)
		}
	}
	return res, runErr
}

// searchRun is one search under way: the driver's state between steps.
type searchRun struct {
	c         Config
	res       *Result
	log       *slog.Logger
	maxTrials int
}

// step runs the planner's step: one trial and, while it failed early and
// would bound the search from above, its retries (Config.Retry); the
// planner records the last attempt's verdict alone. An error, or max
// trials, ends the search (res.EndReason says why).
func (s *searchRun) step(ctx context.Context, step Step) error {
	retryOf := 0
	for attempt := 0; ; attempt++ {
		if len(s.res.Trials) >= s.maxTrials {
			s.res.EndReason = fmt.Sprintf("stopped after %d trials (max trials) before the search converged", s.maxTrials)
			return nil
		}
		t, tr, err := s.trial(ctx, step, retryOf)
		if err != nil {
			return err
		}
		_, hi := s.c.Planner.Bounds()
		retry := attempt < s.c.Retry.Times && len(s.res.Trials)+1 < s.maxTrials && s.c.Mode != ModeSweep &&
			step.Target < hi && s.c.Retry.failedEarly(tr)
		if retry {
			t.RetriedAs = t.Index + 1
			s.log.Info("trial failed early: running it again before it bounds the search", "trial", t.Index,
				"target", t.Target, "run_s", tr.runDuration().Seconds(), "early_verdict", t.EarlyVerdict)
			s.keep(t)
			retryOf = t.Index
			continue
		}
		s.c.Planner.Record(tr.Pass)
		if a, ok := s.c.Planner.(achievedRecorder); ok {
			a.RecordAchieved(step.Target, tr.Achieved)
		}
		s.keep(t)
		return nil
	}
}

// trial runs one trial of step (a retry of trial retryOf, 0: none) and
// returns its record; an error (or ctx ended) sets the end reason.
func (s *searchRun) trial(ctx context.Context, step Step, retryOf int) (Trial, TrialResult, error) {
	c, res := s.c, s.res
	req := TrialRequest{Index: len(res.Trials) + 1, Target: step.Target, Phase: step.Phase, Scout: step.Scout}
	if c.Strategy == StrategyScout {
		req.Stage = StageVerify
		if step.Scout {
			req.Stage = StageScout
		}
	}
	if c.Dir != "" {
		req.Dir = filepath.Join(c.Dir, TrialDir(req.Index))
	}
	lo, hi := c.Planner.Bounds()
	if c.Starting != nil {
		c.Starting(req, lo, hi)
	}
	s.log.Info("trial starting", "trial", req.Index, "phase", string(req.Phase), "target", req.Target, "lower", lo, "upper", hi, "retry_of", retryOf)
	tr, err := c.Trials.RunTrial(ctx, req)
	if err != nil {
		runErr := fmt.Errorf("trial %d at %v: %w", req.Index, req.Target, err)
		res.EndReason = "error: " + runErr.Error()
		if ctx.Err() != nil {
			res.EndReason = string(loadgen.StopCancelled)
			if errors.Is(context.Cause(ctx), loadgen.ErrInterrupted) {
				res.EndReason = string(loadgen.StopInterrupted)
			}
		}
		return Trial{}, tr, runErr
	}
	t := trialRecord(req, tr)
	t.RetryOf, t.Stage = retryOf, req.Stage
	if c.Dir != "" {
		t.Dir = TrialDir(req.Index)
	}
	return t, tr, nil
}

// keep adds t to the record, writes search.json and tells Finished.
func (s *searchRun) keep(t Trial) {
	c, res := s.c, s.res
	res.Trials = append(res.Trials, t)
	res.Criterion = criterionText(res)
	res.Lower, res.Upper = bracket(c.Planner)
	res.Stages, res.FullLengthS = stagesOf(res), float64(len(res.Trials))*res.MinDurationS
	s.log.Info("trial finished", "trial", t.Index, "target", t.Target, "pass", t.Pass, "verdict", t.Verdict,
		"tail_latency_ms", t.TailLatencyMs, "early_verdict", t.EarlyVerdict)
	if c.Dir != "" {
		if err := writeJSON(filepath.Join(c.Dir, ResultFile), res); err != nil {
			s.log.Warn("writing the search record", "error", err)
		}
	}
	if c.Finished != nil {
		c.Finished(t, res)
	}
}

func bracket(p Planner) (float64, float64) {
	lo, hi := p.Bounds()
	if math.IsInf(hi, 1) {
		hi = 0
	}
	return lo, hi
}

func trialRecord(req TrialRequest, tr TrialResult) Trial {
	return Trial{
		Index: req.Index, Phase: req.Phase, Target: req.Target, Pass: tr.Pass, Verdict: tr.Verdict,
		Achieved: tr.Achieved, Metric: tr.Metric, TailLatencyMs: float64(tr.TailLatency) / 1e6,
		Percentile: tr.Percentile, DurationS: tr.Duration.Seconds(), RunS: tr.RunDuration.Seconds(), EarlyVerdict: tr.EarlyVerdict,
		MinDurationS:   tr.MinDuration.Seconds(),
		LatencyBoundMs: float64(tr.LatencyBound) / 1e6, Criteria: tr.Criteria, Latency: tr.Latency, OverBound: tr.OverBound,
		TokenLatencies: tr.Tokens, Goodput: tr.Goodput,
		LatencyAnswered: tr.LatencyAnswered, FailedSamples: tr.FailedSamples, TailLatencyAnsweredMs: answeredMs(tr.TailAnswered),
	}
}

// answeredMs is an answered latency in ms, nil for none (negative).
func answeredMs(d time.Duration) *float64 {
	if d < 0 {
		return nil
	}
	v := float64(d) / 1e6
	return &v
}

// conclude fills the peak from the planner's outcome, and checks it against
// the trials themselves: a peak is reported only if the trials that back it
// passed at that very target, whatever the planner says.
func conclude(res *Result, o Outcome) {
	res.EndReason = o.Reason
	if !o.Found {
		return
	}
	checkPeak(res, o)
	if t, ok := res.PeakRecord(); ok {
		res.PeakRunVerdict, res.PeakRunNotMet = t.Verdict, NotMet(t.Criteria)
	}
}

// checkPeak is conclude's check of the planner's peak against the trials.
func checkPeak(res *Result, o Outcome) {
	n := len(res.Trials)
	if o.Verifying > 0 {
		if o.Verifying > len(lastDecisive(res.Trials, o.Verifying)) {
			res.EndReason = "internal: more verifying runs than trials; no peak reported"
			return
		}
		best := -1
		for _, i := range lastDecisive(res.Trials, o.Verifying) {
			t := res.Trials[i]
			if !t.Pass || t.Target != o.Peak || t.Phase != PhaseVerify {
				res.EndReason = fmt.Sprintf("internal: verifying trial %d did not pass at %v; no peak reported", t.Index, o.Peak)
				res.Verifying = nil
				return
			}
			res.Verifying = append(res.Verifying, t.Index)
			if best < 0 || t.Metric < res.Trials[best].Metric {
				best = i
			}
		}
		res.Found, res.Peak = true, o.Peak
		res.PeakTrial, res.Reported = res.Trials[best].Index, res.Trials[best].Metric
		return
	}
	for i := n - 1; i >= 0; i-- {
		// A scout search's peak is a full-length trial's, never a scout's.
		if t := res.Trials[i]; t.Pass && t.Target == o.Peak && t.Stage != StageScout {
			res.Found, res.Peak, res.PeakTrial, res.Reported = true, o.Peak, t.Index, t.Metric
			return
		}
	}
	res.EndReason = fmt.Sprintf("internal: no passing trial at %v; no peak reported", o.Peak)
}

// stagesOf is a scout search's time in each stage, in the order the stages
// began; nil for a full search.
func stagesOf(res *Result) []StageTime {
	var out []StageTime
	for _, t := range res.Trials {
		if t.Stage == "" {
			continue
		}
		i := slices.IndexFunc(out, func(s StageTime) bool { return s.Stage == t.Stage })
		if i < 0 {
			out = append(out, StageTime{Stage: t.Stage})
			i = len(out) - 1
		}
		out[i].Trials++
		out[i].DurationS += t.DurationS
	}
	return out
}
