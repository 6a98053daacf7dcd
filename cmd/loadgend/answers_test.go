package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/server"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/sim"
)

// badAnswerBackend serves the simulated models but spoils every answer with
// bad: well-formed, a 200, yet not the model's answer.
type badAnswerBackend struct {
	server.Backend
	bad func(*kserve.InferResponse)
}

func (b *badAnswerBackend) Infer(ctx context.Context, req *kserve.InferRequest) (*kserve.InferResponse, error) {
	resp, err := b.Backend.Infer(ctx, req)
	if err == nil {
		// The simulator may share its answers (a cache): spoil a copy.
		cp := *resp
		cp.Outputs = append([]kserve.Tensor(nil), resp.Outputs...)
		b.bad(&cp)
		resp = &cp
	}
	return resp, err
}

// TestRunAgainstBadAnswers: a SUT whose every answer is a 200 that is not
// the model's (no outputs, another output name, datatype or shape) fails
// every sample as a bad response, on each client: the run is INVALID, and
// nothing completed, so Completed samples per second is 0 in result.json
// and in the summary.
func TestRunAgainstBadAnswers(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	spec, err := sim.ParseModelFlag(model2ms)
	if err != nil {
		t.Fatal(err)
	}
	spoil := []struct {
		name string
		bad  func(*kserve.InferResponse)
	}{
		{"no outputs", func(r *kserve.InferResponse) { r.Outputs = nil }},
		{"wrong output name", func(r *kserve.InferResponse) { r.Outputs[0].Name = "PROBS" }},
		{"wrong datatype", func(r *kserve.InferResponse) { r.Outputs[0].Datatype = kserve.Int32 }},
		{"wrong shape", func(r *kserve.InferResponse) {
			o := &r.Outputs[0]
			o.Shape = []int64{o.Shape[0], 2, o.Shape[1] / 2} // the same bytes
		}},
	}
	clients := []struct {
		transport string
		args      []string
	}{
		{"http", nil}, {"http", []string{"--http-client", "pool"}}, {"http-json", nil},
		{"grpc", nil}, {"grpc", []string{"--grpc-client", "grpc"}},
	}
	for i, c := range clients {
		sp := spoil[i%len(spoil)]
		t.Run(c.transport+strings.Join(c.args, "")+"/"+sp.name, func(t *testing.T) {
			s, err := sim.New([]sim.ModelSpec{spec})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			httpAddr, grpcAddr, _ := serveBackend(t, &badAnswerBackend{Backend: s, bad: sp.bad})
			target := "http://" + httpAddr
			if c.transport == "grpc" {
				target = "grpc://" + grpcAddr
			}
			dir := t.TempDir()
			args := append(append(transportArgs(c.transport), c.args...), "--target", target, "--model", "m", "--scenario", "Server",
				"--target-qps", "200", "--target-latency-ms", "50", "--min-duration-ms", "300", "--min-query-count", "50", "--out", dir)
			inv := runArgs(args...)
			res := completedRun(t, inv, dir)
			if res.Valid || !hasReason(res, "samples failed") {
				t.Fatalf("a run of bad answers is not INVALID for its failed samples: %q", res.InvalidReasons)
			}
			if res.SamplesIssued == 0 || res.SamplesFailed != res.SamplesIssued || res.SamplesCompleted != 0 {
				t.Errorf("%d issued, %d failed, %d completed: want every sample failed", res.SamplesIssued, res.SamplesFailed, res.SamplesCompleted)
			}
			if res.CompletedSamplesPerSec != 0 || res.Metric.Value != 0 {
				t.Errorf("completed %.2f samples/s (metric %v) with no sample answered", res.CompletedSamplesPerSec, res.Metric)
			}
			if len(res.Errors) == 0 || !strings.Contains(res.Errors[0], kserve.ErrBadResponse.Error()) {
				t.Errorf("errors %q: want bad responses", res.Errors)
			}
			summary, err := os.ReadFile(filepath.Join(dir, runlog.SummaryFile))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(summary), "Completed samples per second    : 0.00\n") {
				t.Errorf("summary:\n%s", summary)
			}
		})
	}
}
