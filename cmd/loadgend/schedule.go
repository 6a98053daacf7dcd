package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/netloadgen/netloadgen/internal/suggest"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runspec"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// scheduleCommand prints the trace LoadGen 6.0.17 would generate for the
// given settings, in the reference-vector format (pkg/trace.Write). The
// settings are built as `loadgend run` builds them (runspec.Schedule: the
// same flags, defaults, confs and presets), so the trace is the one run
// issues with synthetic samples. Exit status 2 names a bad flag.
func scheduleCommand(args []string, stdout, stderr io.Writer) int {
	f := newScheduleFlags()
	err := f.fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(stdout, "usage: loadgend schedule [settings flags, as for loadgend run] [--stages ... [--arrivals ...] [--mix ...]]")
		f.fs.SetOutput(stdout)
		f.fs.PrintDefaults()
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "loadgend schedule: %v\n", suggest.FlagError(f.fs, err))
		return 2
	}
	ls, qsl, err := f.settingsOf()
	if err != nil {
		fmt.Fprintf(stderr, "loadgend schedule: %v\n", err)
		return 2
	}
	if f.shaped() {
		return f.printShaped(ls, stdout, stderr)
	}
	tr, err := trace.New(ls.TraceSettings(), qsl)
	if errors.Is(err, trace.ErrInvalidSettings) {
		fmt.Fprintf(stderr, "loadgend schedule: %v\n", err)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "loadgend schedule: %v\n", err)
		return 1
	}
	if err := trace.WriteSamples(stdout, tr, f.printed); err != nil {
		fmt.Fprintf(stderr, "loadgend schedule: writing the trace: %v\n", err)
		return 1
	}
	return 0
}

// scheduleFlags are run's settings flags (registered by the same code),
// --model for the conf files' lines, the trace settings run has no flag
// for, and how much of a query line to print.
type scheduleFlags struct {
	*specFlags
	settings settingsFlags
	printed  int
	shape    scheduleShape
}

func newScheduleFlags() *scheduleFlags {
	f := &scheduleFlags{specFlags: newSpecFlags()}
	o := &f.spec.Overrides
	f.addTraceFlags(&f.settings)
	f.addJudgeFlags(&f.settings)
	f.addIssuersFlag()
	f.str(&f.spec.Model, "model", "model", "", "the model whose lines of --mlperf-conf and --user-conf apply, as run's --model (default: only the lines for every model, *)")
	f.boolean(&o.PerformanceIssueSame, "issue-same", "settings.performance_issue_same", "performance_issue_same")
	f.uint(&o.PerformanceIssueSameIndex, "issue-same-index", "settings.performance_issue_same_index", "performance_issue_same_index (into the loaded set)")
	f.uint(&o.PerformanceSampleCountOverride, "performance-sample-count-override", "settings.performance_sample_count_override", "performance_sample_count_override (0 = the QSL's)")
	f.fs.IntVar(&f.printed, "max-printed-samples", trace.PrintedSamplesPerQuery, "QSL indices printed per query (0 = all; the reference vectors print 16)")
	return f
}

// settingsOf builds the parsed flags' settings with pkg/runspec, as run
// does, and the sample library's sizes. Errors name the flag.
func (f *scheduleFlags) settingsOf() (loadgen.Settings, trace.QSL, error) {
	if f.fs.NArg() > 0 {
		return loadgen.Settings{}, trace.QSL{}, fmt.Errorf("unexpected argument %q", f.fs.Arg(0))
	}
	if f.printed < 0 {
		return loadgen.Settings{}, trace.QSL{}, fmt.Errorf("--max-printed-samples must be 0 (all) or more, got %d", f.printed)
	}
	f.applySet()
	if err := f.settings.fill(&f.spec, f.set); err != nil {
		return loadgen.Settings{}, trace.QSL{}, err
	}
	ls, qsl, err := runspec.Schedule(f.spec, f.settings.env())
	if err != nil {
		return ls, qsl, f.explain(err)
	}
	if ls.PerformanceIssueUnique && ls.PerformanceIssueSame {
		return ls, qsl, errors.New("--issue-unique and --issue-same cannot both be set")
	}
	loaded := min(qsl.TotalSampleCount, qsl.PerformanceSampleCount)
	if ls.PerformanceSampleCountOverride != 0 {
		loaded = min(qsl.TotalSampleCount, ls.PerformanceSampleCountOverride)
	}
	if ls.PerformanceIssueSame && ls.PerformanceIssueSameIndex >= loaded {
		return ls, qsl, fmt.Errorf("--issue-same-index %d must be below the loaded sample count %d", ls.PerformanceIssueSameIndex, loaded)
	}
	return ls, qsl, nil
}
