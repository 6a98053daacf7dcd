package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/mlperflog"
	"github.com/netloadgen/netloadgen/pkg/runlog"
)

// loadgenSummary is a summary up to netloadgen's own section, which
// follows LoadGen's footer.
func loadgenSummary(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text, _, _ := strings.Cut(string(b), "\n================================================\n"+mlperflog.NetworkSectionTitle)
	return strings.Split(strings.TrimRight(text, "\n"), "\n")
}

// detailKey matches the key and the value of a detail line as written.
var detailKey = regexp.MustCompile(`^:::MLLOG \{"key": "([^"]*)", "value": (.*), "time_ms": `)

// judgedKeys are a detail log's LoadGen settings, errors and result keys,
// "key = value" in order: what rejudge must reproduce. The version,
// identity, run (loaded set, generation, power) and netloadgen_ keys, and
// time_ms, pid, tid and file, depend on the run or the build.
func judgedKeys(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for l := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		m := detailKey.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("%s: not a detail line: %q", path, l)
		}
		for _, p := range []string{"result_", "early_stopping_", "requested_", "effective_", "error_", "num_errors"} {
			if strings.HasPrefix(m[1], p) {
				out = append(out, m[1]+" = "+m[2])
				break
			}
		}
	}
	return out
}

func diffLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("%s line %d:\n got %q\nwant %q", what, i+1, g, w)
		}
	}
}

// TestRejudgeReproducesLoadGenTokenVectors is the acceptance test of token
// latencies: rejudging the sample lists LoadGen 6.0.17 judged
// (testdata/tokens, FORMAT.md "Token-latency vectors") writes LoadGen's
// summary line for line and every requested_, effective_, result_,
// early_stopping_ and error key of its detail log value for value, with
// the samples of fewer than two tokens (5 and 3) handled as LoadGen does.
// No summary line is skipped: a rejudged run has no run-dependent line in
// LoadGen's part (netloadgen's section after the footer is not compared).
func TestRejudgeReproducesLoadGenTokenVectors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		exit     int
		verdict  string
		fewToken int64
	}{
		{"token_server_small", exitValid, "VALID", 5},
		{"token_offline_small", exitValid, "VALID", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := filepath.Join(srcDir, "testdata", "tokens", tc.name)
			out := t.TempDir()
			var stdout, stderr bytes.Buffer
			if got := run([]string{"rejudge", "--samples", in + ".input.txt", "--out", out}, &stdout, &stderr); got != tc.exit {
				t.Fatalf("exit %d, want %d; stderr: %s", got, tc.exit, stderr.String())
			}
			diffLines(t, "summary", loadgenSummary(t, filepath.Join(out, runlog.SummaryFile)), loadgenSummary(t, in+".mlperf_log_summary.txt"))
			diffLines(t, "detail", judgedKeys(t, filepath.Join(out, runlog.DetailFile)), judgedKeys(t, in+".mlperf_log_detail.txt"))
			var res loadgen.Result
			b, err := os.ReadFile(filepath.Join(out, runlog.ResultFile))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &res); err != nil {
				t.Fatal(err)
			}
			if res.Validity != tc.verdict || res.TokenLatencies == nil || res.TokenLatencies.FewTokenSamples != tc.fewToken {
				t.Errorf("result.json: validity %q, token_latencies %+v; want %s with %d samples of fewer than 2 tokens", res.Validity, res.TokenLatencies, tc.verdict, tc.fewToken)
			}
		})
	}
}

