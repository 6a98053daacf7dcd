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

// A generator-bound warning reaches netloadgen's section of the summary, the
// terminal's verdict line and, for an INVALID run, a note beside LoadGen's
// "Reduce target QPS" (which stays as LoadGen writes it).
func TestGeneratorBoundWarning(t *testing.T) {
	for _, c := range []struct {
		name    string
		latency time.Duration
		valid   bool
	}{{"INVALID", 20 * time.Millisecond, false}, {"VALID", time.Millisecond, true}} {
		t.Run(c.name, func(t *testing.T) {
			run, res := execute(t, scenarioCase{name: c.name, ruleset: loadgen.RulesetV05, scenario: trace.Server,
				latency: constLatency(c.latency)})
			if res.Valid != c.valid {
				t.Fatalf("valid %v, want %v: %v", res.Valid, c.valid, res.InvalidReasons)
			}
			// As the engine sets them for a lateness of 13.6 ms (the virtual
			// clock issues on time).
			res.GeneratorBound = &loadgen.GeneratorBound{LatenessP99Ns: 13_600_000, BoundNs: 10_000_000, Share: 1.36}
			res.Warnings = []string{res.GeneratorBound.Warning()}
			w := res.Warnings[0]

			line := runlog.SummaryLine(res)
			if !strings.Contains(line, "; warning: "+w) {
				t.Errorf("verdict line lacks the warning:\n%s", line)
			}
			dir := t.TempDir()
			if err := runlog.Write(dir, run, res, runlog.Options{Logger: quietLogger()}); err != nil {
				t.Fatal(err)
			}
			summary := readFile(t, filepath.Join(dir, runlog.SummaryFile))
			_, ours, _ := strings.Cut(summary, "netloadgen Network Stats")
			if !strings.Contains(ours, "\nWarning : "+w+"\n") {
				t.Errorf("netloadgen's section lacks the warning:\n%s", summary)
			}
			note := " * netloadgen: the load generator's issue lateness may be the cause (see Warning below), not the SUT.\n"
			rec := " * Reduce target QPS to improve latency.\n"
			if c.valid {
				if strings.Contains(summary, note) {
					t.Errorf("a VALID run has the note:\n%s", summary)
				}
				return
			}
			if !strings.Contains(summary, rec+note) {
				t.Errorf("summary lacks LoadGen's advice followed by the note:\n%s", summary)
			}
		})
	}
}
