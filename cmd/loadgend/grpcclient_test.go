package main

import (
	"io"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/sut"
)

func TestGRPCClientFlag(t *testing.T) {
	base := []string{"--target", "http://127.0.0.1:1", "--model", "m"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, ""}, // the default: the loop where it runs, else grpc-go
		{[]string{"--grpc-client", "loop"}, sut.GRPCClientLoop},
		{[]string{"--grpc-client", "grpc"}, sut.GRPCClientGRPC},
	} {
		req, err := parseRunFlags(append(append([]string{}, base...), c.args...), io.Discard)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if req.spec.GRPCClient != c.want {
			t.Errorf("%v: gRPC client %q, want %q", c.args, req.spec.GRPCClient, c.want)
		}
	}
	_, err := parseRunFlags(append(base, "--grpc-client", "fast"), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--grpc-client") {
		t.Fatalf("error %v, want one naming --grpc-client", err)
	}
}

// Both gRPC clients complete the same Server run against the same target,
// every sample answered.
func TestGRPCClientsRunTheSameTrace(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	p := startProxy(t)
	issued := map[string]int64{}
	for _, client := range []string{sut.GRPCClientLoop, sut.GRPCClientGRPC} {
		dir := t.TempDir()
		inv := runArgs("--target", targetOf(p, "grpc"), "--model", "simple", "--scenario", "Server", "--target-qps", "300",
			"--target-latency-ms", "100", "--min-duration-ms", "300", "--min-query-count", "50", "--grpc-client", client, "--out", dir)
		res := completedRun(t, inv, dir)
		if res.SamplesFailed != 0 || res.QueriesCompleted != res.QueriesIssued {
			t.Fatalf("%s: %d failed, %d of %d completed: %v", client, res.SamplesFailed, res.QueriesCompleted, res.QueriesIssued, inv)
		}
		issued[client] = res.QueriesIssued
	}
	if issued[sut.GRPCClientLoop] != issued[sut.GRPCClientGRPC] {
		t.Fatalf("queries issued %v: the same settings must give the same trace", issued)
	}
}
