package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/netloadgen/netloadgen/internal/suggest"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/runspec"
)

// rejudgeCommand writes the LoadGen logs a run with the samples of a
// sample list (a run's samples.txt, or a LoadGen token vector's input)
// and the given settings would have: "would this run pass with a TPOT
// bound of 40 ms?" without another hour of load. Exit 0 VALID, 1 INVALID,
// 2 error.
func rejudgeCommand(args []string, stdout, stderr io.Writer) int {
	f := newSpecFlags()
	fs := f.fs
	var sf settingsFlags
	var samples, out string
	fs.StringVar(&samples, "samples", "", "the sample list: a run's "+runlog.SamplesFile+" (required)")
	fs.StringVar(&out, "out", "", "directory for the summary, detail log and result.json (required)")
	// run's flags for what a run is judged by, registered by the same
	// code; the list records the rest (scenario, ruleset, its trace).
	f.addJudgeFlags(&sf)
	f.str(&f.spec.Model, "model", "model", "", "the model whose lines of --mlperf-conf and --user-conf apply, as run's --model (default: only the lines for every model, *)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			fmt.Fprintln(stderr, "usage: loadgend rejudge --samples FILE --out DIR [settings flags]")
			fs.PrintDefaults()
			return exitValid
		}
		fmt.Fprintf(stderr, "loadgend rejudge: %v\n", suggest.FlagError(fs, err))
		return exitError
	}
	f.applySet()
	res, err := rejudge(samples, out, f, &sf)
	if err != nil {
		fmt.Fprintf(stderr, "loadgend rejudge: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stdout, "%s\nlogs: %s\n", runlog.SummaryLine(res), out)
	if res.Valid {
		return exitValid
	}
	return exitInvalid
}

func rejudge(samples, out string, f *specFlags, sf *settingsFlags) (*loadgen.Result, error) {
	switch {
	case f.fs.NArg() > 0:
		return nil, fmt.Errorf("unexpected argument %q", f.fs.Arg(0))
	case samples == "":
		return nil, errors.New("--samples: give the sample list to judge (a run's " + runlog.SamplesFile + ")")
	case out == "":
		return nil, errors.New("--out: give the directory for the logs")
	}
	if err := sf.fill(&f.spec, f.set); err != nil {
		return nil, err
	}
	in, err := os.Open(samples)
	if err != nil {
		return nil, fmt.Errorf("--samples: %w", err)
	}
	defer in.Close()
	base, rec, err := loadgen.ReadSampleList(in, loadgen.DefaultSettings(loadgen.RulesetLoadGen6))
	if err != nil {
		return nil, fmt.Errorf("--samples %s: %w", samples, err)
	}
	s, err := runspec.RejudgeSettings(base, f.spec, sf.env())
	if err != nil {
		return nil, f.explain(err)
	}
	res, err := loadgen.Rejudge(s, rec)
	if err != nil {
		return nil, fmt.Errorf("--samples %s: %w", samples, err)
	}
	// Only errors: a sample list's SUT name need not be a network SUT's.
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := runlog.Write(out, nil, res, runlog.Options{Rejudged: true, Logger: log}); err != nil {
		return nil, err
	}
	return res, nil
}
