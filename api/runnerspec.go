package api

import (
	"math"
	"time"

	"github.com/netloadgen/netloadgen/pkg/runner"
)

// RunnerSpec is the spec as pkg/runner runs it, writing its files to
// outDir ("" writes none), with data resolved under dataRoot (ResolveData).
// A search is a driver over many such runs, so a spec with one has no
// single RunnerSpec.
func (s RunSpec) RunnerSpec(outDir, dataRoot string) (runner.Spec, error) {
	if s.Search != nil {
		return runner.Spec{}, fieldErr("search", "a search runs many trials; it has no single runner spec")
	}
	return s.runnerSpec(outDir, dataRoot)
}

// TrialBase is the spec a search's trials start from (each sets its own
// target and directory); for a spec without a search, RunnerSpec.
func (s RunSpec) TrialBase(outDir, dataRoot string) (runner.Spec, error) {
	return s.runnerSpec(outDir, dataRoot)
}

func (s RunSpec) runnerSpec(outDir, dataRoot string) (runner.Spec, error) {
	var data string
	if s.Data != "" {
		var err error
		if data, err = ResolveData(dataRoot, s.Data); err != nil {
			return runner.Spec{}, err
		}
	}
	if s.RequestTimeoutMs > uint64(math.MaxInt64/int64(time.Millisecond)) {
		return runner.Spec{}, fieldErr("request_timeout_ms", "too large: %d", s.RequestTimeoutMs)
	}
	ls, err := s.Settings()
	if err != nil {
		return runner.Spec{}, err
	}
	total, perf := s.TotalSamples, s.PerformanceSamples
	if total == 0 {
		total = DefaultSamples
	}
	if perf == 0 {
		perf = DefaultSamples
	}
	return runner.Spec{
		Target:             s.Target,
		Data:               data,
		Model:              s.Model,
		ModelVersion:       s.ModelVersion,
		Settings:           ls,
		BatchSize:          s.BatchSize,
		MaxInflight:        s.MaxInflight,
		Conns:              s.Conns,
		JSON:               s.JSON,
		RequestTimeout:     time.Duration(s.RequestTimeoutMs) * time.Millisecond,
		IssueSlack:         time.Duration(s.IssueSlackUs) * time.Microsecond,
		TotalSamples:       total,
		PerformanceSamples: perf,
		DataSeed:           s.DataSeed,
		SUTName:            s.SUTName,
		OutDir:             outDir,
	}, nil
}

// DefaultSamples is the synthetic library's size when a spec gives none,
// as `loadgend run`'s --total-samples and --performance-samples.
const DefaultSamples = 1024
