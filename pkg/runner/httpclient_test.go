package runner

import (
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// An unknown HTTP client is refused before anything is dialled.
func TestUnknownHTTPClientIsRefused(t *testing.T) {
	s := loadgen.DefaultSettings(loadgen.RulesetLoadGen6)
	s.Scenario = trace.Server
	s.ServerTargetQPS = 10
	spec := Spec{Target: "http://127.0.0.1:1", Model: "m", Settings: s, HTTPClient: "fast"}
	_, err := Run(t.Context(), spec, Options{})
	if err == nil || !strings.Contains(err.Error(), `HTTP client "fast"`) {
		t.Fatalf("error %v, want one naming the HTTP client", err)
	}
}
