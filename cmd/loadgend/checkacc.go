package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/netloadgen/netloadgen/internal/suggest"
	"github.com/netloadgen/netloadgen/pkg/compliance"
	"github.com/netloadgen/netloadgen/pkg/runner"
	"github.com/netloadgen/netloadgen/pkg/sut"
)

// accuracyCommand scores an accuracy log against a labels file: top-1 for
// classification outputs. Exit 0 at or above --min, 1 below, 2 on bad input.
func accuracyCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("accuracy", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var logPath, labelsPath, output, outputsPath string
	var minAcc float64
	fs.StringVar(&logPath, "log", "", "mlperf_log_accuracy.json (required)")
	fs.StringVar(&labelsPath, "labels", "", "labels: one integer class per line, line i for QSL index i (required)")
	fs.StringVar(&output, "output", "", "the output holding the scores (required when the log holds several)")
	fs.StringVar(&outputsPath, "outputs", "", "the outputs' layout (default: "+runner.OutputsFile+" beside the log; without one the data is one FP32 output)")
	fs.Float64Var(&minAcc, "min", 0, "fail (exit 1) below this top-1 accuracy: a fraction ≤ 1 (0.76) or a percentage > 1 (76)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fmt.Fprintln(stdout, "usage: loadgend accuracy --log FILE --labels FILE [--output NAME] [--min F]")
			fs.PrintDefaults()
			return 0
		}
		fmt.Fprintf(stderr, "loadgend accuracy: %v\n", suggest.FlagError(fs, err))
		return exitError
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "loadgend accuracy: %v\n", err)
		return exitError
	}
	switch {
	case fs.NArg() > 0:
		return fail(fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	case logPath == "":
		return fail(errors.New("--log is required"))
	case labelsPath == "":
		return fail(errors.New("--labels is required"))
	case !(minAcc >= 0 && minAcc <= 100):
		return fail(fmt.Errorf("--min %v: want a fraction in [0, 1] or a percentage in (1, 100]", minAcc))
	}
	if minAcc > 1 {
		minAcc /= 100
	}
	entries, err := readWith(logPath, compliance.ReadAccuracyLog)
	if err != nil {
		return fail(fmt.Errorf("--log: %w", err))
	}
	labels, err := readWith(labelsPath, compliance.ReadLabels)
	if err != nil {
		return fail(fmt.Errorf("--labels: %w", err))
	}
	layout, err := readLayout(outputsPath, logPath)
	if err != nil {
		return fail(fmt.Errorf("--outputs: %w", err))
	}
	res, err := compliance.Top1(entries, labels, layout, output)
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(stdout, "top-1 accuracy: %.4f%% (%d of %d samples", 100*res.Accuracy, res.Correct, res.Total)
	if res.Duplicates > 0 {
		fmt.Fprintf(stdout, "; %d duplicate entries ignored", res.Duplicates)
	}
	fmt.Fprintln(stdout, ")")
	if res.Total < len(labels) {
		fmt.Fprintf(stdout, "note: %d of the %d labelled samples are in the log\n", res.Total, len(labels))
	}
	if res.Accuracy < minAcc {
		fmt.Fprintf(stdout, "below --min %.4f%%\n", 100*minAcc)
		return exitInvalid
	}
	return exitValid
}

func readWith[T any](path string, read func(io.Reader) (T, error)) (T, error) {
	f, err := os.Open(path)
	if err != nil {
		var zero T
		return zero, err
	}
	defer f.Close()
	return read(f)
}

// readLayout reads the outputs' layout: the given file, else the one beside
// the log if there is one, else nil.
func readLayout(path, logPath string) ([]sut.OutputLayout, error) {
	if path == "" {
		path = filepath.Join(filepath.Dir(logPath), runner.OutputsFile)
		if _, err := os.Stat(path); err != nil {
			return nil, nil
		}
	}
	return readWith(path, func(r io.Reader) ([]sut.OutputLayout, error) {
		var l []sut.OutputLayout
		if err := json.NewDecoder(r).Decode(&l); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return l, nil
	})
}
