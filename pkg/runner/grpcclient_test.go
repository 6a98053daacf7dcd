package runner

import (
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// An unknown gRPC client is refused before anything is dialled.
func TestUnknownGRPCClientIsRefused(t *testing.T) {
	s := loadgen.DefaultSettings(loadgen.RulesetLoadGen6)
	s.Scenario = trace.Server
	s.ServerTargetQPS = 10
	spec := Spec{Target: "grpc://127.0.0.1:1", Model: "m", Settings: s, GRPCClient: "fast"}
	_, err := Run(t.Context(), spec, Options{})
	if err == nil || !strings.Contains(err.Error(), `gRPC client "fast"`) {
		t.Fatalf("error %v, want one naming the gRPC client", err)
	}
}
