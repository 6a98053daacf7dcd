package runlog

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/mlperflog"
	"github.com/netloadgen/netloadgen/pkg/version"
)

// writeDetail writes mlperf_log_detail.txt with LoadGen 6.0.17's keys in
// its order: StartTest's version and identity keys, LogAllSettings, then
// RunPerformanceMode: the mode's generic_message, loaded_qsl_set,
// GenerateQueries' generated_* keys, the run's errors (IssueQueries logs
// its own before the rest), the logger's contention counters and
// power_begin/power_end (logged together once the queries are done), and
// PerformanceSummary::LogDetail's results; netloadgen's own keys come last.
// Times are offsets from the start of the timed run: setup keys at 0, the
// rest at its end. It fills s.Warnings and s.Errors from the lines written,
// for the summary's footer.
func writeDetail(w io.Writer, res *loadgen.Result, s *mlperflog.Summary, o *Options) error {
	pid := os.Getpid()
	d := mlperflog.NewDetailLog(w, mlperflog.DetailOptions{PID: pid, TID: pid})
	end := time.Duration(max(res.DurationNs, 0))
	req := requested(res)
	steps := []func() error{
		func() error { return d.LogVersion(0, buildVersion()) },
		func() error {
			return d.LogIdentity(0, mlperflog.Identity{
				TestDatetime: res.StartTime, SUTName: s.SUTName, QSLName: o.qslName(),
				QSLTotalCount: uint64(max(res.QSLTotalSampleCount, 0)), QSLPerformanceCount: uint64(max(res.QSLPerformanceSampleCount, 0)),
			})
		},
		func() error { return d.LogRequestedSettings(0, &req) },
		func() error { return d.LogEffectiveSettings(0, &s.Settings) },
		func() error { return d.LogModeStart(0, s.Settings.Mode) },
		func() error { return d.LogLoadedSet(0, res.LoadedSet) },
		func() error {
			return d.LogGenerated(0, uint64(max(res.GeneratedQueryCount, 0)), uint64(max(res.GeneratedSamplesPerQuery, 0)),
				time.Duration(res.GeneratedQueryDurationNs))
		},
		func() error { return runEvents(d, end, res, o.Rejudged) },
		func() error { return d.LogLoggerCounters(end) },
		func() error { return d.LogPowerBegin(end, res.StartTime) },
		func() error { return d.LogPowerEnd(end, res.EndTime) },
		func() error { return d.LogResults(end, s) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	s.Warnings, s.Errors = d.Warnings(), d.Errors()
	return nil
}

// runEvents writes the run's errors and warnings. LoadGen logs an early end
// as error_runtime; netloadgen adds its own failures the same way, so that
// num_errors and the summary footer show them.
func runEvents(d *mlperflog.DetailLog, at time.Duration, res *loadgen.Result, rejudged bool) error {
	var evs []event
	if tl := res.TokenLatencies; tl != nil {
		// LoadGen logs one per sample reported with fewer than two tokens.
		for range tl.FewTokenSamples {
			evs = append(evs, event{true, loadgen.FewTokensMessage})
		}
	}
	if rejudged {
		// The recorded run's own events are not the rejudged one's.
		return writeEvents(d, at, evs)
	}
	switch res.EndReason {
	case loadgen.StopCompleted:
	case loadgen.StopEarlyVerdict:
		// Deliberate: the verdict could no longer change.
		evs = append(evs, event{false, res.EndMessage})
	default:
		evs = append(evs, event{true, res.EndMessage})
	}
	if res.SamplesFailed > 0 {
		msg := fmt.Sprintf("%d samples failed (network or server errors)", res.SamplesFailed)
		if len(res.Errors) > 0 {
			msg += "; first: " + res.Errors[0]
		}
		evs = append(evs, event{true, msg})
	}
	if res.ProtocolErrors > 0 {
		evs = append(evs, event{false, fmt.Sprintf("%d completions matched no outstanding sample and were ignored", res.ProtocolErrors)})
	}
	if res.LateCompletions > 0 {
		evs = append(evs, event{false, fmt.Sprintf("%d completions arrived after the drain ended and were ignored", res.LateCompletions)})
	}
	if !res.CompliantLength {
		msg := "run length is shorter than the official minimum"
		for _, why := range res.NonCompliant {
			msg += "; " + why
		}
		evs = append(evs, event{false, msg})
	}
	return writeEvents(d, at, evs)
}

// event is one error_runtime or warning_generic_message line.
type event struct {
	isError bool
	msg     string
}

func writeEvents(d *mlperflog.DetailLog, at time.Duration, evs []event) error {
	for _, e := range evs {
		var err error
		if e.isError {
			err = d.Error(at, "error_runtime", e.msg)
		} else {
			err = d.Warning(at, "warning_generic_message", e.msg)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// requested rebuilds the requested_* settings from the Result.
func requested(res *loadgen.Result) mlperflog.Requested { return requestedOf(res.Requested) }

// requestedOf is the requested_* settings of r.
func requestedOf(r loadgen.Settings) mlperflog.Requested {
	ts := r.TraceSettings()
	// TraceSettings swaps in the test05 seeds, as the effective settings
	// do; the requested keys show what the user asked for.
	ts.QSLRNGSeed, ts.SampleIndexRNGSeed, ts.ScheduleRNGSeed = r.QSLRNGSeed, r.SampleIndexRNGSeed, r.ScheduleRNGSeed
	return mlperflog.Requested{
		Requested:                            ts,
		Mode:                                 r.Mode,
		ServerCoalesceQueries:                r.ServerCoalesceQueries,
		ServerFindPeakQPSDecimalsOfPrecision: r.ServerFindPeakQPSDecimalsOfPrecision,
		ServerFindPeakQPSBoundaryStepSize:    r.ServerFindPeakQPSBoundaryStepSize,
		ServerNumIssueQueryThreads:           r.ServerNumIssueQueryThreads,
		AccuracyLog:                          accuracyLogSettings(r),
		PrintTimestamps:                      r.PrintTimestamps,
		AccuracySampleCountOverride:          r.AccuracySampleCountOverride,
		UseTokenLatencies:                    r.UseTokenLatencies,
		ServerTTFTLatencyNs:                  r.ServerTTFTLatencyNs,
		ServerTPOTLatencyNs:                  r.ServerTPOTLatencyNs,
	}
}

// buildVersion fills LoadGen's version keys with netloadgen's own build
// (the submission checker does not compare them with LoadGen's).
func buildVersion() mlperflog.Version {
	v := mlperflog.Version{LoadgenVersion: "netloadgen " + version.String()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.time":
				v.GitCommitDate = s.Value
			case "vcs.revision":
				v.GitLogMessage = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					v.GitStatusMessage = "modified"
				}
			}
		}
	}
	return v
}
