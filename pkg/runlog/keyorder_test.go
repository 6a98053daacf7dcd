package runlog_test

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/internal/loadgenkeys"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// occasional reports whether key is one of the lines LoadGen writes where
// something happens (MLPERF_LOG_ERROR, MLPERF_LOG_WARNING), not in a fixed
// place.
func occasional(key string) bool {
	return strings.HasPrefix(key, "error_") || key == "warning_generic_message"
}

// checkLoadGenKeys compares a detail log's keys with LoadGen's for the run:
// LoadGen's keys, in its order, then only netloadgen_ keys; every
// occasional line after the settings and before the logger counters (where
// IssueQueries and the run's completions write theirs).
func checkLoadGenKeys(t *testing.T, lines []mllogLine, want loadgenkeys.Run) {
	t.Helper()
	var got []string
	ours := false
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l.Key, "netloadgen_"):
			ours = true
		case ours:
			t.Errorf("line %d: LoadGen key %s after netloadgen's keys", i+1, l.Key)
		case occasional(l.Key):
			if !slices.Contains(got, "generated_query_duration") || slices.Contains(got, "logger_swap_request_slots_retry_count") {
				t.Errorf("line %d: %s outside the run (after generated_query_duration, before the logger counters): after %v", i+1, l.Key, got)
			}
		default:
			got = append(got, l.Key)
		}
	}
	if w := loadgenkeys.Detail(want); !slices.Equal(got, w) {
		t.Errorf("LoadGen keys differ from LoadGen 6.0.17's (%+v):\n%s", want, keyDiff(got, w))
	}
}

// keyDiff shows two key lists side by side from their first difference.
func keyDiff(got, want []string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	var b strings.Builder
	b.WriteString("first difference at key " + strconv.Itoa(i) + "\n")
	for j := i; j < max(len(got), len(want)) && j < i+8; j++ {
		g, w := "-", "-"
		if j < len(got) {
			g = got[j]
		}
		if j < len(want) {
			w = want[j]
		}
		b.WriteString("  got " + g + "\twant " + w + "\n")
	}
	return b.String()
}

// TestDetailKeysAreLoadGens: a performance run of each scenario (and
// SingleStream and Server with token latencies) writes LoadGen 6.0.17's
// keys, key for key and in its order (internal/loadgenkeys, written from
// LoadGen's source), then netloadgen's own.
func TestDetailKeysAreLoadGens(t *testing.T) {
	const ttft, tokens = 2 * time.Millisecond, 21
	lat := ttft + 20*400*time.Microsecond
	tokenRun := func(s *loadgen.Settings) {
		s.UseTokenLatencies = true
		s.ServerTTFTLatencyNs, s.ServerTPOTLatencyNs = 5_000_000, 500_000
	}
	for _, tc := range []struct {
		name   string
		c      scenarioCase
		tokens bool
	}{
		{"SingleStream", scenarioCase{scenario: trace.SingleStream, latency: constLatency(50 * time.Microsecond)}, false},
		{"MultiStream", scenarioCase{scenario: trace.MultiStream, latency: constLatency(50 * time.Microsecond)}, false},
		{"Server", scenarioCase{scenario: trace.Server, latency: constLatency(time.Millisecond)}, false},
		{"Offline", scenarioCase{scenario: trace.Offline, latency: constLatency(200 * time.Millisecond)}, false},
		{"SingleStream tokens", scenarioCase{scenario: trace.SingleStream, latency: constLatency(lat),
			tokens: func(int) (time.Duration, int) { return ttft, tokens }, tweak: tokenRun}, true},
		{"Server tokens", scenarioCase{scenario: trace.Server, latency: constLatency(lat),
			tokens: func(int) (time.Duration, int) { return ttft, tokens },
			tweak: func(s *loadgen.Settings) { tokenRun(s); s.ServerTargetLatencyNs, s.ServerTargetQPS = 0, 2_000 }}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.name, tc.c.ruleset = tc.name, loadgen.RulesetLoadGen6
			run, res := execute(t, tc.c)
			dir := t.TempDir()
			if err := runlog.Write(dir, run, res, runlog.Options{Logger: quietLogger()}); err != nil {
				t.Fatalf("Write: %v", err)
			}
			checkLoadGenKeys(t, readDetail(t, dir), loadgenkeys.Run{
				Scenario: tc.c.scenario.String(), Tokens: tc.tokens, Invalid: !res.Valid})
			if tc.tokens != strings.Contains(readFile(t, filepath.Join(dir, runlog.DetailFile)), `"requested_use_token_latencies"`) {
				t.Errorf("requested_use_token_latencies present: %v, want %v", !tc.tokens, tc.tokens)
			}
		})
	}
}
