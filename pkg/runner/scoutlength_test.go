package runner

import (
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// The early-stopping minimum of queries of an estimate of the percentile
// at LoadGen's confidence (stats.PercentileEstimate.MinQueries), taken as
// facts here, not from the code under test.
const (
	minQueriesP90 = 64
	minQueriesP99 = 662
)

// A scout trial's length (scoutLength): 10% of the full trial, at least
// the early-stopping minimum of queries at the trial's rate, never longer
// than the full trial; an explicit length wins, capped the same way.
func TestScoutLength(t *testing.T) {
	server := func(qps, pct float64, minMs, minQueries uint64) loadgen.Settings {
		ls := loadgen.DefaultSettings(loadgen.RulesetLoadGen6)
		ls.Scenario = trace.Server
		ls.ServerTargetQPS, ls.ServerTargetLatencyPercentile = qps, pct
		ls.MinDurationMs, ls.MinQueryCount = minMs, minQueries
		return ls
	}
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	multi := loadgen.DefaultSettings(loadgen.RulesetLoadGen6)
	multi.Scenario = trace.MultiStream
	multi.MultiStreamTargetQPS, multi.MultiStreamTargetLatencyPercentile = 20, 0.90
	// Server's figures, which MultiStream must not use: they would give 1 s.
	multi.ServerTargetQPS, multi.ServerTargetLatencyPercentile = 1000, 0.99
	multi.MinDurationMs, multi.MinQueryCount = 10000, 1
	for _, c := range []struct {
		name     string
		ls       loadgen.Settings
		explicit time.Duration
		want     time.Duration
	}{
		{"p99 at 800 QPS, 10 s: 10% of the trial", server(800, 0.99, 10000, 100), 0, max(sec(1), sec(minQueriesP99/800.0))},
		{"p99 at 100 QPS, 10 s: the early-stopping minimum", server(100, 0.99, 10000, 100), 0, sec(minQueriesP99 / 100.0)},
		{"p99 at 100 QPS, 3 s: capped at the full trial", server(100, 0.99, 3000, 1), 0, sec(3)},
		{"explicit", server(800, 0.99, 10000, 100), 2 * time.Second, 2 * time.Second},
		{"explicit, shorter than the early-stopping minimum", server(100, 0.99, 10000, 100), 500 * time.Millisecond, 500 * time.Millisecond},
		{"explicit, capped at the full trial", server(800, 0.99, 10000, 100), 20 * time.Second, sec(10)},
		{"p90 at 1000 QPS, the query count makes the trial 50 s", server(1000, 0.90, 10000, 50000), 0, sec(5)},
		{"explicit, capped at the query count's full trial", server(1000, 0.90, 10000, 50000), time.Minute, sec(50)},
		{"MultiStream: its own rate and percentile", multi, 0, sec(minQueriesP90 / 20.0)},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := scoutLength(c.ls, c.explicit)
			if d := got - c.want; d < -time.Microsecond || d > time.Microsecond {
				t.Errorf("scout length %v, want %v", got, c.want)
			}
		})
	}
}

// The default trial warm-up is 10% of the trial's own minimum duration, at
// most 1 s: a scout trial's is short.
func TestDefaultTrialWarmupMs(t *testing.T) {
	for minMs, want := range map[uint64]uint64{3000: 300, 60000: 1000, 600000: 1000, 1000: 100, 5: 0} {
		if got := DefaultTrialWarmupMs(minMs); got != want {
			t.Errorf("min duration %d ms: warm-up %d ms, want %d", minMs, got, want)
		}
	}
}
