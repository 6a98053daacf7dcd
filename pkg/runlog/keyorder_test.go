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
// occasional line between a run's generated_query_duration and its logger
// counters (where IssueQueries and the run's completions write theirs).
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
			if len(got) == 0 || got[len(got)-1] != "generated_query_duration" {
				t.Errorf("line %d: %s outside a run of queries (after generated_query_duration, before the logger counters): after %v", i+1, l.Key, got)
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
			tweak:  func(s *loadgen.Settings) { tokenRun(s); s.ServerTargetLatencyNs, s.ServerTargetQPS = 0, 2_000 }}, true},
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

// TestAccuracyDetailKeysAreLoadGens: an accuracy run's detail log has
// LoadGen's keys for RunAccuracyMode, one IssueQueries block per loadable
// set and no results, for every scenario; its failures are error lines in
// the last set's block, counted by the footer-only summary.
func TestAccuracyDetailKeysAreLoadGens(t *testing.T) {
	for _, sc := range []trace.Scenario{trace.SingleStream, trace.MultiStream, trace.Server, trace.Offline} {
		t.Run(sc.String(), func(t *testing.T) {
			s := settingsFor(t, scenarioCase{ruleset: loadgen.RulesetLoadGen6, scenario: sc})
			s.Mode = trace.AccuracyOnly
			sets, err := loadgen.AccuracySets(s, 600, 256) // three sets: 256, 256, 88
			if err != nil {
				t.Fatal(err)
			}
			start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			res := &loadgen.AccuracyResult{Scenario: sc.String(), SUTName: "in-memory (Network SUT)", Sets: len(sets),
				SamplesIssued: 600, SamplesCompleted: 599, SamplesFailed: 1, Errors: []string{"HTTP 503"}}
			for i := range sets {
				res.Spans = append(res.Spans, loadgen.AccuracySpan{Start: start.Add(time.Duration(i) * time.Second),
					End: start.Add(time.Duration(i)*time.Second + 900*time.Millisecond)})
			}
			dir := t.TempDir()
			err = runlog.WriteAccuracyLogs(dir, &runlog.AccuracyRun{Settings: s, QSLTotal: 600, QSLPerformance: 256,
				Sets: sets, Result: res, Start: start}, runlog.Options{Logger: quietLogger()})
			if err != nil {
				t.Fatal(err)
			}
			lines := readDetail(t, dir)
			checkLoadGenKeys(t, lines, loadgenkeys.Run{Scenario: sc.String(), Accuracy: true, Sets: len(sets)})
			if got := string(detailValue(t, lines, "effective_test_mode")); got != `"AccuracyOnly"` {
				t.Errorf("effective_test_mode = %s", got)
			}
			if got := string(detailValue(t, lines, "generated_query_count")); got != strconv.Itoa(len(sets[0].Queries)) {
				t.Errorf("generated_query_count = %s, want %d", got, len(sets[0].Queries))
			}
			if got := string(detailValue(t, lines, "power_begin")); got != `"01-02-2026 03:04:05.000"` {
				t.Errorf("power_begin = %s", got)
			}
			summary := readFile(t, filepath.Join(dir, runlog.SummaryFile))
			if summary != "\nNo warnings encountered during test.\n\n1 ERROR encountered. See detailed log.\n" {
				t.Errorf("summary %q: want LoadGen's footer alone, counting the failed sample", summary)
			}
		})
	}
}
