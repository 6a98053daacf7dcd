package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestScheduleMatchesVector(t *testing.T) {
	want, err := os.ReadFile(srcPath("../../pkg/trace/testdata/multistream_spq8_official.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"schedule", "--scenario", "MultiStream", "--samples-per-query", "8",
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
