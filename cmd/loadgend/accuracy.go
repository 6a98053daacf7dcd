package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"

	"github.com/netloadgen/netloadgen/pkg/qsl"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/runner"
)

// runAccuracy runs the accuracy set once, every sample, every response
// logged: exit 0 when every sample answered, 1 when some did not, 2 when the
// run could not be carried out.
func runAccuracy(ctx context.Context, req runRequest, log *slog.Logger, stdout, stderr io.Writer) int {
	out, err := runner.RunAccuracy(ctx, req.spec, runner.Options{Logger: log})
	if _, ok := errors.AsType[*qsl.DataError](err); ok {
		err = fmt.Errorf("--data: %w", err)
	}
	if err != nil && (out == nil || out.Result == nil) {
		fmt.Fprintf(stderr, "loadgend run: %v\n", err)
		return exitError
	}
	res := out.Result
	fmt.Fprintf(stdout, "accuracy run: %d samples in %d sets, %d answered, %d failed; %s\n",
		res.SamplesIssued, res.Sets, res.SamplesCompleted, res.SamplesFailed, filepath.Join(req.spec.OutDir, runlog.AccuracyFile))
	for _, e := range res.Errors {
		fmt.Fprintf(stderr, "loadgend run: %s\n", e)
	}
	if err != nil {
		fmt.Fprintf(stderr, "loadgend run: %v\n", err)
		return exitError
	}
	if !res.Complete() {
		return exitInvalid
	}
	return exitValid
}