// TestRejudgeTighterTPOTBound asks the question rejudge exists for: the
// Server vector (p99 TPOT 47.99 ms) would fail a 40 ms TPOT bound, with
// LoadGen's TPOT message in the summary and the TTFT early-stopping block
// left empty (LoadGen's && short-circuits once TPOT fails).
func TestRejudgeTighterTPOTBound(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	in := filepath.Join(srcDir, "testdata", "tokens", "token_server_small.input.txt")
	if got := run([]string{"rejudge", "--samples", in, "--out", out, "--tpot-latency-ms", "40"}, &stdout, &stderr); got != exitInvalid {
		t.Fatalf("exit %d, want %d (INVALID); stderr: %s", got, exitInvalid, stderr.String())
	}
	if want := "TPOT p99 47.991 ms (bound 40.000 ms)"; !strings.Contains(stdout.String(), want) {
		t.Errorf("verdict line lacks %q: %s", want, stdout.String())
	}
	sum := strings.Join(loadgenSummary(t, filepath.Join(out, runlog.SummaryFile)), "\n")
	for _, want := range []string{
		"Result is : INVALID",
		"  Performance constraints satisfied : NO",
		"  Early stopping satisfied: NO",
		"Recommendations:\n * TPOT constrain not met: Reduce target QPS to improve latency.\nTTFT Early Stopping Result:\n\nTPOT Early Stopping Result:\n * Run unsuccessful.",
		"tpot_latency (ns): 40000000",
	} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
	keys := strings.Join(judgedKeys(t, filepath.Join(out, runlog.DetailFile)), "\n")
	for _, want := range []string{
		`requested_server_tpot_latency = 40000000`,
		`result_invalid_reason = "TPOT constrain not met: Reduce target QPS to improve latency. "`,
		`early_stopping_ttft_result = ""`,
	} {
		if !strings.Contains(keys, want) {
			t.Errorf("detail lacks %q:\n%s", want, keys)
		}
	}
}

// TestRejudgeBadInput: a missing flag or a malformed sample list is a
// usage error naming what to fix, never a panic.
func TestRejudgeBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(bad, []byte("# scenario Server\n# sample_count 1\n12 x 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	noQSL := filepath.Join(dir, "noqsl.txt")
	if err := os.WriteFile(noQSL, []byte("# scenario Server\n# queries_issued 2\n5 1 3\n6 2 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"rejudge", "--out", dir}, "--samples"},
		{[]string{"rejudge", "--samples", bad}, "--out"},
		{[]string{"rejudge", "--samples", bad, "--out", dir}, "line 3: column 2"},
		{[]string{"rejudge", "--samples", noQSL, "--out", dir}, "qsl_total_sample_count"},
		{[]string{"rejudge", "--samples", filepath.Join(srcDir, "testdata", "tokens", "token_server_small.input.txt"), "--out", dir, "--tpot-latency-ms", "-1"}, "--tpot-latency-ms"},
	} {
		var stdout, stderr bytes.Buffer
		if got := run(tc.args, &stdout, &stderr); got != exitError || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d naming %q", tc.args, got, stderr.String(), exitError, tc.want)
		}
	}
}

// TestRejudgeTakesRunsConfsAndPresets (issue 27): rejudge rebuilds the
// settings over the sample list's as run builds them over the ruleset's:
// a user.conf's TPOT bound (ms, LoadGen's unit) judges as the
// --tpot-latency-ms flag does, and a preset's bounds apply (llama2-70b:
// TTFT 2 s, TPOT 200 ms, which the Server vector meets).
func TestRejudgeTakesRunsConfsAndPresets(t *testing.T) {
	in := filepath.Join(srcDir, "testdata", "tokens", "token_server_small.input.txt")
	dir := t.TempDir()
	user := filepath.Join(dir, "user.conf")
	if err := os.WriteFile(user, []byte("*.Server.tpot_latency = 40\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	detail := func(args ...string) (invocation, string) {
		out := filepath.Join(dir, strings.Join(args, "_")[2:12])
		inv := mainArgs(append([]string{"rejudge", "--samples", in, "--out", out}, args...)...)
		if inv.code == exitError {
			return inv, ""
		}
		return inv, strings.Join(judgedKeys(t, filepath.Join(out, runlog.DetailFile)), "\n")
	}
	byConf, confKeys := detail("--user-conf", user)
	byFlag, flagKeys := detail("--tpot-latency-ms", "40")
	if byConf.code != exitInvalid || confKeys != flagKeys || byConf.stdout == "" {
		t.Errorf("user.conf tpot_latency 40: %v\nwant what --tpot-latency-ms 40 gives: %v", byConf, byFlag)
	}
	inv, keys := detail("--preset", "llama2-70b")
	if inv.code != exitValid || !strings.Contains(keys, "requested_server_tpot_latency = 200000000") || !strings.Contains(keys, "requested_server_ttft_latency = 2000000000") {
		t.Errorf("preset llama2-70b: %v\n%s", inv, keys)
	}
	if inv, _ := detail("--user-conf", filepath.Join(dir, "missing.conf")); inv.code != exitError || !strings.Contains(inv.stderr, "--user-conf: ") {
		t.Errorf("missing user.conf: %v", inv)
	}
}
