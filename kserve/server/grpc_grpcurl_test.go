package server_test

import (
	"encoding/base64"
	"os/exec"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/internal/testtool"
	"github.com/netloadgen/netloadgen/kserve/server"
)

// grpcurl, which knows nothing of our .proto, drives the server through
// reflection (CI installs it and fails without it; elsewhere the test is skipped).
func TestGRPCWithGrpcurl(t *testing.T) {
	bin := testtool.Need(t, "grpcurl")
	addr, _ := grpcServe(t, server.NewGRPCServer(&grpcFake{}))
	raw := base64.StdEncoding.EncodeToString(grpcEchoRequest("").Inputs[0].Data)
	tests := []struct {
		name string
		args []string // flags, then the method (or "list")
		want string
	}{
		{"list", []string{"list"}, "inference.GRPCInferenceService"},
		{"health", []string{"grpc.health.v1.Health/Check"}, "SERVING"},
		{"metadata", []string{"-d", `{"name":"echo"}`, "inference.GRPCInferenceService/ModelMetadata"}, "OUT_X"},
		{"infer", []string{"-d", `{"model_name":"echo","id":"g1","inputs":[{"name":"X","datatype":"FP32","shape":[1,16]}],"raw_input_contents":["` + raw + `"]}`,
			"inference.GRPCInferenceService/ModelInfer"}, raw},
		{"unknown model", []string{"-d", `{"name":"nope"}`, "inference.GRPCInferenceService/ModelMetadata"}, "NotFound"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"-plaintext", "-max-time", "10"}, tc.args[:len(tc.args)-1]...)
			args = append(args, addr, tc.args[len(tc.args)-1])
			out, _ := exec.CommandContext(t.Context(), bin, args...).CombinedOutput()
			if !strings.Contains(string(out), tc.want) {
				t.Errorf("grpcurl %v:\n%s\nwant it to contain %q", args, out, tc.want)
			}
		})
	}
}
