package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestScheduleMatchesVector(t *testing.T) {
	want, err := os.ReadFile("../../pkg/trace/testdata/multistream_spq8_official.txt")
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
