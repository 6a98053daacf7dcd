package runstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// The files a run may hold besides run.json. The names of the LoadGen logs,
// result.json, latency.hlog, the time series and the spectrum are
// pkg/runlog's; a peak search's record and summary pkg/search's.
const (
	SummaryFile        = "mlperf_log_summary.txt"
	DetailFile         = "mlperf_log_detail.txt"
	AccuracyFile       = "mlperf_log_accuracy.json"
	ResultFile         = "result.json"
	HlogFile           = "latency.hlog"
	TimeseriesCSVFile  = "timeseries.csv"
	TimeseriesJSONFile = "timeseries.json"
	SpectrumFile       = "latency_spectrum.txt"
	// SamplesFile is the run's sample list, what `loadgend rejudge` reads.
	SamplesFile = "samples.txt"
	// SamplesJSONLFile is a generative run's per-sample export.
	SamplesJSONLFile  = "samples.jsonl"
	ProgressFile      = "progress.json"
	SearchFile        = "search.json"
	SearchSummaryFile = "search_summary.txt"
	// EarlyVerdictFile is in a search's trial directory: why the search
	// stopped the trial (pkg/search's).
	EarlyVerdictFile = "early_verdict.json"
	// ServerMetricsFile holds the server's metrics scraped during the run
	// (serverview.MetricsFile).
	ServerMetricsFile = "server_metrics.jsonl"
)

// runFiles is the allowlist of OpenFile, WriteFile and Files. A name must
// match exactly, which is what keeps a name from an URL from reaching any
// other file ("../x", "result.json/../../x" and absolute paths match none).
var runFiles = []string{SummaryFile, DetailFile, AccuracyFile, ResultFile, HlogFile, TimeseriesCSVFile, TimeseriesJSONFile, SpectrumFile, SamplesFile, SamplesJSONLFile, ProgressFile, SearchFile, SearchSummaryFile, EarlyVerdictFile, ServerMetricsFile}

// FileNames returns the names of the files a run may hold, in a fixed order.
func FileNames() []string { return slices.Clone(runFiles) }

func checkRunFile(name string) error {
	if !slices.Contains(runFiles, name) {
		return fmt.Errorf("%w: %q", ErrFileName, name)
	}
	return nil
}

// OpenFile opens file name of run id for reading. name must be one of
// FileNames; any other name, and any path, fails with ErrFileName. A file
// the run has not written fails with an error wrapping fs.ErrNotExist.
func (s *Store) OpenFile(id, name string) (*os.File, error) {
	return s.OpenFileIn(id, "", name)
}

// OpenFileIn is OpenFile for a file in sub, a subdirectory of the run's
// directory (a search's trial-NNN) named by a plain name; "" is the run's
// directory itself.
//
// Only a regular file inside the run's own directory is opened: the run's
// directory, sub and the file are each opened without following a symbolic
// link, through os.Root from the data directory's runs/, and any of them
// that is a link (or not a directory, or not a regular file) reads as
// absent, an error wrapping fs.ErrNotExist.
func (s *Store) OpenFileIn(id, sub, name string) (*os.File, error) {
	if err := checkRunFile(name); err != nil {
		return nil, fmt.Errorf("runstore: %w", err)
	}
	if sub != "" {
		if err := checkFileName(sub); err != nil {
			return nil, fmt.Errorf("runstore: %w", err)
		}
	}
	root, err := s.openRunRoot(id, sub)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := openRegular(root, name)
	if err != nil {
		return nil, fmt.Errorf("runstore: run %s: %w", id, err)
	}
	return f, nil
}

// openRunRoot opens run id's directory, and its subdirectory sub unless
// sub is "", as an os.Root, following no symbolic link on the way.
func (s *Store) openRunRoot(id, sub string) (*os.Root, error) {
	if s.Dir(id) == "" {
		return nil, fmt.Errorf("runstore: %w: %q", ErrNotFound, id)
	}
	runs, err := os.OpenRoot(s.runs)
	if err != nil {
		return nil, fmt.Errorf("runstore: run %s: %w", id, err)
	}
	defer runs.Close()
	root, err := openDir(runs, id)
	if err != nil {
		return nil, fmt.Errorf("runstore: run %s: %w", id, err)
	}
	if sub == "" {
		return root, nil
	}
	defer root.Close()
	subRoot, err := openDir(root, sub)
	if err != nil {
		return nil, fmt.Errorf("runstore: run %s: %w", id, err)
	}
	return subRoot, nil
}

// openDir opens directory name of parent, refusing a symbolic link: os.Root
// follows one that stays inside the root, so name is checked with Lstat,
// and what was opened is checked to be what was checked.
func openDir(parent *os.Root, name string) (*os.Root, error) {
	fi, err := parent.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory: %w", name, fs.ErrNotExist)
	}
	r, err := parent.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	if st, err := r.Stat("."); err != nil || !os.SameFile(fi, st) {
		r.Close()
		return nil, fmt.Errorf("%s was replaced while it was opened: %w", name, fs.ErrNotExist)
	}
	return r, nil
}

// openRegular opens file name of root if it is a regular file, not a
// symbolic link.
func openRegular(root *os.Root, name string) (*os.File, error) {
	fi, err := root.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file: %w", name, fs.ErrNotExist)
	}
	f, err := root.Open(name)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !os.SameFile(fi, st) {
		f.Close()
		return nil, fmt.Errorf("%s was replaced while it was opened: %w", name, fs.ErrNotExist)
	}
	return f, nil
}

// Files returns the names of the regular files run id has written, in the
// order of FileNames (a symbolic link is not listed, as OpenFile does not
// open it).
func (s *Store) Files(id string) ([]string, error) {
	root, err := s.openRunRoot(id, "")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var names []string
	for _, n := range runFiles {
		fi, err := root.Lstat(n)
		if err == nil && fi.Mode().IsRegular() {
			names = append(names, n)
		}
	}
	return names, nil
}

// WriteFile writes file name of run id atomically. name must be one of
// FileNames. It fails with ErrFinished once the run is terminal: a finished
// run's files are never rewritten. The check and the write happen under the
// run's lock, so a write never lands after the state change that ends it.
func (s *Store) WriteFile(id, name string, data []byte) error {
	if err := checkRunFile(name); err != nil {
		return fmt.Errorf("runstore: %w", err)
	}
	e, err := s.entry(id)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.rec.State.Terminal() {
		return fmt.Errorf("runstore: run %s: %w: it is %s", id, ErrFinished, e.rec.State)
	}
	if err := s.writeFile(filepath.Join(s.runs, id), name, data); err != nil {
		return fmt.Errorf("runstore: run %s: %w", id, err)
	}
	return nil
}
