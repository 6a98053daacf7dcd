package runlog_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// A run whose every sample failed: netloadgen's section lists the failures
// by kind, the verdict line names them, and beside LoadGen's "Reduce target
// QPS" (which stays as LoadGen writes it) a note says the failures, not
// latency, made the run INVALID.
func TestSummaryListsFailures(t *testing.T) {
	boom := errors.New("server: HTTP 500: boom")
	run, res := execute(t, scenarioCase{name: "all failed", ruleset: loadgen.RulesetV05, scenario: trace.Server,
		latency: constLatency(time.Millisecond), fail: func(int) error { return boom }})
	if res.Valid || !res.FailuresNotLatency() {
		t.Fatalf("valid %v; failures not latency %v: %q", res.Valid, res.FailuresNotLatency(), res.Recommendations)
	}
	n := res.SamplesFailed
	// As the runner's classifier names them (the engine's default does not
	// know HTTP).
	res.Failures = []loadgen.Failure{{Outcome: "error", Status: "HTTP 500", Count: n - 2, Example: boom.Error()},
		{Outcome: "timeout", Status: "", Count: 2, Example: "context deadline exceeded"}}

	line := runlog.SummaryLine(res)
	if want := fmt.Sprintf("; %d of %d samples failed (%d error HTTP 500, 2 timeout)", n, n, n-2); !strings.Contains(line, want) {
		t.Errorf("verdict line lacks %q:\n%s", want, line)
	}
	if !strings.Contains(line, "0.00 samples/s completed") {
		t.Errorf("verdict line counts failures as completed:\n%s", line)
	}
	dir := t.TempDir()
	if err := runlog.Write(dir, run, res, runlog.Options{Logger: quietLogger()}); err != nil {
		t.Fatal(err)
	}
	summary := readFile(t, filepath.Join(dir, runlog.SummaryFile))
	loadgens, ours, _ := strings.Cut(summary, "netloadgen Network Stats")
	want := fmt.Sprintf("\nFailures by kind:\n * %d failed: error HTTP 500 (e.g. server: HTTP 500: boom)\n * 2 failed: timeout (e.g. context deadline exceeded)\n", n-2)
	if !strings.Contains(ours, want) {
		t.Errorf("netloadgen's section lacks\n%s\n%s", want, summary)
	}
	rec := " * Reduce target QPS to improve latency.\n * netloadgen: failed samples, not latency, made this run INVALID"
	if !strings.Contains(loadgens, rec) {
		t.Errorf("LoadGen's advice is not followed by the failures note:\n%s", summary)
	}
	if !strings.Contains(loadgens, "Completed samples per second    : 0.00\n") {
		t.Errorf("summary:\n%s", summary)
	}
	detail := readFile(t, filepath.Join(dir, runlog.DetailFile))
	if !strings.Contains(detail, `"key": "netloadgen_failures"`) {
		t.Errorf("detail log lacks netloadgen_failures")
	}
}
