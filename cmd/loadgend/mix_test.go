package main

import (
	"bytes"
	"context"
	"io"
	"math"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/sutproxy"
	"github.com/netloadgen/netloadgen/pkg/sutproxy/sutproxytest"
)

// inferenceCounts is each model's inference count on the servers.
func inferenceCounts(t *testing.T, ps ...*sutproxy.Proxy) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	for _, p := range ps {
		st, err := p.Backend().ModelStatistics(context.Background(), "", "")
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range st.ModelStats {
			out[m.Name] += m.InferenceCount
		}
	}
	return out
}

// TestMixOfThreeModels is issue 31's acceptance for a mix: `loadgend run
// --mix` over three simulated models, one at a target of its own, each
// query at its model: the servers' per-model counts are the shape's draws
// (the schedule the same flags build, walked again), and those are
// within 3σ of the weights.
func TestMixOfThreeModels(t *testing.T) {
	p := sutproxytest.Start(t, "name=a,latency=constant:100us", "name=b,dims=4,dtype=INT32,latency=constant:100us")
	q := sutproxytest.Start(t, "name=c,dims=32,latency=constant:100us")
	mix := "a=0.5,b=0.3,c=0.2@" + sutproxytest.Target(q, "grpc")
	args := []string{"run", "--target", sutproxytest.Target(p, "http"), "--mix", mix, "--target-qps", "400", "--min-duration-ms", "1500",
		"--total-samples", "16", "--performance-samples", "16", "--no-early-verdict", "--out", t.TempDir()}
	var stdout, stderr bytes.Buffer
	if code := run(args, &stdout, &stderr); code == exitError {
		t.Fatalf("exit %d: %s%s", code, stdout.String(), stderr.String())
	}
	req, err := parseRunFlags(args[1:], io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{}
	names := []string{"a", "b", "c"}
	a, err := req.spec.Settings.Shape.Arrivals()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for x, ok := a.Next(); ok; x, ok = a.Next() {
		want[names[x.Model]]++
		n++
	}
	a.Close()
	got := inferenceCounts(t, p, q)
	for i, m := range names {
		if got[m] != want[m] {
			t.Errorf("model %s: the servers counted %d inferences, the schedule drew %d (all %v, want %v)", m, got[m], want[m], got, want)
		}
		w := []float64{0.5, 0.3, 0.2}[i]
		if sd := math.Sqrt(float64(n) * w * (1 - w)); math.Abs(float64(want[m])-float64(n)*w) > 3*sd {
			t.Errorf("model %s: %d of %d queries, weight %v: outside 3σ (%.1f)", m, want[m], n, w, sd)
		}
	}
	if n < 450 {
		t.Errorf("%d queries in 1.5 s at 400/s", n)
	}
}
