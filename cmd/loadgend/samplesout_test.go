package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// --samples-out writes one line per issued sample, each with its times and
// status; the file is complete when the run has returned.
func TestRunSamplesOut(t *testing.T) {
	p := startProxy(t, model2ms)
	dir := t.TempDir()
	out := filepath.Join(t.TempDir(), "samples.jsonl")
	inv := runArgs("--target", targetOf(p, "http"), "--model", "m", "--out", dir, "--scenario", "Server", "--target-qps", "200",
		"--target-latency-ms", "50", "--min-duration-ms", "200", "--min-query-count", "40", "--samples-out", out)
	res := completedRun(t, inv, dir)
	f, err := os.Open(out)
	if err != nil {
		t.Fatalf("no samples file: %v\n%v", err, inv)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := int64(0)
	for sc.Scan() {
		var l struct {
			Sample, Scheduled, Sent int64
			FirstToken              *int64 `json:"first_token"`
			LastToken               *int64 `json:"last_token"`
			Tokens                  int
			Status                  string
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
		if l.Sample != n || l.Status != "ok" || l.LastToken == nil || *l.LastToken <= l.Scheduled || l.Sent < l.Scheduled ||
			l.FirstToken != nil || l.Tokens != 0 {
			t.Errorf("line %d of a tensor model's run: %s", n, sc.Bytes())
		}
		n++
	}
	if n != res.SamplesIssued || n == 0 {
		t.Errorf("%d lines, %d samples issued", n, res.SamplesIssued)
	}
	if res.Tokens != nil {
		t.Errorf("a tensor model's run has tokens: %+v", res.Tokens)
	}
}
