package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/server"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/sim"
)

// statusBackend serves the simulated models' metadata (so the probe
// passes) but answers every inference with code: HTTP 500 over HTTP for
// INTERNAL, the code itself over gRPC.
type statusBackend struct {
	server.Backend
	code codes.Code
}

func (b *statusBackend) Infer(context.Context, *kserve.InferRequest) (*kserve.InferResponse, error) {
	return nil, kserve.Errorf(b.code, "boom")
}

// TestRunAgainstFailingServer: a server answering every request with an
// error status, through the real clients: result.json counts the failures
// under one kind with the status and an example, nothing completed per
// second, the advice is to fix the failures and never to change the rate,
// and the summary lists the failures by kind (issue 18 #5).
func TestRunAgainstFailingServer(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	spec, err := sim.ParseModelFlag(model2ms)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		transport string
		code      codes.Code
		status    string
		example   string
	}{
		{"http", codes.Internal, "HTTP 500", "server: HTTP 500: boom"},
		{"grpc", codes.Unavailable, "gRPC UNAVAILABLE", "server: Unavailable: boom"},
	} {
		t.Run(c.transport, func(t *testing.T) {
			s, err := sim.New([]sim.ModelSpec{spec})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			httpAddr, grpcAddr, _ := serveBackend(t, &statusBackend{Backend: s, code: c.code})
			target := "http://" + httpAddr
			if c.transport == "grpc" {
				target = "grpc://" + grpcAddr
			}
			dir := t.TempDir()
			inv := runArgs("--target", target, "--model", "m", "--scenario", "Server", "--target-qps", "200",
				"--target-latency-ms", "50", "--min-duration-ms", "300", "--min-query-count", "50", "--out", dir)
			res := completedRun(t, inv, dir)
			if res.Valid || res.SamplesIssued == 0 || res.SamplesFailed != res.SamplesIssued || res.SamplesCompleted != 0 {
				t.Fatalf("valid %v, %d issued, %d failed, %d completed: want every sample failed", res.Valid, res.SamplesIssued, res.SamplesFailed, res.SamplesCompleted)
			}
			want := loadgen.Failure{Outcome: "error", Status: c.status, Count: res.SamplesFailed, Example: c.example}
			if len(res.Failures) != 1 || res.Failures[0] != want {
				t.Errorf("failures %+v, want [%+v]", res.Failures, want)
			}
			if res.CompletedSamplesPerSec != 0 || res.Metric.Value != 0 {
				t.Errorf("completed %.2f samples/s (metric %v) with no sample answered", res.CompletedSamplesPerSec, res.Metric)
			}
			for _, rec := range res.Recommendations {
				if strings.Contains(strings.ToLower(rec), "qps") {
					t.Errorf("advice %q on the rate when failures made the run INVALID (all: %q)", rec, res.Recommendations)
				}
			}
			summary, err := os.ReadFile(filepath.Join(dir, runlog.SummaryFile))
			if err != nil {
				t.Fatal(err)
			}
			line := " * " + runlog.FailureLines(res.Failures)[0] + "\n"
			if !strings.Contains(string(summary), "Failures by kind:\n"+line) || !strings.Contains(line, "failed: error "+c.status+" (e.g. "+c.example+")") {
				t.Errorf("summary lacks %q:\n%s", line, summary)
			}
			if !strings.Contains(string(summary), "Completed samples per second    : 0.00\n") {
				t.Errorf("summary:\n%s", summary)
			}
		})
	}
}
