package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/pkg/sutproxy/sutproxytest"
)

// shortRun are the flags of a brief SingleStream run of model2ms.
func shortRun(target, out string, extra ...string) []string {
	return append([]string{"--target", target, "--model", "m", "--scenario", "SingleStream",
		"--min-duration-ms", "50", "--min-query-count", "10", "--out", out}, extra...)
}

// wantExit2 checks a run refused before it started: exit 2, one line
// naming the problem.
func wantExit2(t *testing.T, inv invocation, want string) {
	t.Helper()
	line := strings.TrimSuffix(inv.stderr, "\n")
	if inv.code != exitError || strings.Contains(line, "\n") || !strings.Contains(line, want) {
		t.Errorf("want exit 2 and one line containing %q: %v", want, inv)
	}
}

// TestRunBearerToken: an endpoint that wants a bearer token refuses a run
// without it (exit 2, naming the refusal), and serves one that gives it,
// literally, from the environment or from a file.
func TestRunBearerToken(t *testing.T) {
	const token = "Bearer tok-5772"
	p := sutproxytest.StartFront(t, "", []kserve.Header{{Name: "Authorization", Value: token}}, model2ms)
	t.Setenv("NETLOADGEN_TEST_TOKEN", token)
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tr := range []string{"http", "grpc"} {
		want := map[string]string{"http": "the endpoint refused the credentials: HTTP 401", "grpc": "the endpoint refused the credentials: gRPC UNAUTHENTICATED"}[tr]
		wantExit2(t, runArgs(shortRun(targetOf(p, tr), filepath.Join(t.TempDir(), "out"))...), want)
		wantExit2(t, runArgs(shortRun(targetOf(p, tr), filepath.Join(t.TempDir(), "out"), "--header", "Authorization: Bearer wrong")...), want)
		for _, v := range []string{token, "@env:NETLOADGEN_TEST_TOKEN", "@file:" + file} {
			dir := filepath.Join(t.TempDir(), "out")
			inv := runArgs(shortRun(targetOf(p, tr), dir, "--header", "Authorization: "+v)...)
			res := completedRun(t, inv, dir)
			if res.SamplesFailed != 0 {
				t.Errorf("%s %s: %d samples failed: %v", tr, v, res.SamplesFailed, res.Errors)
			}
			if shown := "Authorization: " + map[bool]string{true: v, false: "<redacted>"}[v != token]; len(res.Headers) != 1 || res.Headers[0] != shown {
				t.Errorf("%s: result.json headers %q, want %q", tr, res.Headers, shown)
			}
		}
	}
}

// TestRunHostRouting: behind an ingress that routes by Host, a run without
// the Host header finds no route (exit 2, saying to check it) and one with
// --header 'Host: NAME' runs, over both protocols.
func TestRunHostRouting(t *testing.T) {
	const host = "sklearn-iris.default.example.com"
	p := sutproxytest.StartFront(t, host, nil, model2ms)
	for _, tr := range []string{"http", "grpc"} {
		wantExit2(t, runArgs(shortRun(targetOf(p, tr), filepath.Join(t.TempDir(), "out"))...), "no route: check the Host header")
		dir := filepath.Join(t.TempDir(), "out")
		res := completedRun(t, runArgs(shortRun(targetOf(p, tr), dir, "--header", "Host: "+host)...), dir)
		if res.SamplesFailed != 0 {
			t.Errorf("%s: %d samples failed: %v", tr, res.SamplesFailed, res.Errors)
		}
	}
}

// TestRunHeaderFlagErrors: a bad --header is refused before anything is
// dialled, naming the flag and the header, never the value.
func TestRunHeaderFlagErrors(t *testing.T) {
	t.Setenv("NETLOADGEN_TEST_BAD", "a\nb-secret")
	for _, c := range []struct{ header, want string }{
		{"Content-Length: 5", "--header: Content-Length is written by the client itself"},
		{"Te: trailers", "--header: Te is written by the client itself"},
		{"Accept-Encoding: gzip", "--header: Accept-Encoding: answers are read uncompressed"},
		{":path: /x", "--header: :path is an HTTP/2 pseudo-header"},
		{"no colon", "--header: want 'Name: value'"},
		{"Bad Name: x", "--header: header name \"Bad Name\""},
		{"X-Key: @env:NETLOADGEN_TEST_UNSET", "--header: X-Key: secret reference @env:NETLOADGEN_TEST_UNSET: the environment variable NETLOADGEN_TEST_UNSET is not set"},
		{"X-Key: @env:NETLOADGEN_TEST_BAD", "--header: X-Key: @env:NETLOADGEN_TEST_BAD: the value has a byte 0x0a"},
		{"X-Key: @file:/nonexistent/token", "--header: X-Key: secret reference @file:/nonexistent/token"},
	} {
		inv := runArgs("--target", "http://127.0.0.1:1", "--model", "m", "--header", c.header)
		wantExit2(t, inv, c.want)
		if strings.Contains(inv.stderr, "b-secret") {
			t.Errorf("%q: the value is shown: %s", c.header, inv.stderr)
		}
	}
	wantExit2(t, runArgs("--target", "http://127.0.0.1:1", "--model", "m", "--header", "X-A: 1", "--header", "x-a: 2"), "--header: x-a given twice")
}
