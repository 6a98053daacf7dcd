package runlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/netloadgen/netloadgen/pkg/atomicfile"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/mlperflog"
)

// The files Write creates in a run's directory.
const (
	SummaryFile  = "mlperf_log_summary.txt"
	DetailFile   = "mlperf_log_detail.txt"
	AccuracyFile = "mlperf_log_accuracy.json"
	ResultFile   = "result.json"
	HlogFile     = "latency.hlog"
	// The per-second time series (BuildTimeseries) and the exact latency
	// percentile spectrum (WriteSpectrum), from the run's record.
	TimeseriesCSVFile  = "timeseries.csv"
	TimeseriesJSONFile = "timeseries.json"
	SpectrumFile       = "latency_spectrum.txt"
	// SamplesFile is the run's sample list (loadgen.WriteSampleList): its
	// settings and each sample's latency, first-token latency and tokens,
	// what `loadgend rejudge` judges again.
	SamplesFile = "samples.txt"
	// SamplesJSONLFile is a generative run's per-sample export
	// (loadgen.Run.WriteSamples, the CLI's --samples-out): one JSON object
	// a line with each sample's times, tokens and status. Only a
	// generative run (Result.API) writes it: its rates are low enough
	// that it stays small, where a 10-minute run at 10,000 queries/s
	// would take about a gigabyte for what samples.txt already keeps.
	SamplesJSONLFile = "samples.jsonl"
)

// Options are what Write needs beyond the run and its result.
type Options struct {
	// SUTName overrides the Result's sut_name when set. A network run's
	// name should contain "Network SUT" for the submission checker.
	SUTName string
	// TargetURL and Model describe the server under test; they are written
	// in netloadgen's section of the summary and as netloadgen_ detail keys.
	TargetURL string
	Model     string
	// QSLName is the detail log's qsl_name (default "netloadgen QSL").
	QSLName string
	// AccuracyLogPath is an accuracy log already written elsewhere; Write
	// copies it in as mlperf_log_accuracy.json. Empty: an accuracy log
	// already in the directory is kept, and if there is none an empty one
	// (a performance run logs no responses) is written.
	AccuracyLogPath string
	// Extra are further key/value lines for netloadgen's section
	// (protocol, batching, ...); keys snake_case.
	Extra []mlperflog.Field
	// Rejudged: the result judges a recorded sample list again
	// (loadgen.Rejudge), so the recorded run's own events (an early end,
	// failures, the run-length warning) are not logged as this one's: the
	// logs hold what LoadGen would log of those samples.
	Rejudged bool
	// Logger receives progress and inconsistencies (default slog.Default()).
	Logger *slog.Logger
	// KeepSamples writes samples.jsonl, the per-sample export, for any
	// run (a generative run's is written anyway): the daemon's
	// keep_samples, for `loadgend run --coordinator --samples-out`.
	KeepSamples bool
}

func (o *Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.Default()
	}
	return o.Logger
}

func (o *Options) qslName() string {
	if o.QSLName == "" {
		return "netloadgen QSL"
	}
	return o.QSLName
}

// Write writes a finished run's files into dir (created if missing): the
// LoadGen summary, detail and accuracy logs, result.json, latency.hlog,
// timeseries.csv, timeseries.json, samples.txt and latency_spectrum.txt (a closed
// loop's, result.json and latency.hlog only: it is no MLPerf run).
// Each file is written to a temporary file in dir, fsynced and renamed into
// place, and dir is fsynced at the end, so a crash leaves every file either
// complete or absent (plus at most a temporary file named ".atomic-tmp-*").
//
// Call it after run.Execute has returned (it reads the run's record). run
// may be nil to rewrite the logs from a loaded result.json: the sample
// table then comes from the Result and latency.hlog, which needs the
// per-sample record, is not written, nor are the time series and the
// spectrum.
func Write(dir string, run *loadgen.Run, res *loadgen.Result, o Options) error {
	if res == nil {
		return fmt.Errorf("%w: nil", ErrInvalidResult)
	}
	log := o.logger()
	if res.ClosedLoop != nil {
		return writeClosedLoop(dir, run, res, log)
	}
	if res.LoadShape != nil {
		return writeShaped(dir, run, res, o.KeepSamples, log)
	}
	if !strings.Contains(sutName(res, &o), "Network SUT") {
		log.Warn("sut_name does not contain \"Network SUT\"; the submission checker expects it for a network run",
			"sut_name", sutName(res, &o))
	}
	summary, err := buildSummary(run, res, &o)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create run dir: %w", err)
	}
	// The detail log goes first: the summary's footer counts its errors
	// and warnings.
	if err := atomicfile.Write(dir, DetailFile, func(w io.Writer) error { return writeDetail(w, res, summary, &o) }); err != nil {
		return err
	}
	if err := atomicfile.Write(dir, SummaryFile, func(w io.Writer) error { return mlperflog.WriteSummary(w, summary) }); err != nil {
		return err
	}
	if err := writeAccuracy(dir, o.AccuracyLogPath); err != nil {
		return err
	}
	if err := writeResult(dir, res); err != nil {
		return err
	}
	if run != nil {
		if err := writeRecordFiles(dir, run, res, o.KeepSamples, true); err != nil {
			return err
		}
	} else {
		log.Info("no run record: latency.hlog, the time series and the spectrum not written", "dir", dir)
	}
	if err := atomicfile.SyncDir(dir); err != nil {
		return err
	}
	log.Debug("run files written", "dir", dir, "validity", res.Validity, "summary_valid", summary.Valid())
	return nil
}

