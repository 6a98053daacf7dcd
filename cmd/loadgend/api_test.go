package main

import (
	"io"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/genai"
)

// --api reaches the run as the API asked for; a name that is no API, or an
// API the target's transport does not carry, is an error naming --api.
func TestAPIFlag(t *testing.T) {
	for _, c := range []struct {
		target, api string
		want        genai.API
		err         string
	}{
		{"grpc://127.0.0.1:1", "", "", ""},
		{"grpc://127.0.0.1:1", "kserve-stream", genai.APIKServeStream, ""},
		{"http://127.0.0.1:1/openai", "openai-chat", genai.APIOpenAIChat, ""},
		{"http://127.0.0.1:1", "openai", "", "is not one of"},
		{"http://127.0.0.1:1", "kserve-stream", "", "grpc://"},
		{"grpc://127.0.0.1:1", "generate-stream", "", "http://"},
	} {
		args := []string{"--target", c.target, "--model", "m"}
		if c.api != "" {
			args = append(args, "--api", c.api)
		}
		req, err := parseRunFlags(args, io.Discard)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), "--api") || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: error %v, want one naming --api and %q", args, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if req.spec.API != c.want {
			t.Errorf("%v: API %q, want %q", args, req.spec.API, c.want)
		}
	}
}
