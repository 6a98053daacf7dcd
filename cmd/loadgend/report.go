package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/netloadgen/netloadgen/internal/suggest"
	"github.com/netloadgen/netloadgen/pkg/atomicfile"
	"github.com/netloadgen/netloadgen/pkg/report"
)

const reportUsage = `usage: loadgend report RUN_DIR [RUN_DIR...] [-o report.html] [--title TEXT]

One self-contained HTML page of the runs' files (result.json, latency.hlog,
timeseries.json, search.json): the verdict and its reasons, the latency
percentile spectrum, throughput, latency and issue lateness per second,
failures by kind and a search's trials, the runs overlaid in one colour each
(named by their directory). The page runs no script and fetches nothing.
The daemon serves the same page for a run: GET /v1/runs/{id}/report.html.

examples:
  loadgend report ./runs/r1 -o r1.html
  loadgend report ./runs/before ./runs/after -o compare.html

flags:
`

// reportCommand writes the HTML report of the run directories it is given.
// Flags may come before, between or after the directories.
func reportCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("o", "report.html", "the HTML file to write (also --out)")
	fs.StringVar(out, "out", "report.html", "the same as -o")
	title := fs.String("title", "", "the page's title (default \"netloadgen report\")")
	dirs, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, reportUsage)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return exitValid
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "loadgend report: %v\n", err)
		return exitError
	}
	if err != nil {
		return fail(suggest.FlagError(fs, err))
	}
	if len(dirs) == 0 {
		return fail(errors.New("no run directory given (usage: loadgend report RUN_DIR [RUN_DIR...] -o report.html)"))
	}
	if *out == "" {
		return fail(errors.New("-o: want a file name"))
	}
	runs := make([]*report.Run, 0, len(dirs))
	names := runNames(dirs)
	for i, d := range dirs {
		r, err := report.Load(names[i], report.Dir(d))
		if err != nil {
			return fail(fmt.Errorf("%s: %w", d, err))
		}
		runs = append(runs, r)
	}
	err = atomicfile.Write(filepath.Dir(*out), filepath.Base(*out), func(w io.Writer) error {
		return report.Write(w, runs, report.Options{Title: *title})
	})
	if err != nil {
		return fail(fmt.Errorf("-o %s: %w", *out, err))
	}
	fmt.Fprintf(stdout, "report: %s (%d runs)\n", *out, len(runs))
	return exitValid
}

// parseInterspersed parses fs's flags wherever they stand among args and
// returns the other arguments in order ("--" ends the flags).
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		left := fs.Args()
		if len(left) == 0 {
			return rest, nil
		}
		if n := len(args) - len(left); n > 0 && args[n-1] == "--" {
			return append(rest, left...), nil
		}
		rest = append(rest, left[0])
		args = left[1:]
	}
}

// runNames labels each directory by its base name, or by the path as given
// where two base names are the same.
func runNames(dirs []string) []string {
	seen := map[string]int{}
	for _, d := range dirs {
		seen[filepath.Base(filepath.Clean(d))]++
	}
	names := make([]string, len(dirs))
	for i, d := range dirs {
		names[i] = filepath.Base(filepath.Clean(d))
		if seen[names[i]] > 1 {
			names[i] = filepath.Clean(d)
		}
	}
	return names
}
