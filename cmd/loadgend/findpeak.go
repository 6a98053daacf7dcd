package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/runner"
	"github.com/netloadgen/netloadgen/pkg/search"
)

// Exit statuses of --mode find-peak (a contract for scripts): 0 a peak
// was found (and, under v0.5, all its verifying runs passed), 1 the search
// ended without one, 2 an error kept the search from finishing. A sweep
// (--mode sweep) exits 0 once its trials ran (whatever their verdicts: it
// measures, it does not judge), 2 on an error.
const (
	exitPeakFound = 0
	exitNoPeak    = 1
	exitSweepDone = 0
)

// findPeakFlags are the flags of --mode find-peak: the spec's search block.
type findPeakFlags struct {
	s            api.Search
	earlyVerdict bool
	// scoutDuration is --scout-duration, which the spec takes in ms.
	scoutDuration time.Duration
}

func addFindPeakFlags(f *specFlags) *findPeakFlags {
	p := &findPeakFlags{s: api.Search{Mode: api.SearchFindPeak}}
	fs := f.fs
	fs.Float64Var(&p.s.LowerQPS, "search-start", 0, "find-peak: first target (default: --target-qps for Server, --samples-per-query for MultiStream)")
	fs.Float64Var(&p.s.UpperQPS, "search-upper", 0, "find-peak: highest target (loadgen6: caps the widening; v0.5: closes the bracket)")
	fs.Float64Var(&p.s.Precision, "search-precision", 0, "find-peak Server: stop bisecting once the bracket is this many QPS wide (default: loadgen6 server_find_peak_qps_decimals_of_precision, v0.5 1% of the lower bound)")
	fs.Float64Var(&p.s.Delta, "search-delta", 0, "find-peak v0.5 Server: lower a candidate that failed verification by this fraction (default 0.01)")
	fs.IntVar(&p.s.VerifyRuns, "verify-runs", 0, "find-peak v0.5: verifying runs that must all pass (default 5)")
	fs.IntVar(&p.s.MaxTrials, "max-trials", 0, fmt.Sprintf("find-peak: give up after this many trials (default %d)", search.DefaultMaxTrials))
	fs.Float64Var(&p.s.GoodputPercent, "goodput", 0, "find-peak: a goodput search, the highest Server QPS at which at least this percentage of samples meet --slo (e.g. 90)")
	fs.BoolVar(&p.earlyVerdict, "trial-early-verdict", true, "find-peak: stop a trial as soon as it can no longer pass (same answer, sooner)")
	f.uint(&p.s.TrialWarmupMs, "trial-warmup-ms", "search.trial_warmup_ms",
		"find-peak and sweep: warm each trial up at its own rate for this long, on the connections it then uses, before its timed run (default: --warmup-ms when given, else 10% of --min-duration-ms, at most 1000; 0: none)")
	retry := new(int)
	fs.IntVar(retry, "retry-failed-trials", 1, fmt.Sprintf("find-peak: run a trial that failed within a third of --min-duration-ms, and would so bound the search from above, again up to this many times before its failure stands (0: never, at most %d)", api.MaxRetryFailedTrials))
	f.optional("retry-failed-trials", "search.retry_failed_trials", func() { p.s.RetryFailedTrials = retry })
	// Set only when given, so that a spec without a strategy (the default,
	// scout) comes back without one from the command line CommandLine
	// writes.
	strategy := new(string)
	fs.StringVar(strategy, "search-strategy", api.SearchScout, fmt.Sprintf("find-peak: %q scouts the peak with short trials and verifies it with full-length ones (the peak is a rate whose full-length trial passed, in a fraction of the time); %q is LoadGen's own search, every trial at full length", api.SearchScout, api.SearchFull))
	f.optional("search-strategy", "search.strategy", func() { p.s.Strategy = *strategy })
	f.duration(&p.scoutDuration, "scout-duration", "search.scout_duration_ms",
		"find-peak --search-strategy scout: a scout trial's minimum duration (default: 10% of the full trial's, and at least the time the latency percentile's early-stopping minimum of queries takes at the trial's rate; never longer than the full trial)")
	for field, name := range map[string]string{"lower_qps": "search-start", "upper_qps": "search-upper", "precision": "search-precision",
		"delta": "search-delta", "verify_runs": "verify-runs", "max_trials": "max-trials", "early_verdict": "trial-early-verdict",
		"goodput_percent": "goodput"} {
		f.flagOf["search."+field] = name
	}
	return p
}

// search is the spec's search block; --early-verdict stops trials early
// too, whatever --trial-early-verdict says.
func (p *findPeakFlags) search(early *bool) (*api.Search, error) {
	s := p.s
	ev := p.earlyVerdict || (early != nil && *early)
	s.EarlyVerdict = &ev
	if d := p.scoutDuration; d < 0 || d%time.Millisecond != 0 {
		return nil, fmt.Errorf("--scout-duration: %v is not a whole, positive number of milliseconds (e.g. 2s or 500ms)", d)
	}
	s.ScoutDurationMs = uint64(p.scoutDuration / time.Millisecond)
	return &s, nil
}

// trialPhase is a trial's phase as the progress lines name it: a scout
// trial's is "scout bisect", as in the summary's table, so that a short
// trial is not read as a full-length one.
func trialPhase(r search.TrialRequest) string {
	if r.Stage == search.StageScout {
		return "scout " + string(r.Phase)
	}
	return string(r.Phase)
}

// runFindPeak runs a peak search or a sweep: each trial a full run with
// its logs in --out/trial-NNN, the record in --out/search.json and the
// table on stdout.
func runFindPeak(ctx context.Context, req runRequest, log *slog.Logger, stdout, stderr io.Writer) int {
	res, err := runner.FindPeak(ctx, req.spec, *req.search, runner.SearchOptions{
		Options: runner.Options{Logger: log},
		Starting: func(r search.TrialRequest, lo, hi float64, unit string) {
			if req.mode == modeSweep {
				n := len(req.search.Rates)
				if n == 0 {
					n = len(req.search.TraceSpeeds) // a sweep of a trace's speeds
				}
				fmt.Fprintf(stderr, "trial %d of %d: %g %s\n", r.Index, n, r.Target, unit)
				return
			}
			fmt.Fprintf(stderr, "trial %d (%s): %g %s, bracket [%g, %g)\n", r.Index, trialPhase(r), r.Target, unit, lo, hi)
		},
	})
	if errors.Is(err, search.ErrConfig) && res == nil {
		fmt.Fprintf(stderr, "loadgend run: --mode %s: %v\n", req.mode, err)
		return exitError
	}
	if res != nil {
		fmt.Fprint(stdout, search.Summary(res))
		fmt.Fprintln(stdout, logsLine(req.spec.OutDir, req.outDefault))
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			err = errors.New("interrupted")
		}
		fmt.Fprintf(stderr, "loadgend run: %s: %v\n", req.mode, err)
		return exitError
	}
	if req.mode == modeSweep {
		return exitSweepDone
	}
	if res.Found {
		return exitPeakFound
	}
	return exitNoPeak
}
