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
	// Result is result.json, its failures by kind included; nil for a
	// search that found no peak (its directory then holds search.json
	// alone).
	Result *loadgen.Result
	// Spectrum is the latency percentile spectrum from latency.hlog (nil
	// without one).
	Spectrum *Spectrum
	// Series is timeseries.json, or for want of it latency.hlog's
	// intervals (SeriesFromHlog); nil without either.
	Series *runlog.Timeseries
	// SeriesFromHlog: Series holds the completed samples by the second
	// they were issued in, from latency.hlog, and nothing else.
	SeriesFromHlog bool
	Search         *search.Result
	// serverSeries are the server's metrics over the run, as drawn
	// (server_metrics.jsonl); nil without any.
	serverSeries *serverSeries
	// Notes say which sections are missing and why.
	Notes []string
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
		// One decoder for result.json: a malformed failures key makes the
		// file malformed (runlog.ErrMalformedResult), as it does for the
		// daemon and loadgend, rather than a page without the breakdown.
		if r.Result, err = runlog.Decode(bytes.NewReader(res)); err != nil {
			return nil, fileErr(runlog.ResultFile, err)
		}
	}
	if err := r.loadSearch(src); err != nil {
		return nil, err
	}
	if r.Result == nil && r.Search == nil {
		return nil, fmt.Errorf("%w: it has no %s or %s", ErrNoRun, runlog.ResultFile, search.ResultFile)
	}
	if err := r.loadSpectrum(src); err != nil {
		return nil, err
	}
	if err := r.loadSeries(src); err != nil {
		return nil, err
	}
	if err := r.loadServerMetrics(src); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Run) loadSearch(src Source) error {
	b, err := readFile(src, search.ResultFile)
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
	return fileErr(search.ResultFile, err)
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
	b, err := readFile(src, runlog.TimeseriesJSONFile)
	if errors.Is(err, fs.ErrNotExist) {
		if r.Spectrum != nil && r.Spectrum.Intervals != nil {
			r.Series, r.SeriesFromHlog = r.Spectrum.Intervals, true // the page says so beside the charts
			return nil
		}
		r.Notes = append(r.Notes, fmt.Sprintf("no %s: the charts over time are left out", runlog.TimeseriesJSONFile))
		return nil
	}
	if err == nil {
		var ts runlog.Timeseries
		if ts, err = runlog.DecodeTimeseries(bytes.NewReader(b)); err == nil {
			r.Series = &ts
			return nil
		}
	}
	return fileErr(runlog.TimeseriesJSONFile, err)
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
