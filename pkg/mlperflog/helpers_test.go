package mlperflog

import (
	"math"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/stats"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// Official mlperf.conf seeds (LOADGEN-REFERENCE.md §1.2).
const (
	officialQSLSeed      = 2085463073848966840
	officialSampleSeed   = 2747215439041700203
	officialScheduleSeed = 16159082839903944936
)

// effective derives effective settings the way the engine will, through
// pkg/trace, so the tests exercise the real input path.
func effective(t *testing.T, mutate func(*trace.Requested)) Effective {
	t.Helper()
	req := trace.DefaultSettings()
	req.QSLRNGSeed = officialQSLSeed
	req.SampleIndexRNGSeed = officialSampleSeed
	req.ScheduleRNGSeed = officialScheduleSeed
	req.MinDurationMs = 10000
	mutate(&req)
	e, err := trace.EffectiveSettings(req, trace.QSL{TotalSampleCount: 1024, PerformanceSampleCount: 1024})
	if err != nil {
		t.Fatalf("EffectiveSettings: %v", err)
	}
	return Effective{Effective: e, Mode: trace.PerformanceOnly, AccuracySampleCount: 1024}
}

// referenceServerSummary is the run of LOADGEN-REFERENCE.md §6.1's example
// (null SUT, Server 1000 qps, 10 s, official seeds), with its numbers.
func referenceServerSummary(t *testing.T) *Summary {
	t.Helper()
	return &Summary{
		SUTName: "NullSUT",
		Settings: effective(t, func(s *trace.Requested) {
			s.Scenario = trace.Server
			s.ServerTargetQPS = 1000
		}),
		CompletedSamplesPerSecond: 1003.2614,
		ScheduledSamplesPerSecond: 1003.2651,
		MinDurationMet:            true,
		MinQueriesMet:             true,
		PerfConstraintsMet:        true,
		EarlyStopping: EarlyStopping{Server: &stats.ServerEarlyStopping{
			Met: true, Queries: 10034, OverLatency: 0, Required: 459}},
		QueryCount: 10034,
		SampleLatencies: LatencyStats{
			Min: 612, Max: 1333001, Mean: 58281,
			P: [6]time.Duration{61005, 78717, 88881, 96644, 118923, 264421},
		},
	}
}

func mathNaN() float64 { return math.NaN() }
func mathInf() float64 { return math.Inf(1) }
