package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScheduleMatchesVector: the C++ LoadGen's MultiStream trace for its
// own defaults and official seeds. netloadgen's MultiStream default expected
// latency (1 ms, runspec.DefaultMultiStreamExpectedLatencyNs) is not
// LoadGen's 8 ms, so the flag gives LoadGen's.
func TestScheduleMatchesVector(t *testing.T) {
	want, err := os.ReadFile(srcPath("../../pkg/trace/testdata/multistream_spq8_official.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"schedule", "--scenario", "MultiStream", "--samples-per-query", "8", "--expected-latency-ns", "8000000",
		"--min-query-count", "662", "--qsl-seed", "2085463073848966840",
		"--sample-seed", "2747215439041700203", "--schedule-seed", "16159082839903944936"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	if !bytes.Equal(stdout.Bytes(), want) {
		t.Fatalf("output (%d bytes) differs from the vector (%d bytes)", stdout.Len(), len(want))
	}
}

// TestScheduleMaxPrintedSamples: --max-printed-samples 0 prints an Offline
// query whole; the default keeps the reference vector's 16.
func TestScheduleMaxPrintedSamples(t *testing.T) {
	args := []string{"schedule", "--scenario", "Offline", "--target-qps", "100", "--min-query-count", "24576",
		"--qsl-seed", "2085463073848966840", "--sample-seed", "2747215439041700203", "--schedule-seed", "16159082839903944936"}
	query := func(extra ...string) []string {
		var stdout, stderr bytes.Buffer
		if code := run(append(append([]string{}, args...), extra...), &stdout, &stderr); code != 0 {
			t.Fatalf("exit %d, stderr %q", code, stderr.String())
		}
		lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
		return strings.Fields(lines[len(lines)-1])
	}
	def, all, five := query(), query("--max-printed-samples", "0"), query("--max-printed-samples", "5")
	if def[2] != "24576" || len(def) != 3+16 {
		t.Fatalf("default: %d samples, %d printed; want 24576 and 16", len(def)-3, len(def)-3)
	}
	if len(all) != 3+24576 || len(five) != 3+5 {
		t.Errorf("printed %d with 0 and %d with 5; want 24576 and 5", len(all)-3, len(five)-3)
	}
	for i := range 16 {
		if all[3+i] != def[3+i] {
			t.Fatalf("sample %d: %s in full, %s by default", i, all[3+i], def[3+i])
		}
	}
	want, err := os.ReadFile(srcPath("../../pkg/trace/testdata/offline_qps100_official.txt"))
	if err != nil {
		t.Fatal(err)
	}
	wl := strings.Split(strings.TrimSuffix(string(want), "\n"), "\n")
	if got := strings.Join(def, " "); got != wl[len(wl)-1] {
		t.Errorf("default query line differs from the vector's:\n%.200s\n%.200s", got, wl[len(wl)-1])
	}
}

// With no command loadgend is the daemon (the container's entry point); a
// configuration it cannot serve stops it at once with the variable named.
func TestNoCommandServesTheDaemon(t *testing.T) {
	t.Setenv("LOADGEND_LISTEN", "0.0.0.0:0")
	t.Setenv("LOADGEND_API_TOKEN", "")
	var stdout, stderr bytes.Buffer
	if code := run(nil, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "LOADGEND_LISTEN") {
		t.Errorf("exit %d, stderr %q: want 2 naming LOADGEND_LISTEN", code, stderr.String())
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		code     int
		mentions string
	}{
		{"serve with stray argument", []string{"serve", "now"}, 2, "now"},
		{"unknown command", []string{"frobnicate"}, 2, "frobnicate"},
		{"unknown flag", []string{"schedule", "--target-qsp", "5"}, 2, "target-qsp"},
		{"bad float", []string{"schedule", "--target-qps", "fast"}, 2, "target-qps"},
		{"zero qps", []string{"schedule", "--scenario", "Server", "--target-qps", "0"}, 2, "target-qps"},
		{"bad scenario", []string{"schedule", "--scenario", "Streaming"}, 2, "scenario"},
		{"negative seed", []string{"schedule", "--qsl-seed", "-1"}, 2, "qsl-seed"},
		{"negative printed samples", []string{"schedule", "--max-printed-samples", "-1"}, 2, "max-printed-samples"},
		{"zero latency", []string{"schedule", "--expected-latency-ns", "0"}, 2, "expected-latency-ns"},
		{"zero spq", []string{"schedule", "--samples-per-query", "0"}, 2, "samples-per-query"},
		{"same index out of set", []string{"schedule", "--issue-same", "--issue-same-index", "1024"}, 2, "issue-same-index"},
		{"unique and same", []string{"schedule", "--issue-same", "--issue-unique"}, 2, "--issue-unique and --issue-same"},
		{"unreadable conf", []string{"schedule", "--mlperf-conf", "/nonexistent/mlperf.conf"}, 2, "--mlperf-conf"},
		{"preset unknown", []string{"schedule", "--preset", "resnet"}, 2, "--preset"},
		{"stray argument", []string{"schedule", "Server"}, 2, "Server"},
		{"too large", []string{"schedule", "--scenario", "Server", "--target-qps", "1e9", "--min-duration-ms", "600000"}, 1, "too large"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tc.args, &stdout, &stderr)
			if code != tc.code {
				t.Fatalf("exit %d, want %d (stderr %q)", code, tc.code, stderr.String())
			}
			msg := stderr.String()
			if strings.Count(msg, "\n") != 1 || !strings.Contains(msg, tc.mentions) {
				t.Errorf("stderr %q: want one line mentioning %q", msg, tc.mentions)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout not empty on error: %q", stdout.String())
			}
		})
	}
}

