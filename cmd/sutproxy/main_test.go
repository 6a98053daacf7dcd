package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/netloadgen/netloadgen/kserve/inferencepb"
)

// TestMaxRequestBytesFlag: --max-request-bytes caps a gRPC message as it
// caps an HTTP body; a cap that is no size is refused.
func TestMaxRequestBytesFlag(t *testing.T) {
	for _, bad := range []string{"0", "-1", "4294967296"} {
		err := run(t.Context(), []string{"--max-request-bytes", bad}, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "--max-request-bytes") {
			t.Errorf("--max-request-bytes %s: %v", bad, err)
		}
	}

	ready := filepath.Join(t.TempDir(), "ready.json")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	ended := false
	go func() {
		done <- run(ctx, []string{"--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0", "--ready-file", ready,
			"--log-level", "error", "--max-request-bytes", "4096"}, io.Discard, io.Discard)
	}()
	defer func() {
		cancel()
		if ended {
			return
		}
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("sutproxy did not stop")
		}
	}()
	var addrs map[string]string
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(ready); err == nil && json.Unmarshal(b, &addrs) == nil {
			break
		}
		select {
		case err := <-done:
			ended = true
			t.Fatalf("sutproxy ended: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("no ready file")
		}
	}
	conn, err := grpc.NewClient(addrs["grpc"], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = inferencepb.NewGRPCInferenceServiceClient(conn).ModelInfer(t.Context(), &inferencepb.ModelInferRequest{
		ModelName:        "identity",
		RawInputContents: [][]byte{make([]byte, 8192)},
	})
	if status.Code(err) != codes.ResourceExhausted {
		t.Errorf("a message of 8192 bytes over --max-request-bytes 4096: %v, want ResourceExhausted", err)
	}
}

// TestHelpAndFlagErrors: --help and -h print the usage on stdout and exit
// 0; an unknown flag exits 2 with one line naming the nearest flag.
func TestHelpAndFlagErrors(t *testing.T) {
	for _, h := range []string{"--help", "-h"} {
		var out, errb strings.Builder
		code := exitStatus(run(t.Context(), []string{h}, &out, &errb), &errb)
		if code != 0 || !strings.Contains(out.String(), "usage: sutproxy") || !strings.Contains(out.String(), "-http-addr") || errb.String() != "" ||
			!strings.Contains(out.String(), "-tls-cert") || !strings.Contains(out.String(), "-tls-key") || !strings.Contains(out.String(), "-tls-client-ca") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", h, code, out.String(), errb.String())
		}
	}
	var out, errb strings.Builder
	code := exitStatus(run(t.Context(), []string{"--http-adr", "127.0.0.1:0"}, &out, &errb), &errb)
	if want := "sutproxy: flag provided but not defined: -http-adr: did you mean --http-addr?\n"; code != 2 || errb.String() != want || out.String() != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want stderr %q", code, out.String(), errb.String(), want)
	}
}

// TestRequireHeaderFlag: a --require-header that is not 'Name: value', or
// names a header a client cannot send, is refused before listening.
func TestRequireHeaderFlag(t *testing.T) {
	for bad, want := range map[string]string{
		"nocolon":           "want 'Name: value'",
		": x":               "want 'Name: value'",
		"Content-Length: 1": "Content-Length is written by the client itself",
	} {
		err := run(t.Context(), []string{"--http-addr", "127.0.0.1:0", "--grpc-addr", "off", "--require-header", bad}, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--require-header %q: %v, want %q", bad, err, want)
		}
	}
}
