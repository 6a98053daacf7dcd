package runlog_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// queueing is the latency of a server of capacity cap/s answering a
// rate/s schedule in order: query id waits for the id before it.
func queueing(rate, capacity float64) func(int) time.Duration {
	return func(id int) time.Duration {
		return time.Millisecond + time.Duration(float64(id)*(1/capacity-1/rate)*1e9)
	}
}

// A Server run at 10,000 QPS against an endpoint of 1,000/s: with its early
// verdict it stops within the first second of its 5 s and says so, and both
// the summary's netloadgen section and the verdict line say what the
// endpoint sustained; without, it issues its whole trace and is still
// called saturated.
func TestSaturatedRunSaysSo(t *testing.T) {
	for _, early := range []bool{true, false} {
		name := map[bool]string{true: "early verdict", false: "full length"}[early]
		t.Run(name, func(t *testing.T) {
			run, res := execute(t, scenarioCase{name: name, ruleset: loadgen.RulesetLoadGen6, scenario: trace.Server,
				latency: queueing(10_000, 1_000),
				tweak: func(s *loadgen.Settings) {
					s.MinDurationMs = 5_000
					s.Engine.EarlyVerdict = early
				}})
			if res.Valid {
				t.Fatal("an endpoint at a tenth of the rate is VALID")
			}
			planned := int64(run.Trace().Len())
			line := runlog.SummaryLine(res)
			dir := t.TempDir()
			if err := runlog.Write(dir, run, res, runlog.Options{Logger: quietLogger()}); err != nil {
				t.Fatal(err)
			}
			summary := readFile(t, filepath.Join(dir, runlog.SummaryFile))
			_, ours, _ := strings.Cut(summary, "netloadgen Network Stats")

			// About the endpoint's 1,000/s (how many answers the virtual
			// clock counts by the stop varies by a few).
			sat := `completed (9[5-9]\d|1,0[0-4]\d) samples/s of 10,000 asked: the endpoint is saturated; try --mode find-peak\n`
			if !regexp.MustCompile("\nSustained : " + sat).MatchString(ours) {
				t.Errorf("netloadgen's section lacks the saturation line:\n%s", ours)
			}
			if !regexp.MustCompile("Sustained: " + strings.TrimSuffix(sat, `\n`) + `\. `).MatchString(line) {
				t.Errorf("verdict line lacks the saturation line:\n%s", line)
			}
			if !strings.Contains(ours, "\n  sample latency : min 1.00 ms,") {
				t.Errorf("netloadgen's section lacks the readable latencies:\n%s", ours)
			}
			if !early {
				if res.QueriesIssued != planned || res.EndReason != loadgen.StopCompleted {
					t.Errorf("without early verdict: %d of %d queries issued, end %s; want all, completed", res.QueriesIssued, planned, res.EndReason)
				}
				if strings.Contains(summary, "stopped early") || strings.Contains(line, "stopped early") {
					t.Errorf("a full-length run says it stopped early:\n%s\n%s", line, ours)
				}
				return
			}
			if res.EndReason != loadgen.StopEarlyVerdict || res.QueriesIssued >= planned/5 {
				t.Fatalf("early verdict: end %s after %d of %d queries; want early_verdict within the first fifth", res.EndReason, res.QueriesIssued, planned)
			}
			if at := time.Duration(res.EarlyVerdict.AtNs); at >= time.Second {
				t.Errorf("stopped at %v, want within the first second", at)
			}
			stopped := `stopped early at \d+ ms: the verdict INVALID can no longer change \(\d+ samples over the latency bound exceed the \d+ early stopping allows for \d+ planned samples\); --no-early-verdict`
			if !regexp.MustCompile("\nEarly verdict : " + stopped).MatchString(ours) {
				t.Errorf("netloadgen's section lacks %q:\n%s", stopped, ours)
			}
			if !regexp.MustCompile("; " + stopped).MatchString(line) {
				t.Errorf("verdict line lacks %q:\n%s", stopped, line)
			}
			// LoadGen's min-duration advice is kept, with the note that it
			// does not apply to a run its early verdict stopped.
			if !strings.Contains(summary, " * Increase the target QPS so the loadgen pre-generates more queries.\n * netloadgen: the run was stopped by its early verdict") {
				t.Errorf("summary lacks LoadGen's advice and the note after it:\n%s", summary)
			}
		})
	}
}

