package runlog

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/netloadgen/netloadgen/pkg/atomicfile"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/mlperflog"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// AccuracyRun is a finished accuracy run, what WriteAccuracyLogs needs.
type AccuracyRun struct {
	// Settings are the run's (Mode AccuracyOnly).
	Settings loadgen.Settings
	// QSLTotal and QSLPerformance are the counts the QSL reported.
	QSLTotal, QSLPerformance int
	// Sets are the run's loadable sets (loadgen.AccuracyRun.Sets).
	Sets   []loadgen.AccuracySet
	Result *loadgen.AccuracyResult
	// Start is when the run started (test_datetime).
	Start time.Time
}

// WriteAccuracyLogs writes an accuracy run's mlperf_log_detail.txt and
// mlperf_log_summary.txt into dir, as LoadGen's RunAccuracyMode leaves
// them: the detail log has StartTest's keys, the settings, "Starting
// accuracy mode", and for each set run its loaded_qsl_set, generated_*
// keys, logger counters and power_begin/power_end; no results (LoadGen
// judges no performance in accuracy mode), then netloadgen's own keys.
// The summary is the footer alone. Samples that failed are error_runtime
// lines, so the footer and the checker's error count show them.
func WriteAccuracyLogs(dir string, a *AccuracyRun, o Options) error {
	if a == nil || a.Result == nil {
		return fmt.Errorf("%w: no accuracy result", ErrInvalidResult)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create run dir: %w", err)
	}
	var warnings, errs int
	if err := atomicfile.Write(dir, DetailFile, func(w io.Writer) error {
		var err error
		warnings, errs, err = writeAccuracyDetail(w, a, &o)
		return err
	}); err != nil {
		return err
	}
	return atomicfile.Write(dir, SummaryFile, func(w io.Writer) error {
		return mlperflog.WriteSummaryFooter(w, warnings, errs)
	})
}

// writeAccuracyDetail writes the detail log; it returns the warnings and
// errors written.
func writeAccuracyDetail(w io.Writer, a *AccuracyRun, o *Options) (int, int, error) {
	pid := os.Getpid()
	d := mlperflog.NewDetailLog(w, mlperflog.DetailOptions{PID: pid, TID: pid})
	res := a.Result
	eff, err := accuracyEffective(a)
	if err != nil {
		return 0, 0, err
	}
	req := requestedOf(a.Settings)
	name := res.SUTName
	if o.SUTName != "" {
		name = o.SUTName
	}
	var end time.Duration
	if n := len(res.Spans); n > 0 {
		end = res.Spans[n-1].End.Sub(a.Start)
	}
	end = max(end, 0)
	steps := []func() error{
		func() error { return d.LogVersion(0, buildVersion()) },
		func() error {
			return d.LogIdentity(0, mlperflog.Identity{TestDatetime: a.Start, SUTName: name, QSLName: o.qslName(),
				QSLTotalCount: uint64(max(a.QSLTotal, 0)), QSLPerformanceCount: uint64(max(a.QSLPerformance, 0))})
		},
		func() error { return d.LogRequestedSettings(0, &req) },
		func() error { return d.LogEffectiveSettings(0, &eff) },
		func() error { return d.LogModeStart(0, trace.AccuracyOnly) },
		func() error { return accuracySets(d, a, eff.SamplesPerQuery) },
		func() error {
			return d.Log(end, "netloadgen_failed_samples", res.SamplesFailed)
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return 0, 0, err
		}
	}
	return d.Warnings(), d.Errors(), nil
}

// accuracySets writes each set run's keys, IssueQueries' order: the
// failures (as the run's error lines) go in the last set run, before its
// logger counters.
func accuracySets(d *mlperflog.DetailLog, a *AccuracyRun, spq uint64) error {
	res := a.Result
	for i, span := range res.Spans {
		if i >= len(a.Sets) {
			break
		}
		set := a.Sets[i]
		from, to := max(span.Start.Sub(a.Start), 0), max(span.End.Sub(a.Start), 0)
		if err := d.LogLoadedSet(from, set.Loaded); err != nil {
			return err
		}
		if err := d.LogGenerated(from, uint64(len(set.Queries)), spq, set.Duration); err != nil {
			return err
		}
		if i == len(res.Spans)-1 {
			if err := writeEvents(d, to, accuracyEvents(res)); err != nil {
				return err
			}
		}
		if err := d.LogLoggerCounters(to); err != nil {
			return err
		}
		if err := d.LogPowerBegin(to, span.Start); err != nil {
			return err
		}
		if err := d.LogPowerEnd(to, span.End); err != nil {
			return err
		}
	}
	return nil
}

// accuracyEvents are an accuracy run's error lines: how it ended early,
// and its failed samples.
func accuracyEvents(res *loadgen.AccuracyResult) []event {
	var evs []event
	switch {
	case res.Cancelled:
		evs = append(evs, event{true, "accuracy run cancelled before every set was issued"})
	case res.Stalled:
		evs = append(evs, event{true, "accuracy run stalled: some samples got no response within the drain timeout"})
	}
	if res.SamplesFailed > 0 {
		msg := fmt.Sprintf("%d samples failed (network or server errors)", res.SamplesFailed)
		if len(res.Errors) > 0 {
			msg += "; first: " + res.Errors[0]
		}
		evs = append(evs, event{true, msg})
	}
	return evs
}

// accuracyEffective is the run's effective settings, as LoadGen's
// TestSettingsInternal makes them from the settings and the QSL's counts.
func accuracyEffective(a *AccuracyRun) (mlperflog.Effective, error) {
	r := a.Settings
	e, err := trace.EffectiveSettings(r.TraceSettings(), trace.QSL{
		TotalSampleCount: uint64(max(a.QSLTotal, 0)), PerformanceSampleCount: uint64(max(a.QSLPerformance, 0))})
	if err != nil {
		return mlperflog.Effective{}, fmt.Errorf("%w: %w", ErrInvalidResult, err)
	}
	accuracyCount := uint64(max(a.QSLTotal, 0))
	if r.AccuracySampleCountOverride > 0 {
		accuracyCount = r.AccuracySampleCountOverride
	}
	return mlperflog.Effective{
		Effective: e, Mode: trace.AccuracyOnly, AccuracyLog: accuracyLogSettings(r), PrintTimestamps: r.PrintTimestamps,
		AccuracySampleCount: accuracyCount, UseTokenLatencies: r.UseTokenLatencies,
		ServerTTFTLatencyNs: r.ServerTTFTLatencyNs, ServerTPOTLatencyNs: r.ServerTPOTLatencyNs,
	}, nil
}
