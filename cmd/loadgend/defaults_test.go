package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
)

// A Server run at ten times model2ms's capacity (500 queries/s): with the
// default settings it stops issuing once its verdict can no longer change,
// says so, and says what the endpoint sustained; with --no-early-verdict it
// issues its whole length. The drain is bounded so the full-length run's
// backlog does not take its own 9 s.
func TestRunFarOverCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs take about 4 s")
	}
	p := startProxy(t, model2ms)
	args := []string{"--target", targetOf(p, "http"), "--model", "m", "--target-qps", "5000", "--target-latency-ms", "20",
		"--min-duration-ms", "1000", "--drain-timeout-ms", "500"}
	sat := regexp.MustCompile(`completed [0-9]{3} samples/s of 5,000 asked: the endpoint is saturated; try --mode find-peak`)

	dir := t.TempDir()
	inv := runArgs(append(args, "--out", dir)...)
	res := completedRun(t, inv, dir)
	if res.Valid || res.EndReason != loadgen.StopEarlyVerdict || res.EarlyVerdict == nil {
		t.Fatalf("default settings: end %s, valid %v; want an INVALID run ended by its early verdict\n%v", res.EndReason, res.Valid, inv)
	}
	if res.QueriesIssued >= 2500 {
		t.Errorf("default settings: %d queries issued of about 5000; want it stopped within the first half", res.QueriesIssued)
	}
	if !strings.Contains(inv.stdout, "stopped early at ") || !strings.Contains(inv.stdout, "the verdict INVALID can no longer change (") {
		t.Errorf("verdict line does not say the run stopped early:\n%s", inv.stdout)
	}
	if !sat.MatchString(inv.stdout) {
		t.Errorf("verdict line lacks the saturation line:\n%s", inv.stdout)
	}
	summary, err := os.ReadFile(filepath.Join(dir, runlog.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	_, ours, _ := strings.Cut(string(summary), "netloadgen Network Stats")
	if !regexp.MustCompile(`\nSustained : ` + sat.String()).MatchString(ours) {
		t.Errorf("summary's netloadgen section lacks the saturation line:\n%s", ours)
	}
	if !strings.Contains(ours, "\nEarly verdict : stopped early at ") {
		t.Errorf("summary's netloadgen section does not say the run stopped early:\n%s", ours)
	}

	dir = t.TempDir()
	inv = runArgs(append(args, "--no-early-verdict", "--out", dir)...)
	res = completedRun(t, inv, dir)
	if res.EndReason != loadgen.StopCompleted || res.EarlyVerdict != nil || time.Duration(res.FinalQueryScheduledTimeNs) < 900*time.Millisecond {
		t.Errorf("--no-early-verdict: end %s, early verdict %+v, last query scheduled at %v; want the full second", res.EndReason, res.EarlyVerdict,
			time.Duration(res.FinalQueryScheduledTimeNs))
	}
	if strings.Contains(inv.stdout, "stopped early") || !sat.MatchString(inv.stdout) {
		t.Errorf("--no-early-verdict: want no early stop and the saturation line:\n%s", inv.stdout)
	}

	if inv := runArgs(append(args, "--early-verdict", "--no-early-verdict")...); inv.code != exitError ||
		!strings.Contains(inv.stderr, "--early-verdict and --no-early-verdict: give one of them") {
		t.Errorf("both flags: %v", inv)
	}
}

// Without --out a run writes its files to a new directory under ./runs
// (the tests' working directory is a temporary one, TestMain), named by
// time, scenario and model, which the verdict names; a run that never
// started leaves no directory behind.
func TestRunDefaultOut(t *testing.T) {
	if testing.Short() {
		t.Skip("an end-to-end run")
	}
	p := startProxy(t, model2ms)
	inv := runArgs("--target", targetOf(p, "http"), "--model", "m", "--target-qps", "100", "--min-duration-ms", "200", "--min-query-count", "10")
	m := regexp.MustCompile(`(?m)^logs: (runs/[0-9]{8}-[0-9]{6}-server-m) \(a new directory under \./runs/; --out DIR chooses one\)$`).FindStringSubmatch(inv.stdout)
	if m == nil {
		t.Fatalf("the verdict does not name a new directory under ./runs:\n%v", inv)
	}
	completedRun(t, inv, m[1])
	t.Cleanup(func() { os.RemoveAll(m[1]) })

	before, _ := os.ReadDir(defaultOutBase)
	if inv := runArgs("--target", "http://127.0.0.1:1", "--model", "m", "--target-qps", "100"); inv.code != exitError {
		t.Fatalf("a dead target: %v", inv)
	}
	if after, _ := os.ReadDir(defaultOutBase); len(after) != len(before) {
		t.Errorf("a run that never started left a directory: %d entries before, %d after", len(before), len(after))
	}
}

// Two runs started in the same second get two directories.
func TestClaimOutDirUnique(t *testing.T) {
	base := filepath.Join(t.TempDir(), "runs")
	now := time.Date(2026, 11, 25, 10, 15, 0, 0, time.UTC)
	a, err := claimOutDir(base, now, "Server", "identity")
	if err != nil {
		t.Fatal(err)
	}
	b, err := claimOutDir(base, now, "Server", "identity")
	if err != nil {
		t.Fatal(err)
	}
	if a != filepath.Join(base, "20261125-101500-server-identity") || b != a+"-2" {
		t.Errorf("got %s and %s", a, b)
	}
	c, err := claimOutDir(base, now, "Offline", "../etc/x")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(c) != base {
		t.Errorf("a model name with a path in it left the base: %s", c)
	}
}

// The default settings make a meaningful run of each scenario LoadGen's
// defaults fail at once: Offline sized for 1000 samples/s (LoadGen's 1
// makes 100 samples, done in milliseconds) is VALID against an endpoint
// of 500/s; MultiStream's trace lasts against 2 ms queries (LoadGen's 8 ms
// runs out after 250 queries of a 1 s run). Against an endpoint too fast
// for it, Offline's INVALID names the flag to change and a value.
func TestRunDefaultsMeaningful(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs take about 5 s")
	}
	p := startProxy(t, model2ms, "name=one,fn=echo,dtype=FP32,dims=16,max_batch=1,latency=constant:2ms,instances=1")
	run := func(model string, args ...string) (invocation, *loadgen.Result) {
		dir := t.TempDir()
		inv := runArgs(append([]string{"--target", targetOf(p, "http"), "--model", model, "--min-duration-ms", "1000", "--out", dir}, args...)...)
		return inv, completedRun(t, inv, dir)
	}
	if inv, res := run("one", "--scenario", "Offline"); !res.Valid {
		t.Errorf("Offline with the default expected rate against 500 samples/s: %v", inv)
	}
	// (VALID would take loadgen6's 662 queries for early stopping, more
	// than a 1 s run makes; what the default fixes is the trace's length.)
	if inv, res := run("m", "--scenario", "MultiStream"); res.EndReason != loadgen.StopCompleted {
		t.Errorf("MultiStream with the default expected latency against 2 ms queries: end %s\n%v", res.EndReason, inv)
	}
	dir := t.TempDir()
	inv := runArgs("--target", targetOf(p, "http"), "--model", "m", "--min-duration-ms", "1000", "--out", dir, "--scenario", "Offline")
	if res := completedRun(t, inv, dir); res.Valid {
		t.Fatalf("Offline at 1000 expected against 4000 samples/s lasted its minimum: %v", inv)
	}
	note := regexp.MustCompile(`netloadgen: the expected rate is --target-qps / settings.target_qps \(offline_expected_qps, 1,000 here\); this run did [0-9,]+ samples/s: try --target-qps [0-9]+`)
	if !note.MatchString(inv.stdout) {
		t.Errorf("verdict line lacks the note naming the flag:\n%s", inv.stdout)
	}
	summary, err := os.ReadFile(filepath.Join(dir, runlog.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	// LoadGen's advice word for word, then the note.
	if !regexp.MustCompile(`\n \* Increase expected QPS so the loadgen pre-generates a larger \(coalesced\) query\.\n \* ` + note.String()).Match(summary) {
		t.Errorf("summary lacks LoadGen's advice followed by the note:\n%s", summary)
	}
}
