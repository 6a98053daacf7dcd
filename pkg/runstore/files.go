package runstore

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// The files a run may hold besides run.json. The names of the LoadGen logs,
// result.json and latency.hlog are pkg/runlog's; a peak search's record and
// summary pkg/search's.
const (
	SummaryFile       = "mlperf_log_summary.txt"
	DetailFile        = "mlperf_log_detail.txt"
	AccuracyFile      = "mlperf_log_accuracy.json"
	ResultFile        = "result.json"
	HlogFile          = "latency.hlog"
	ProgressFile      = "progress.json"
	SearchFile        = "search.json"
	SearchSummaryFile = "search_summary.txt"
	// EarlyVerdictFile is in a search's trial directory: why the search
	// stopped the trial (pkg/search's).
	EarlyVerdictFile = "early_verdict.json"
)

// runFiles is the allowlist of OpenFile, WriteFile and Files. A name must
// match exactly, which is what keeps a name from an URL from reaching any
// other file ("../x", "result.json/../../x" and absolute paths match none).
var runFiles = []string{SummaryFile, DetailFile, AccuracyFile, ResultFile, HlogFile, ProgressFile, SearchFile, SearchSummaryFile, EarlyVerdictFile}

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
func (s *Store) OpenFileIn(id, sub, name string) (*os.File, error) {
	if err := checkRunFile(name); err != nil {
		return nil, fmt.Errorf("runstore: %w", err)
	}
	if sub != "" {
		if err := checkFileName(sub); err != nil {
			return nil, fmt.Errorf("runstore: %w", err)
		}
	}
	dir := s.Dir(id)
	if dir == "" {
		return nil, fmt.Errorf("runstore: %w: %q", ErrNotFound, id)
	}
	// os.Root refuses to follow a symbolic link out of the run directory,
	// should one ever be planted there (sub included).
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("runstore: run %s: %w", id, err)
	}
	defer root.Close()
	if sub != "" {
		subRoot, err := root.OpenRoot(sub)
		if err != nil {
			return nil, fmt.Errorf("runstore: run %s: %w", id, err)
		}
		defer subRoot.Close()
		root = subRoot
	}
	f, err := root.Open(name)
	if err != nil {
		return nil, fmt.Errorf("runstore: run %s: %w", id, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("runstore: run %s: %w", id, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("runstore: run %s: %s is not a regular file: %w", id, name, fs.ErrNotExist)
	}
	return f, nil
}

// Files returns the names of the files run id has written, in the order of
// FileNames.
func (s *Store) Files(id string) ([]string, error) {
	dir := s.Dir(id)
	if dir == "" {
		return nil, fmt.Errorf("runstore: %w: %q", ErrNotFound, id)
	}
	var names []string
	for _, n := range runFiles {
		fi, err := os.Lstat(filepath.Join(dir, n))
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
