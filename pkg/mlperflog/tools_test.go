package mlperflog

import (
	"bufio"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/stats"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// The patterns compliance/TEST04/verify_performance.py applies to the
// summary, as LOADGEN-REFERENCE.md §6.5 quotes them. Python's re.match
// anchors at the start of the line; so does a leading ^ on one line here.
var (
	reScenario   = regexp.MustCompile(`^Scenario`)
	reResultIs   = regexp.MustCompile(`^Result is`)
	reSSEstimate = regexp.MustCompile(`.*Early stopping (90th|90.0th|99.9th) percentile estimate`)
	reMSEstimate = regexp.MustCompile(`.*Early stopping (99th|99.0th) percentile estimate`)
	reCompleted  = regexp.MustCompile(`^Completed samples per second`)
	// As quoted, "(ns)" is a regex group: the pattern needs "target_latency ns"
	// and matches no line of LoadGen's summary either.
	reTargetLatencyAsQuoted = regexp.MustCompile(`^target_latency (ns)`)
	reTargetLatencyLiteral  = regexp.MustCompile(`^target_latency \(ns\)`)
	reOfflineSamples        = regexp.MustCompile(`^Samples per second`)
	reErrors                = regexp.MustCompile(`^\d+ ERROR`)
)

// test04Reading is what TEST04's script takes from one summary.
type test04Reading struct {
	mode, score, result, targetLatency string
	errorLines                         int
	targetLatencyAsQuoted              int
}

// readAsTest04 walks the summary line by line as verify_performance.py does:
// the value is what follows the first ": ", stripped.
func readAsTest04(t *testing.T, summary string) test04Reading {
	t.Helper()
	var r test04Reading
	value := func(line string) string {
		_, v, ok := strings.Cut(line, ": ")
		if !ok {
			t.Fatalf("line %q has no \": \"", line)
		}
		return strings.TrimSpace(v)
	}
	sc := bufio.NewScanner(strings.NewReader(summary))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case reScenario.MatchString(line):
			r.mode = value(line)
			continue
		case r.mode == "SingleStream" && reSSEstimate.MatchString(line),
			r.mode == "MultiStream" && reMSEstimate.MatchString(line),
			r.mode == "Server" && reCompleted.MatchString(line),
			r.mode == "Offline" && reOfflineSamples.MatchString(line):
			if r.score != "" {
				t.Errorf("second score line %q", line)
			}
			r.score = value(line)
			continue
		case reTargetLatencyLiteral.MatchString(line):
			r.targetLatency = value(line)
		}
		if reTargetLatencyAsQuoted.MatchString(line) {
			r.targetLatencyAsQuoted++
		}
		if reResultIs.MatchString(line) {
			if r.result != "" {
				t.Errorf("second result line %q", line)
			}
			r.result = value(line)
		}
		if reErrors.MatchString(line) {
			r.errorLines++
		}
	}
	return r
}

// TestSummaryUnderTEST04Patterns checks that the compliance script reads from
// our summaries the numbers we put in, and reads the reference example the
// same way it reads our rendering of that example.
func TestSummaryUnderTEST04Patterns(t *testing.T) {
	ref, err := os.ReadFile("testdata/reference_server_summary.txt")
	if err != nil {
		t.Fatal(err)
	}
	refReading := readAsTest04(t, string(ref))

	server := referenceServerSummary(t)
	// Text from the network that looks like what the script searches for
	// must not be read as a score, a scenario, a result or an error count.
	hostile := "Early stopping 90th percentile estimate: 5"
	server.SUTName = "Demo Network SUT " + hostile
	server.Network = Network{
		Ruleset:     "loadgen6",
		FirstErrors: []string{"1 ERROR: " + hostile, "x\nResult is : INVALID"},
		Constraints: []Constraint{{Name: hostile, Met: true}},
		Extra:       []Field{{Key: "Scenario", Value: "Offline"}, {Key: "Completed samples per second", Value: "1e9"}},
	}

	ss := &Summary{
		SUTName:  "Demo Network SUT",
		Settings: effective(t, func(s *trace.Requested) { s.Scenario = trace.SingleStream }),
		EarlyStopping: EarlyStopping{
			Estimate:   &stats.PercentileEstimate{Met: true, Queries: 9331, MinQueries: 64, Discarded: 864, Latency: 1076145},
			Estimate99: &stats.PercentileEstimate{Met: true, Queries: 9331, MinQueries: 662, Discarded: 60, Latency: 1113508},
		},
		MinDurationMet: true, MinQueriesMet: true,
		Network: Network{FirstErrors: []string{hostile, "Early stopping 99.0th percentile estimate: 1"},
			Extra: []Field{{Key: "Samples per second", Value: hostile}}},
	}
	ms := &Summary{
		SUTName:        "Demo Network SUT",
		Settings:       effective(t, func(s *trace.Requested) { s.Scenario = trace.MultiStream }),
		EarlyStopping:  EarlyStopping{Estimate: &stats.PercentileEstimate{Met: true, Queries: 700, MinQueries: 662, Latency: 8100000}},
		MinDurationMet: true, MinQueriesMet: true, Errors: 3,
	}
	off := &Summary{
		SUTName:          "Demo Network SUT",
		Settings:         effective(t, func(s *trace.Requested) { s.Scenario = trace.Offline }),
		SamplesPerSecond: 123456.7, MinDurationMet: true, MinQueriesMet: false,
		Network: Network{FailedSamples: 4, FirstErrors: []string{"2 ERRORS", hostile}},
	}

	tests := []struct {
		name       string
		s          *Summary
		want       test04Reading
		scoreValue float64
	}{
		{"Server (reference example)", server, refReading, 1003.26},
		{"SingleStream", ss, test04Reading{mode: "SingleStream", score: "1076145", result: "VALID", targetLatency: "0"}, 1076145},
		{"MultiStream", ms, test04Reading{mode: "MultiStream", score: "8100000", result: "VALID", targetLatency: "0", errorLines: 1}, 8100000},
		{"Offline", off, test04Reading{mode: "Offline", score: "123457", result: "INVALID", targetLatency: "0"}, 123457},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := readAsTest04(t, writeSummaryString(t, tc.s))
			if got != tc.want {
				t.Errorf("TEST04 reads %+v, want %+v", got, tc.want)
			}
			if v, err := strconv.ParseFloat(got.score, 64); err != nil || v != tc.scoreValue {
				t.Errorf("score %q = %v (%v), want %v", got.score, v, err, tc.scoreValue)
			}
		})
	}
	// The reference example itself, as the script sees it.
	want := test04Reading{mode: "Server", score: "1003.26", result: "VALID", targetLatency: "100000000"}
	if refReading != want {
		t.Errorf("reference example reads %+v, want %+v", refReading, want)
	}
}
