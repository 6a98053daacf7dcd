package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/netloadgen/netloadgen/pkg/runner"
	"github.com/netloadgen/netloadgen/pkg/search"
)

// Exit statuses of --mode find-peak (a contract for scripts): 0 a peak
// was found (and, under v0.5, all its verifying runs passed), 1 the search
// ended without one, 2 an error kept the search from finishing.
const (
	exitPeakFound = 0
	exitNoPeak    = 1
)

// findPeakFlags are the flags of --mode find-peak.
type findPeakFlags struct {
	opts         search.Options
	maxTrials    int
	earlyVerdict bool
}

func addFindPeakFlags(fs *flag.FlagSet) *findPeakFlags {
	f := &findPeakFlags{}
	fs.Float64Var(&f.opts.Start, "search-start", 0, "find-peak: first target (default: --target-qps for Server, --samples-per-query for MultiStream)")
	fs.Float64Var(&f.opts.Upper, "search-upper", 0, "find-peak: highest target (loadgen6: caps the widening; v0.5: closes the bracket)")
	fs.Float64Var(&f.opts.Precision, "search-precision", 0, "find-peak Server: stop bisecting once the bracket is this many QPS wide (default: loadgen6 server_find_peak_qps_decimals_of_precision, v0.5 1% of the lower bound)")
	fs.Float64Var(&f.opts.Delta, "search-delta", 0, "find-peak v0.5 Server: lower a candidate that failed verification by this fraction (default 0.01)")
	fs.IntVar(&f.opts.VerifyRuns, "verify-runs", 0, "find-peak v0.5: verifying runs that must all pass (default 5)")
	fs.IntVar(&f.maxTrials, "max-trials", 0, fmt.Sprintf("find-peak: give up after this many trials (default %d)", search.DefaultMaxTrials))
	fs.BoolVar(&f.earlyVerdict, "trial-early-verdict", true, "find-peak: stop a trial as soon as it can no longer pass (same answer, sooner)")
	return f
}

// check validates the find-peak flags against the whole request.
func (f *findPeakFlags) check(req runRequest) error {
	if req.mode != modeFindPeak {
		return nil
	}
	if f.maxTrials < 0 {
		return fmt.Errorf("--max-trials must not be negative, got %d", f.maxTrials)
	}
	if _, _, _, err := search.Plan(req.spec.Settings, f.opts); err != nil {
		return fmt.Errorf("--mode find-peak: %w", err)
	}
	return nil
}

// runFindPeak runs a peak search: each trial a full run with its logs in
// --out/trial-NNN, the search's record in --out/search.json and the table
// on stdout.
func runFindPeak(ctx context.Context, req runRequest, log *slog.Logger, stdout, stderr io.Writer) int {
	f := req.findPeak
	planner, algo, unit, err := search.Plan(req.spec.Settings, f.opts)
	if err != nil {
		fmt.Fprintf(stderr, "loadgend run: %v\n", err)
		return exitError
	}
	if req.spec.OutDir != "" {
		if err := os.MkdirAll(req.spec.OutDir, 0o755); err != nil {
			fmt.Fprintf(stderr, "loadgend run: --out: %v\n", err)
			return exitError
		}
	}
	trials := &search.NetworkTrials{Base: req.spec, Options: runner.Options{Logger: log}, EarlyVerdict: f.earlyVerdict || req.spec.Settings.Engine.EarlyVerdict}
	res, err := search.Run(ctx, search.Config{
		Planner: planner, Trials: trials, Dir: req.spec.OutDir, MaxTrials: f.maxTrials, Logger: log,
		Ruleset: string(req.spec.Settings.Ruleset), Scenario: req.spec.Settings.Scenario.String(), Algorithm: algo, Unit: unit,
		Starting: func(r search.TrialRequest, lo, hi float64) {
			fmt.Fprintf(stderr, "trial %d (%s): %g %s, bracket [%g, %g)\n", r.Index, r.Phase, r.Target, unit, lo, hi)
		},
	})
	if res != nil {
		fmt.Fprint(stdout, search.Summary(res))
		if req.spec.OutDir != "" {
			fmt.Fprintf(stdout, "logs: %s\n", req.spec.OutDir)
		}
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			err = errors.New("interrupted")
		}
		fmt.Fprintf(stderr, "loadgend run: find-peak: %v\n", err)
		return exitError
	}
	if res.Found {
		return exitPeakFound
	}
	return exitNoPeak
}
