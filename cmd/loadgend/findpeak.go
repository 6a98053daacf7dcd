package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
)

// findPeakFlags are the flags of --mode find-peak.
type findPeakFlags struct{}

func addFindPeakFlags(fs *flag.FlagSet) *findPeakFlags { return &findPeakFlags{} }

// check validates the find-peak flags against the whole request.
func (f *findPeakFlags) check(req runRequest) error { return nil }

// runFindPeak runs a peak search (issue: peak search).
func runFindPeak(ctx context.Context, req runRequest, log *slog.Logger, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "loadgend run: --mode find-peak:", errors.ErrUnsupported)
	return exitError
}
