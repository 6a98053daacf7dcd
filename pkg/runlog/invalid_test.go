package runlog_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// INVALID runs without failed samples: the summary and detail log agree
// with the engine and name the reason.
func TestWriteInvalidRuns(t *testing.T) {
	cases := []struct {
		run scenarioCase
		// summaryHas and detailErrors: text the summary must contain and
		// detail error_runtime values that must appear.
		summaryHas   []string
		detailErrors []string
	}{
		{
			run: scenarioCase{name: "v0.5 MultiStream skipping intervals", ruleset: loadgen.RulesetV05, scenario: trace.MultiStream,
				latency: constLatency(2500 * time.Microsecond)}, // 1 ms ticks: every query skips two
			summaryHas: []string{"Constraint v0.5_multistream_skipped_intervals satisfied : NO", "netloadgen: Reduce samples per query."},
		},
		{
			run: scenarioCase{name: "SingleStream ran out of queries", ruleset: loadgen.RulesetLoadGen6, scenario: trace.SingleStream,
				latency: constLatency(10 * time.Microsecond), // the trace expects 100 µs: too few queries for 100 ms
				tweak:   func(s *loadgen.Settings) { s.MinQueryCount = 100 }},
			summaryHas:   []string{"Min duration satisfied : NO", "end_reason : ran_out_of_queries"},
			detailErrors: []string{"Ending early: Ran out of generated queries"},
		},
		{
			run: scenarioCase{name: "Server over the latency bound", ruleset: loadgen.RulesetLoadGen6, scenario: trace.Server,
				latency: constLatency(20 * time.Millisecond)}, // bound 10 ms
			summaryHas: []string{"Performance constraints satisfied : NO", "Early stopping satisfied: NO", " * Reduce target QPS to improve latency."},
		},
	}
	for _, c := range cases {
		t.Run(c.run.name, func(t *testing.T) {
			run, res := execute(t, c.run)
			if res.Valid || res.SamplesFailed != 0 {
				t.Fatalf("the test's run should be INVALID without failures: valid %v, %d failed", res.Valid, res.SamplesFailed)
			}
			dir := t.TempDir()
			if err := runlog.Write(dir, run, res, runlog.Options{Logger: quietLogger()}); err != nil {
				t.Fatal(err)
			}
			summary := readFile(t, filepath.Join(dir, runlog.SummaryFile))
			for _, want := range append([]string{"\nResult is : INVALID\n", "Failed samples : 0\n"}, c.summaryHas...) {
				if !strings.Contains(summary, want) {
					t.Errorf("summary lacks %q:\n%s", want, summary)
				}
			}
			lines := readDetail(t, dir)
			if got := string(detailValue(t, lines, "result_validity")); got != `"INVALID"` {
				t.Errorf("result_validity %s", got)
			}
			for _, want := range c.detailErrors {
				found := false
				for _, l := range lines {
					found = found || l.Metadata.IsError && l.Key == "error_runtime" && strings.Contains(string(l.Value), want)
				}
				if !found {
					t.Errorf("detail log has no error_runtime %q", want)
				}
			}
		})
	}
}
