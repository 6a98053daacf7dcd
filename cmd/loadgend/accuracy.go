package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
)

// accuracyFlags are the flags of --mode accuracy.
type accuracyFlags struct{}

func addAccuracyFlags(fs *flag.FlagSet) *accuracyFlags { return &accuracyFlags{} }

// check validates the accuracy flags against the whole request.
func (f *accuracyFlags) check(req runRequest) error { return nil }

// runAccuracy runs the accuracy set once (issue: accuracy and compliance).
func runAccuracy(ctx context.Context, req runRequest, log *slog.Logger, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "loadgend run: --mode accuracy:", errors.ErrUnsupported)
	return exitError
}
