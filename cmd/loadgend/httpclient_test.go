package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/sut"
)

func TestHTTPClientFlag(t *testing.T) {
	base := []string{"--target", "http://127.0.0.1:1", "--model", "m"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, ""}, // the default: the loop where it runs, else the pool
		{[]string{"--http-client", "loop"}, sut.HTTPClientLoop},
		{[]string{"--http-client", "pool"}, sut.HTTPClientPool},
	} {
		req, err := parseRunFlags(append(append([]string{}, base...), c.args...), io.Discard)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if req.spec.HTTPClient != c.want {
			t.Errorf("%v: HTTP client %q, want %q", c.args, req.spec.HTTPClient, c.want)
		}
	}
	_, err := parseRunFlags(append(base, "--http-client", "fast"), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--http-client") {
		t.Fatalf("error %v, want one naming --http-client", err)
	}
}

// Both HTTP clients complete the same Server run against the same target,
// every sample answered.
func TestHTTPClientsRunTheSameTrace(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	p := startProxy(t)
	issued := map[string]int64{}
	for _, client := range []string{sut.HTTPClientLoop, sut.HTTPClientPool} {
		dir := t.TempDir()
		inv := runArgs("--target", targetOf(p, "http"), "--model", "simple", "--scenario", "Server", "--target-qps", "300",
			"--target-latency-ms", "100", "--min-duration-ms", "300", "--min-query-count", "50", "--http-client", client, "--out", dir)
		res := completedRun(t, inv, dir)
		if res.SamplesFailed != 0 || res.QueriesCompleted != res.QueriesIssued {
			t.Fatalf("%s: %d failed, %d of %d completed: %v", client, res.SamplesFailed, res.QueriesCompleted, res.QueriesIssued, inv)
		}
		issued[client] = res.QueriesIssued
	}
	if issued[sut.HTTPClientLoop] != issued[sut.HTTPClientPool] {
		t.Fatalf("queries issued %v: the same settings must give the same trace", issued)
	}
}

func TestIssueSlackFlag(t *testing.T) {
	base := []string{"--target", "http://127.0.0.1:1", "--model", "m"}
	for _, c := range []struct {
		args []string
		want time.Duration
	}{
		{nil, 0}, // the default: runner.IssueSlackFor the settings
		{[]string{"--issue-slack", "50us"}, 50 * time.Microsecond},
		{[]string{"--issue-slack", "1ms"}, time.Millisecond},
	} {
		req, err := parseRunFlags(append(append([]string{}, base...), c.args...), io.Discard)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if req.spec.IssueSlack != c.want {
			t.Errorf("%v: issue slack %v, want %v", c.args, req.spec.IssueSlack, c.want)
		}
	}
}