func TestHelpExitsZero(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"schedule", "-h"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(stdout.String(), "-target-qps") {
		t.Errorf("help does not list the flags: %q", stdout.String())
	}
}

// TestScheduleTakesRunsConfsAndPresets (issue 27): schedule builds its
// settings as run does: an mlperf.conf's seeds are the seed flags', a
// user.conf's target_qps and a preset's expected latency reach the trace,
// and a conf that cannot be read is an error naming its flag.
func TestScheduleTakesRunsConfsAndPresets(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mlperf := write("mlperf.conf", "*.*.qsl_rng_seed = 7\n*.*.sample_index_rng_seed = 8\n*.*.schedule_rng_seed = 9\n")
	user := write("user.conf", "*.Server.target_qps = 250\nm.Server.min_query_count = 33\nother.Server.min_query_count = 44\n")
	schedule := func(args ...string) invocation {
		return mainArgs(append([]string{"schedule", "--scenario", "Server", "--min-duration-ms", "100", "--max-printed-samples", "4"}, args...)...)
	}
	byConf, byFlags := schedule("--target-qps", "50", "--mlperf-conf", mlperf), schedule("--target-qps", "50", "--qsl-seed", "7", "--sample-seed", "8", "--schedule-seed", "9")
	if byConf.code != 0 || byConf.stdout != byFlags.stdout {
		t.Errorf("mlperf.conf's seeds: exit %d, %d bytes; the seed flags' trace is %d bytes (stderr %q)", byConf.code, len(byConf.stdout), len(byFlags.stdout), byConf.stderr)
	}
	head := func(inv invocation) string { h, _, _ := strings.Cut(inv.stdout, "\n"); return h }
	if inv := schedule("--user-conf", user, "--model", "m"); inv.code != 0 ||
		head(inv) != "# target_qps 250 samples_per_query 1 min_query_count 33 performance_sample_count 1024" {
		t.Errorf("user.conf for model m: %q (%v)", head(inv), inv)
	}
	// The preset sets SingleStream's expected latency to mlperf.conf's 10 ms.
	if inv := schedule("--scenario", "SingleStream", "--preset", "resnet50"); inv.code != 0 || !strings.HasPrefix(head(inv), "# target_qps 100 ") {
		t.Errorf("preset resnet50: %q; want target_qps 100, from its 10 ms expected latency (%v)", head(inv), inv)
	}
	if inv := schedule("--user-conf", filepath.Join(dir, "missing.conf")); inv.code != 2 || !strings.HasPrefix(inv.stderr, "loadgend schedule: --user-conf: ") {
		t.Errorf("missing user.conf: %v", inv)
	}
}

// TestScheduleDefaultsAreRuns: with no flag, schedule's settings are those
// of `loadgend run` with none: LoadGen 6.0.17's official seeds, the Server
// scenario, netloadgen's Offline expected QPS (issue 27; schedule used
// seeds 0 and LoadGen's bare defaults).
func TestScheduleDefaultsAreRuns(t *testing.T) {
	plain := mainArgs("schedule", "--min-duration-ms", "100", "--target-qps", "50", "--max-printed-samples", "4")
	official := mainArgs("schedule", "--scenario", "Server", "--min-duration-ms", "100", "--target-qps", "50", "--max-printed-samples", "4",
		"--qsl-seed", "2085463073848966840", "--sample-seed", "2747215439041700203", "--schedule-seed", "16159082839903944936")
	if plain.code != 0 || plain.stdout != official.stdout {
		t.Errorf("no seed flags: exit %d; want the Server trace with LoadGen 6.0.17's official seeds\n%.300s\n%.300s", plain.code, plain.stdout, official.stdout)
	}
	offline := mainArgs("schedule", "--scenario", "Offline", "--min-duration-ms", "100", "--max-printed-samples", "1")
	if h, _, _ := strings.Cut(offline.stdout, "\n"); offline.code != 0 || !strings.HasPrefix(h, "# target_qps 1000 samples_per_query 110 ") {
		t.Errorf("Offline: %q; want run's default expected QPS 1000 (110 samples in 100 ms) (%v)", h, offline)
	}
}
