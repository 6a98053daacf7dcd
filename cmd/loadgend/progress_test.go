package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runner"
)

func TestProgressText(t *testing.T) {
	prev := loadgen.Progress{Started: true, CompletedSamples: 1000}
	cur := loadgen.Progress{Started: true, IssuedQueries: 2010, CompletedQueries: 2000, InFlightQueries: 10, CompletedSamples: 2000,
		FailedSamples: 1, OverLatencySamples: 3, Elapsed: 2 * time.Second, ExpectedEnd: 10 * time.Second, P99: 1960 * time.Microsecond}
	got := progressText(cur, prev, 500*time.Millisecond, 50*time.Millisecond)
	for _, want := range []string{"2010 issued", "2000 done", "10 in flight", "1 failed samples", "| 2000 samples/s |", "2.0s of ~10.0s",
		"p99 1.96 ms (bound 50.00 ms, 3 samples over)"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	if got := progressText(cur, prev, 500*time.Millisecond, 0); strings.Contains(got, "bound") {
		t.Errorf("a scenario without a bound shows one: %q", got)
	}
}

// TestProgressLineEndsBeforeTheVerdict: stop returns once the line is
// cleared, so the verdict printed next is not written onto the progress
// line (issue 18 #4: "| p99 1.96 msServer (loadgen6): VALID").
func TestProgressLineEndsBeforeTheVerdict(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	p := startProxy(t)
	req, err := parseRunFlags([]string{"--target", targetOf(p, "http"), "--model", "simple", "--target-qps", "200",
		"--target-latency-ms", "100", "--min-duration-ms", "1200", "--min-query-count", "10"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var term syncBuffer
	progress := &progressLine{w: &term, done: make(chan struct{}), ended: make(chan struct{})}
	opts := runner.Options{Started: func(r *loadgen.Run) {
		progress.shown = true
		go progress.show(r)
	}}
	if _, err := runner.Run(t.Context(), req.spec, opts); err != nil {
		t.Fatal(err)
	}
	progress.stop()
	out := term.String()
	if !strings.Contains(out, "samples/s") || !strings.Contains(out, "bound 100.00 ms") {
		t.Fatalf("no progress line drawn in a 1.2 s run: %q", out)
	}
	if !strings.HasSuffix(out, "\r\033[K") {
		t.Errorf("the line is not cleared when stop returns: ...%q", out[max(len(out)-80, 0):])
	}
}