// Saturation needs both a completed rate under 90% of the asked one and a
// latency bound unmet or samples unanswered; only Server asks for a rate.
func TestSaturated(t *testing.T) {
	base := loadgen.Result{Scenario: "Server", TargetQPS: 1000, CompletedSamplesPerSec: 500, PerfConstraintsMet: false, SamplesCompleted: 2000}
	for _, c := range []struct {
		name string
		edit func(r *loadgen.Result)
		want bool
	}{
		{"half the rate, bound unmet", func(*loadgen.Result) {}, true},
		{"half the rate, backlog", func(r *loadgen.Result) { r.PerfConstraintsMet, r.DrainTimedOut, r.Unanswered = true, true, 5 }, true},
		{"half the rate, bound met, no backlog", func(r *loadgen.Result) { r.PerfConstraintsMet = true }, false},
		{"91% of the rate", func(r *loadgen.Result) { r.CompletedSamplesPerSec = 910 }, false},
		{"89% of the rate", func(r *loadgen.Result) { r.CompletedSamplesPerSec = 890 }, true},
		{"Offline", func(r *loadgen.Result) { r.Scenario = "Offline" }, false},
		// An early verdict after one slow sample: a rate of 0 from one
		// answer is no measure of the endpoint.
		{"one sample answered", func(r *loadgen.Result) { r.SamplesCompleted, r.CompletedSamplesPerSec = 1, 0 }, false},
		{"ten answered", func(r *loadgen.Result) { r.SamplesCompleted = runlog.SaturationMinSamples }, true},
	} {
		r := base
		c.edit(&r)
		if got := runlog.Saturated(&r); got != c.want {
			t.Errorf("%s: Saturated = %v, want %v", c.name, got, c.want)
		}
		if got := runlog.SaturationText(&r) != ""; got != c.want {
			t.Errorf("%s: SaturationText set = %v, want %v", c.name, got, c.want)
		}
	}
}

// LoadGen's min-duration advice names no flag; netloadgen's note names the
// flag and the field, with a value from what the run measured.
func TestMinDurationNoteNamesTheFlag(t *testing.T) {
	for _, c := range []struct {
		name string
		res  loadgen.Result
		want string
	}{
		{"Offline too fast", loadgen.Result{Scenario: "Offline", EndReason: loadgen.StopCompleted, SamplesPerSecond: 21_122,
			Effective: loadgen.Effective{TargetQPS: 1000}},
			"the expected rate is --target-qps / settings.target_qps (offline_expected_qps, 1,000 here); this run did 21,122 samples/s: try --target-qps 22000"},
		{"MultiStream ran out", loadgen.Result{Scenario: "MultiStream", EndReason: loadgen.StopRanOut, QueriesIssued: 2501, DurationNs: 5_156_000_000,
			Effective: loadgen.Effective{TargetQPS: 125}},
			"the expected latency is --expected-latency-ns / settings.expected_latency_ns (8.00 ms here); this run's queries took 2.06 ms each on average: try --expected-latency-ns 2000000"},
		{"Server", loadgen.Result{Scenario: "Server", EndReason: loadgen.StopCompleted, Effective: loadgen.Effective{TargetQPS: 50}},
			"the target rate is --target-qps / settings.target_qps (server_target_qps, 50 here)"},
		{"met", loadgen.Result{Scenario: "Offline", MinDurationMet: true}, ""},
		{"cancelled", loadgen.Result{Scenario: "Offline", EndReason: loadgen.StopCancelled}, ""},
	} {
		if got := runlog.MinDurationNote(&c.res); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}