// writeResult writes result.json.
func writeResult(dir string, res *loadgen.Result) error {
	return atomicfile.Write(dir, ResultFile, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		// A file for people and scripts, not a web page: "<redacted>"
		// as written, not \u003credacted\u003e.
		enc.SetEscapeHTML(false)
		return enc.Encode(res)
	})
}

// writeShaped writes a shaped run's files (a load shape: stages, a trace
// file, a mix): result.json and what the record gives (latency.hlog, the
// time series with the stages marked, the spectrum, samples.jsonl as for
// any run), but no LoadGen logs and no samples.txt. It is no LoadGen
// scenario: an mlperf_log_summary.txt would read as a Server result it is
// not, and `loadgend rejudge` would judge samples.txt by LoadGen's rules.
func writeShaped(dir string, run *loadgen.Run, res *loadgen.Result, keepSamples bool, log *slog.Logger) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create run dir: %w", err)
	}
	if err := writeResult(dir, res); err != nil {
		return err
	}
	if run != nil {
		if err := writeRecordFiles(dir, run, res, keepSamples, false); err != nil {
			return err
		}
	}
	log.Debug("load shape run files written (no LoadGen logs)", "dir", dir, "validity", res.Validity)
	return atomicfile.SyncDir(dir)
}

// writeRecordFiles writes the files only the run's per-sample record can
// give: latency.hlog, timeseries.csv and .json, samples.txt (with
// sampleList), latency_spectrum.txt, and for a generative run (or with
// keepSamples) samples.jsonl.
func writeRecordFiles(dir string, run *loadgen.Run, res *loadgen.Result, keepSamples, sampleList bool) error {
	if err := atomicfile.Write(dir, HlogFile, func(w io.Writer) error { return writeHlog(w, run, res) }); err != nil {
		return err
	}
	ts, err := BuildTimeseries(run, res)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(dir, TimeseriesCSVFile, ts.WriteCSV); err != nil {
		return err
	}
	if err := atomicfile.Write(dir, TimeseriesJSONFile, ts.WriteJSON); err != nil {
		return err
	}
	if sampleList {
		if err := atomicfile.Write(dir, SamplesFile, func(w io.Writer) error { return run.WriteSampleList(w, res) }); err != nil {
			return err
		}
	}
	if res.API != "" || keepSamples {
		if err := atomicfile.Write(dir, SamplesJSONLFile, run.WriteSamples); err != nil {
			return err
		}
	}
	return atomicfile.Write(dir, SpectrumFile, func(w io.Writer) error { return WriteSpectrum(w, run.Samples().Latencies()) })
}

// writeClosedLoop writes a closed-loop run's files: result.json and
// latency.hlog, and no LoadGen logs. A closed loop is not an MLPerf
// scenario; an mlperf_log_summary.txt would read as a SingleStream result
// that it is not, and a submission checker would take it for one.
func writeClosedLoop(dir string, run *loadgen.Run, res *loadgen.Result, log *slog.Logger) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create run dir: %w", err)
	}
	if err := atomicfile.Write(dir, ResultFile, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}); err != nil {
		return err
	}
	if run != nil {
		if err := atomicfile.Write(dir, HlogFile, func(w io.Writer) error { return writeHlog(w, run, res) }); err != nil {
			return err
		}
	}
	log.Debug("closed-loop run files written (no LoadGen logs)", "dir", dir)
	return atomicfile.SyncDir(dir)
}

// writeAccuracy places mlperf_log_accuracy.json: a copy of src, the one
// already in dir, or an empty log.
func writeAccuracy(dir, src string) error {
	dst := filepath.Join(dir, AccuracyFile)
	if src != "" {
		if same, err := sameFile(src, dst); err != nil {
			return fmt.Errorf("accuracy log: %w", err)
		} else if same {
			return nil
		}
		in, err := os.Open(src)
		if err != nil {
			return fmt.Errorf("open %s: %w", src, err)
		}
		defer in.Close()
		return atomicfile.Write(dir, AccuracyFile, func(w io.Writer) error {
			_, err := io.Copy(w, in)
			return err
		})
	}
	if _, err := os.Stat(dst); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("accuracy log: %w", err)
	}
	return atomicfile.Write(dir, AccuracyFile, func(w io.Writer) error {
		a, err := mlperflog.NewAccuracyLog(w)
		if err != nil {
			return err
		}
		return a.Close()
	})
}

// sameFile reports whether a and b are the same existing file; a missing b
// is not an error.
func sameFile(a, b string) (bool, error) {
	fa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	fb, err := os.Stat(b)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(fa, fb), nil
}
