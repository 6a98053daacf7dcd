package runlog_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// TestRunFilesForDiff writes every file of a set of runs on a virtual
// clock (every scenario, failures, an early stop, tokens) to
// $NETLOADGEN_RUN_FILES_DIR, for bench/same-files.sh to compare across
// commits: a change to how a run keeps or writes its records (issue 28)
// must leave the files byte-identical but for wall-clock times. Gated: it
// checks nothing by itself.
func TestRunFilesForDiff(t *testing.T) {
	out := os.Getenv("NETLOADGEN_RUN_FILES_DIR")
	if out == "" {
		t.Skip("set NETLOADGEN_RUN_FILES_DIR (bench/same-files.sh)")
	}
	scattered := func(id int) time.Duration { return time.Duration(id*7919%1700) * time.Microsecond * 10 }
	for _, c := range []scenarioCase{
		{name: "server", ruleset: loadgen.RulesetLoadGen6, scenario: trace.Server, latency: scattered},
		{name: "server-failing", ruleset: loadgen.RulesetLoadGen6, scenario: trace.Server, latency: scattered,
			fail: func(id int) error {
				if id%7 == 0 {
					return fmt.Errorf("HTTP 500 for query %d", id)
				}
				return nil
			}},
		{name: "server-maxq", ruleset: loadgen.RulesetLoadGen6, scenario: trace.Server, latency: scattered,
			tweak: func(s *loadgen.Settings) {
				s.MaxQueryCount = 500
				s.MinDurationMs = 2500
				s.Engine.EarlyVerdict = false
			}},
		{name: "server-tokens", ruleset: loadgen.RulesetLoadGen6, scenario: trace.Server, latency: scattered,
			tokens: func(id int) (time.Duration, int) { return time.Duration(id%50) * time.Microsecond, 1 + id%40 }},
		{name: "offline", ruleset: loadgen.RulesetLoadGen6, scenario: trace.Offline, latency: scattered},
		{name: "singlestream", ruleset: loadgen.RulesetLoadGen6, scenario: trace.SingleStream, latency: scattered},
		{name: "multistream", ruleset: loadgen.RulesetLoadGen6, scenario: trace.MultiStream, latency: scattered},
		{name: "multistream-v05", ruleset: loadgen.RulesetV05, scenario: trace.MultiStream, latency: scattered},
	} {
		t.Run(c.name, func(t *testing.T) {
			run, res := execute(t, c)
			dir := filepath.Join(out, c.name)
			if err := runlog.Write(dir, run, res, runlog.Options{Logger: quietLogger()}); err != nil {
				t.Fatal(err)
			}
			f, err := os.Create(filepath.Join(dir, "samples.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if err := run.WriteSamples(f); err != nil {
				t.Fatal(err)
			}
			f.Close()
		})
	}
}
