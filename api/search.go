package api

import (
	"math"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// maxVerifyRuns bounds Search.VerifyRuns: each is a full-length run.
const maxVerifyRuns = 10

// check bounds a search block as the daemon runs it (CheckFields has
// checked its mode); whether the daemon runs searches at all is
// Limits.AllowSearch.
func (s Search) check(scenario string, lim Limits) error {
	if sc, err := trace.ParseScenario(scenario); err == nil && sc != trace.Server {
		return fieldErr("search.mode", "%s varies the Server scenario's QPS; the scenario is %s", s.Mode, scenario)
	}
	for _, r := range s.Rates {
		if r > lim.MaxQPS {
			return fieldErr("search.rates", "%s QPS is over this daemon's limit of %s QPS", Num(r), Num(lim.MaxQPS))
		}
	}
	for _, b := range []struct {
		field string
		v     float64
	}{{"lower_qps", s.LowerQPS}, {"upper_qps", s.UpperQPS}, {"precision", s.Precision}} {
		if b.v < 0 {
			return fieldErr("search."+b.field, "must not be negative, got %v", b.v)
		}
		if b.v > lim.MaxQPS {
			return fieldErr("search."+b.field, "%s QPS is over this daemon's limit of %s QPS", Num(b.v), Num(lim.MaxQPS))
		}
	}
	if s.UpperQPS != 0 && s.LowerQPS >= s.UpperQPS {
		return fieldErr("search.lower_qps", "%v must be below upper_qps %v", s.LowerQPS, s.UpperQPS)
	}
	if w := s.TrialWarmupMs; w != nil && *w > uint64(lim.MaxDuration.Milliseconds()) {
		return fieldErr("search.trial_warmup_ms", "%d ms is over this daemon's limit of %d ms (%v)", *w, lim.MaxDuration.Milliseconds(), lim.MaxDuration)
	}
	if d := s.ScoutDurationMs; d > uint64(lim.MaxDuration.Milliseconds()) {
		return fieldErr("search.scout_duration_ms", "%d ms is over this daemon's limit of %d ms (%v)", d, lim.MaxDuration.Milliseconds(), lim.MaxDuration)
	}
	if s.VerifyRuns < 0 || s.VerifyRuns > maxVerifyRuns {
		return fieldErr("search.verify_runs", "must be in [0, %d], got %d", maxVerifyRuns, s.VerifyRuns)
	}
	return nil
}

// checkFields checks what a search block says on its own: its mode, and
// that a sweep has its rates and a peak search none.
func (s Search) checkFields() error {
	if s.MaxTrials < 0 {
		return fieldErr("search.max_trials", "must not be negative, got %d", s.MaxTrials)
	}
	if r := s.RetryFailedTrials; r != nil && (*r < 0 || *r > MaxRetryFailedTrials) {
		return fieldErr("search.retry_failed_trials", "must be in [0, %d] (0: never retry), got %d", MaxRetryFailedTrials, *r)
	}
	if g := s.GoodputPercent; g < 0 || g > 100 || math.IsNaN(g) {
		return fieldErr("search.goodput_percent", "must be a percentage in (0, 100], e.g. 90, got %v", g)
	}
	switch s.Mode {
	case SearchFindPeak:
		if err := s.checkStrategy(); err != nil {
			return err
		}
		if len(s.Rates) > 0 {
			return fieldErr("search.rates", "are a sweep's (mode %q); %s finds its own targets", SearchSweep, SearchFindPeak)
		}
		if s.StopSaturated {
			return fieldErr("search.stop_saturated", "is a sweep's (mode %q)", SearchSweep)
		}
		if len(s.TraceSpeeds) > 0 {
			return fieldErr("search.trace_speeds", "are a sweep's (mode %q)", SearchSweep)
		}
		return nil
	case SearchSweep:
		return s.checkSweep()
	}
	return fieldErr("search.mode", "%q is not %q or %q", s.Mode, SearchFindPeak, SearchSweep)
}

// checkSweep checks a sweep's rates, and that no peak search knob is set.
func (s Search) checkSweep() error {
	if len(s.TraceSpeeds) > 0 {
		return s.checkSpeeds()
	}
	if len(s.Rates) == 0 {
		return fieldErr("search.rates", "a sweep needs its rates (target QPS), e.g. [1000, 2000, 4000], or, replaying a trace, its trace_speeds")
	}
	if len(s.Rates) > MaxSweepRates {
		return fieldErr("search.rates", "%d rates; a sweep runs at most %d trials", len(s.Rates), MaxSweepRates)
	}
	for _, r := range s.Rates {
		if !(r > 0) || math.IsInf(r, 0) {
			return fieldErr("search.rates", "each rate must be a positive number of queries/s, got %v", r)
		}
	}
	return s.checkPeakKnobs()
}

// checkSpeeds checks a sweep of a trace's speeds: positive, bounded, no
// rates beside them, and no stop when saturated, which compares a rate.
func (s Search) checkSpeeds() error {
	if len(s.Rates) > 0 {
		return fieldErr("search.trace_speeds", "sweep rates or a trace's speeds: give one of rates and trace_speeds")
	}
	if len(s.TraceSpeeds) > MaxSweepRates {
		return fieldErr("search.trace_speeds", "%d speeds; a sweep runs at most %d trials", len(s.TraceSpeeds), MaxSweepRates)
	}
	for _, v := range s.TraceSpeeds {
		if !(v > 0) || v > MaxTraceSpeed {
			return fieldErr("search.trace_speeds", "each speed must be in (0, %d], got %v", MaxTraceSpeed, v)
		}
	}
	if s.StopSaturated {
		return fieldErr("search.stop_saturated", "compares a trial's completions with its rate: a sweep of trace speeds has none; leave it out")
	}
	return s.checkPeakKnobs()
}

// checkPeakKnobs refuses a peak search's knobs in a sweep.
func (s Search) checkPeakKnobs() error {
	for _, k := range []struct {
		field string
		set   bool
	}{{"lower_qps", s.LowerQPS != 0}, {"upper_qps", s.UpperQPS != 0}, {"precision", s.Precision != 0},
		{"verify_runs", s.VerifyRuns != 0}, {"delta", s.Delta != 0}, {"max_trials", s.MaxTrials != 0},
		{"goodput_percent", s.GoodputPercent != 0}, {"retry_failed_trials", s.RetryFailedTrials != nil && *s.RetryFailedTrials != 0},
		{"strategy", s.Strategy != ""}, {"scout_duration_ms", s.ScoutDurationMs != 0}} {
		if k.set {
			return fieldErr("search."+k.field, "is for mode %q; a sweep runs one trial per rate", SearchFindPeak)
		}
	}
	return nil
}

// checkStrategy checks a find-peak's strategy, and that a scout duration
// comes with the scout strategy.
func (s Search) checkStrategy() error {
	switch s.Strategy {
	case "", SearchScout:
		return nil
	case SearchFull:
		if s.ScoutDurationMs != 0 {
			return fieldErr("search.scout_duration_ms", "is the scout strategy's; strategy %q runs every trial at full length", SearchFull)
		}
		return nil
	}
	return fieldErr("search.strategy", "%q is not %q (short trials scout, full-length ones verify) or %q (every trial at full length, as LoadGen)", s.Strategy, SearchScout, SearchFull)
}
