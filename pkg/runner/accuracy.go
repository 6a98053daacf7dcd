package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/netloadgen/netloadgen/pkg/atomicfile"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/mlperflog"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/sut"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// Files of an accuracy run, beside runlog's mlperf_log_accuracy.json.
const (
	// OutputsFile describes the outputs in each logged response's bytes
	// (sut.OutputLayout, as JSON): what `loadgend accuracy --output` reads
	// to find one output.
	OutputsFile = "accuracy_outputs.json"
	// AccuracyResultFile is the accuracy run's counts (loadgen.AccuracyResult).
	AccuracyResultFile = "accuracy_result.json"
)

// AccuracyOutcome is a finished accuracy run.
type AccuracyOutcome struct {
	Result *loadgen.AccuracyResult
	Probe  *Probe
	// Layout describes the outputs in each entry's bytes.
	Layout []sut.OutputLayout
}

// RunAccuracy runs spec in accuracy mode: every sample of the accuracy set
// once, every response decoded and logged. With OutDir set it writes
// mlperf_log_accuracy.json, LoadGen's mlperf_log_detail.txt and
// mlperf_log_summary.txt of an accuracy run, accuracy_outputs.json and
// accuracy_result.json.
// An error means the run could not start or its files could not be written.
func RunAccuracy(ctx context.Context, spec Spec, o Options) (*AccuracyOutcome, error) {
	o, scr := scrubbing(spec, o)
	out, err := executeAccuracy(ctx, spec, o)
	return out, scr.Error(err)
}

func executeAccuracy(ctx context.Context, spec Spec, o Options) (*AccuracyOutcome, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	spec.Settings.Mode = trace.AccuracyOnly
	ss, err := open(ctx, spec, true)
	if err != nil {
		return nil, err
	}
	defer ss.conn.probe.Close()
	defer ss.close()
	run, err := loadgen.NewAccuracyRun(spec.Settings, ss.sut.SUT(), accuracyQSL{ss.lib}, append([]loadgen.Option{loadgen.WithLogger(log)}, o.Engine...)...)
	if err != nil {
		return nil, err
	}
	samples := 0
	for _, set := range run.Sets() {
		samples += set.End
	}
	log.Info("accuracy run starting", "target", ss.t.URL, "model", spec.Model, "scenario", spec.Settings.Scenario.String(),
		"sets", len(run.Sets()), "samples", samples)
	start := time.Now()
	res, err := run.Execute(ctx)
	if err != nil {
		return nil, err
	}
	out := &AccuracyOutcome{Result: res, Probe: ss.pr, Layout: ss.sut.Layout()}
	if spec.OutDir != "" {
		if err := os.MkdirAll(spec.OutDir, 0o755); err != nil {
			return out, fmt.Errorf("writing the run's files: %w", err)
		}
		if err := WriteAccuracyLog(spec.OutDir, res.Entries, out.Layout, accuracyTokens(spec.Settings)); err != nil {
			return out, fmt.Errorf("writing the run's files: %w", err)
		}
		// LoadGen's detail log and summary of an accuracy run.
		if err := runlog.WriteAccuracyLogs(spec.OutDir, &runlog.AccuracyRun{
			Settings: run.Settings(), QSLTotal: ss.lib.TotalSampleCount(), QSLPerformance: ss.lib.PerformanceSampleCount(),
			Sets: run.Sets(), Result: res, Start: start,
		}, runlog.Options{Logger: log}); err != nil {
			return out, fmt.Errorf("writing the run's files: %w", err)
		}
		if err := atomicfile.Write(spec.OutDir, AccuracyResultFile, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(res)
		}); err != nil {
			return out, fmt.Errorf("writing the run's files: %w", err)
		}
		if err := atomicfile.SyncDir(spec.OutDir); err != nil {
			return out, fmt.Errorf("writing the run's files: %w", err)
		}
	}
	return out, nil
}

// accuracyTokens is the accuracy log's token fields for the settings, as
// LoadGen chooses them.
func accuracyTokens(s loadgen.Settings) mlperflog.AccuracyTokens {
	return mlperflog.AccuracyTokensFor(s.UseTokenLatencies, s.Scenario == trace.Offline)
}

// WriteAccuracyLog writes entries as dir/mlperf_log_accuracy.json in
// LoadGen's format, with the token fields tokens says (token_count,
// token_data), and, when layout is known, dir/accuracy_outputs.json.
func WriteAccuracyLog(dir string, entries []loadgen.AccuracyEntry, layout []sut.OutputLayout, tokens mlperflog.AccuracyTokens) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	err := atomicfile.Write(dir, runlog.AccuracyFile, func(w io.Writer) error {
		a, err := mlperflog.NewAccuracyLogTokens(w, tokens)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if err := a.AddTokens(uint64(e.SeqID), uint64(e.QSLIndex), e.Data, e.TokenData, e.TokenCount); err != nil {
				return err
			}
		}
		return a.Close()
	})
	if err != nil || layout == nil {
		return err
	}
	return atomicfile.Write(dir, OutputsFile, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(layout)
	})
}

// accuracyQSL loads each accuracy set into the library; requests are
// encoded as they are issued (latency does not count in accuracy mode).
type accuracyQSL struct{ lib sampleSet }

func (a accuracyQSL) TotalSampleCount() int       { return a.lib.TotalSampleCount() }
func (a accuracyQSL) PerformanceSampleCount() int { return a.lib.PerformanceSampleCount() }
func (a accuracyQSL) Load(ctx context.Context, indices []int) error {
	return a.lib.Load(ctx, indices)
}
