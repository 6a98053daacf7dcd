package runspec

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/api"
)

// A POSIX shell reads ShellQuote's line back as the arguments, whatever
// they hold: spaces, quotes, $, backslashes, globs, newlines, nothing.
func TestShellQuoteRoundTrip(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh to read the line back")
	}
	args := []string{"loadgend", "run", "--model", "it's a \"model\"", "--data", "$HOME/x y", "--slo", "ttft=500ms@p90",
		"--header", "Authorization: @env:TOKEN", "", "a\\b", "*", "line\nbreak", "'", "--target-qps", "-5", "ü"}
	line := ShellQuote(args)
	got, err := exec.Command(sh, "-c", `eval "set -- $1"; for a in "$@"; do printf '%s\000' "$a"; done`, "sh", line).Output()
	if err != nil {
		t.Fatalf("sh: %v", err)
	}
	back := strings.Split(strings.TrimSuffix(string(got), "\x00"), "\x00")
	if !slices.Equal(back, args) {
		t.Errorf("%s\nreads back as %q\nwant %q", line, back, args)
	}
	if strings.Contains(line, "'--model'") || !strings.HasPrefix(line, "loadgend run --model ") {
		t.Errorf("plain words quoted: %s", line)
	}
}

// A field no flag carries, whatever it is, is named: a new field of the
// spec shows there until it has a flag.
func TestCommandLineNamesEveryUnflaggedField(t *testing.T) {
	o := api.RunSettings{ServerTargetLatencyNs: new(uint64(5)), MultiStreamTargetQPS: new(1.0), PerformanceIssueSame: new(false)}
	cmd, lost := CommandLine(api.RunSpec{Target: "http://h:1", Model: "m", KeepSamples: true, Overrides: o})
	want := []string{"keep_samples", "settings.multi_stream_target_qps", "settings.performance_issue_same", "settings.server_target_latency_ns"}
	if !slices.Equal(lost, want) {
		t.Errorf("not expressible %v, want %v", lost, want)
	}
	if !slices.Equal(cmd, []string{"loadgend", "run", "--target", "http://h:1", "--model", "m"}) {
		t.Errorf("command line %q", cmd)
	}
	// A spec that sets nothing the flags lack is exact.
	if _, lost := CommandLine(api.RunSpec{Target: "http://h:1", Model: "m", Scenario: "Server"}); len(lost) != 0 {
		t.Errorf("a plain spec: not expressible %v", lost)
	}
}
