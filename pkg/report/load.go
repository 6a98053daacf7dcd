package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/search"
)

// The files a report reads besides runlog's and search's.
const (
	// TimeSeriesFile is the run's per-second record.
	TimeSeriesFile = "timeseries.json"
	searchFile     = "search.json"
)

// ErrNoRun: a directory holds neither result.json nor search.json.
var ErrNoRun = errors.New("not a run directory")

// maxFileBytes bounds what is read of one file: a run's largest, the hlog
// of a long run, is well under it, and a report must not read a huge
// stray file whole.
const maxFileBytes = 256 << 20

// Source opens a run's files by name. A file the run does not have gives
// an error wrapping fs.ErrNotExist.
type Source interface {
	Open(name string) (io.ReadCloser, error)
}

// Dir is a run directory on disk.
type Dir string

// Open opens file name of the directory.
func (d Dir) Open(name string) (io.ReadCloser, error) {
	return os.Open(filepath.Join(string(d), name))
}

// Run is what a report shows of one run directory.
type Run struct {
	// Name is the run's label in the legend: its directory's base name.
	Name string
	// Result is result.json; nil for a search that found no peak (its
	// directory then holds search.json alone).
	Result   *loadgen.Result
	Failures []Failure
	// Spectrum is the latency percentile spectrum from latency.hlog (nil
	// without one).
	Spectrum *Spectrum
	Series   *TimeSeries
	Search   *search.Result
	// Notes say which sections are missing and why.
	Notes []string
}

// Failure is one kind of failure in result.json's failures.
type Failure struct {
	Outcome string `json:"outcome"`
	Status  string `json:"status"`
	Count   int64  `json:"count"`
	Example string `json:"example"`
}

// TimeSeries is timeseries.json: the run second by second.
type TimeSeries struct {
	IntervalNs int64    `json:"interval_ns"`
	Seconds    []Second `json:"seconds"`
	// fromHlog: built from latency.hlog's intervals for want of
	// timeseries.json: completed samples by issue time, nothing else.
	fromHlog bool
}

// Second is one interval of a TimeSeries; the latencies are nil when the
// interval has none.
type Second struct {
	Second        int64  `json:"second"`
	Issued        int64  `json:"issued"`
	Completed     int64  `json:"completed"`
	Failed        int64  `json:"failed"`
	P50Ns         *int64 `json:"p50_ns"`
	P99Ns         *int64 `json:"p99_ns"`
	LatenessP99Ns *int64 `json:"lateness_p99_ns"`
}

// Load reads the run in src, labelled name. A source without result.json
// and search.json is ErrNoRun; a file that is present but malformed is an
// error naming the file (the caller names the directory).
func Load(name string, src Source) (*Run, error) {
	r := &Run{Name: name}
	res, err := readFile(src, runlog.ResultFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fileErr(runlog.ResultFile, err)
	default:
		if r.Result, err = runlog.Decode(bytes.NewReader(res)); err != nil {
			return nil, fileErr(runlog.ResultFile, err)
		}
		// failures is decoded apart so that a result.json with or without
		// it reads the same way through loadgen.Result.
		var f struct {
			Failures []Failure `json:"failures"`
		}
		if err := json.Unmarshal(res, &f); err != nil {
			return nil, fileErr(runlog.ResultFile, fmt.Errorf("failures: %w", err))
		}
		r.Failures = f.Failures
	}
	if err := r.loadSearch(src); err != nil {
		return nil, err
	}
	if r.Result == nil && r.Search == nil {
		return nil, fmt.Errorf("%w: it has no %s or %s", ErrNoRun, runlog.ResultFile, searchFile)
	}
	if err := r.loadSpectrum(src); err != nil {
		return nil, err
	}
	if err := r.loadSeries(src); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Run) loadSearch(src Source) error {
	b, err := readFile(src, searchFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil {
		var s search.Result
		if err = strictJSON(b, &s); err == nil {
			r.Search = &s
			return nil
		}
	}
	return fileErr(searchFile, err)
}

func (r *Run) loadSpectrum(src Source) error {
	if r.Result == nil {
		return nil // a search without a peak: its trials hold the latencies
	}
	b, err := readFile(src, runlog.HlogFile)
	if errors.Is(err, fs.ErrNotExist) {
		r.Notes = append(r.Notes, fmt.Sprintf("no %s: the percentile spectrum is left out", runlog.HlogFile))
		return nil
	}
	if err == nil {
		r.Spectrum, err = readSpectrum(b)
	}
	if err != nil {
		return fileErr(runlog.HlogFile, err)
	}
	return nil
}

func (r *Run) loadSeries(src Source) error {
	if r.Result == nil {
		return nil
	}
	b, err := readFile(src, TimeSeriesFile)
	if errors.Is(err, fs.ErrNotExist) {
		if r.Spectrum != nil && r.Spectrum.Intervals != nil {
			r.Series = r.Spectrum.Intervals // the page says so beside the charts
			return nil
		}
		r.Notes = append(r.Notes, fmt.Sprintf("no %s: the charts over time are left out", TimeSeriesFile))
		return nil
	}
	if err == nil {
		var ts TimeSeries
		if err = strictJSON(b, &ts); err == nil {
			err = ts.check()
		}
		if err == nil {
			r.Series = &ts
			return nil
		}
	}
	return fileErr(TimeSeriesFile, err)
}

// check refuses what would draw nonsense: a time series whose seconds go
// backwards or whose counts are negative.
func (ts *TimeSeries) check() error {
	if ts.IntervalNs <= 0 {
		return fmt.Errorf("interval_ns %d: want a positive interval", ts.IntervalNs)
	}
	for i, s := range ts.Seconds {
		if i > 0 && s.Second <= ts.Seconds[i-1].Second {
			return fmt.Errorf("seconds[%d]: second %d does not follow %d", i, s.Second, ts.Seconds[i-1].Second)
		}
		if s.Issued < 0 || s.Completed < 0 || s.Failed < 0 {
			return fmt.Errorf("seconds[%d]: a negative count", i)
		}
	}
	return nil
}

// strictJSON decodes one JSON value of b into v, nothing after it.
func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("data after the JSON value")
	}
	return nil
}

func readFile(src Source, name string) ([]byte, error) {
	f, err := src.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxFileBytes {
		return nil, fmt.Errorf("larger than %d MiB", maxFileBytes>>20)
	}
	return b, nil
}

func fileErr(file string, err error) error {
	return fmt.Errorf("%s: %w", file, err)
}
