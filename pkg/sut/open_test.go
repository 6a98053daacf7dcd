//go:build linux

package sut

import (
	"fmt"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/kserve/grpcclient"
	"github.com/netloadgen/netloadgen/kserve/httpclient"
)

// openClients are clients of a port nothing listens on: Open dials nothing.
func openClients(t *testing.T) (*httpclient.Client, *grpcclient.Client) {
	t.Helper()
	hc, err := httpclient.New("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hc.Close() })
	gc, err := grpcclient.New("127.0.0.1:1", grpcclient.WithConns(2))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gc.Close() })
	return hc, gc
}

// httpsClient is an https:// client of a port nothing listens on.
func httpsClient(t *testing.T) *httpclient.Client {
	t.Helper()
	hs, err := httpclient.New("https://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hs.Close() })
	return hs
}

// The engine drives the chosen SUT itself: a loop where one runs (here,
// Linux) unless the pool or grpc-go is named or responses are captured.
func TestOpenChoosesTheClient(t *testing.T) {
	hc, gc := openClients(t)
	hs := httpsClient(t)
	capture := Options{Capture: true}
	tests := []struct {
		name string
		cfg  Config
		want string // the engine SUT's type
	}{
		{"HTTP default", Config{HTTP: hc}, "*sut.Loop"},
		{"HTTP loop", Config{HTTP: hc, HTTPClient: HTTPClientLoop}, "*sut.Loop"},
		{"HTTP pool", Config{HTTP: hc, HTTPClient: HTTPClientPool}, "*sut.Network"},
		{"HTTP capture", Config{HTTP: hc, HTTPClient: HTTPClientLoop, Options: capture}, "*sut.Network"},
		{"gRPC default", Config{GRPC: gc}, "*sut.GRPCLoop"},
		{"gRPC loop", Config{GRPC: gc, GRPCClient: GRPCClientLoop}, "*sut.GRPCLoop"},
		{"gRPC grpc-go", Config{GRPC: gc, GRPCClient: GRPCClientGRPC}, "*sut.Network"},
		{"gRPC capture", Config{GRPC: gc, Options: capture}, "*sut.Network"},
		// The HTTP loop speaks TLS; the gRPC loop plain text only: a
		// grpcs:// target's default is grpc-go.
		{"HTTPS default", Config{HTTP: hs, TLS: true}, "*sut.Loop"},
		{"HTTPS loop", Config{HTTP: hs, TLS: true, HTTPClient: HTTPClientLoop}, "*sut.Loop"},
		{"HTTPS pool", Config{HTTP: hs, TLS: true, HTTPClient: HTTPClientPool}, "*sut.Network"},
		{"gRPC TLS default", Config{GRPC: gc, TLS: true}, "*sut.Network"},
		{"gRPC TLS, the HTTP loop named", Config{GRPC: gc, TLS: true, HTTPClient: HTTPClientLoop}, "*sut.Network"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Addr, cfg.Library, cfg.MaxConns = "127.0.0.1:1", library(t, true), 4
			cfg.Options.Model, cfg.Options.MaxBatch = "m", 8
			a, err := Open(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			if got := fmt.Sprintf("%T", a.SUT()); got != tc.want {
				t.Errorf("engine SUT %s, want %s", got, tc.want)
			}
			if a.UsesHTTPLoop() != (tc.want == "*sut.Loop") || a.UsesGRPCLoop() != (tc.want == "*sut.GRPCLoop") {
				t.Errorf("UsesHTTPLoop %v, UsesGRPCLoop %v with %s", a.UsesHTTPLoop(), a.UsesGRPCLoop(), tc.want)
			}
		})
	}
}

func TestOpenRefuses(t *testing.T) {
	hc, gc := openClients(t)
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{HTTP: hc, HTTPClient: "fast"}, `HTTP client "fast": want "loop" or "pool"`},
		{Config{GRPC: gc, GRPCClient: "fast"}, `gRPC client "fast": want "loop" or "grpc"`},
		{Config{}, "exactly one"},
		{Config{HTTP: hc, GRPC: gc}, "exactly one"},
		{Config{GRPC: gc, TLS: true, GRPCClient: GRPCClientLoop}, `gRPC client "loop": the gRPC event-loop client speaks plain text only`},
	}
	for _, tc := range tests {
		tc.cfg.Library, tc.cfg.Options.Model = library(t, true), "m"
		if _, err := Open(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%+v): %v, want an error containing %q", tc.cfg, err, tc.want)
		}
	}
}
