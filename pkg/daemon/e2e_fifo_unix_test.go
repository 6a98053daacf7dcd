//go:build unix

package daemon_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/daemon"
)

// TestSecretFileFIFORefused is issue 26 #4 against the daemon: a run spec
// whose header is @file: of a FIFO inside LOADGEND_SECRETS_DIR is a 400
// naming the header, answered at once; before, the request blocked in
// open(2) until something wrote to the FIFO. The client's own timeout
// bounds the wait, so a regression fails rather than hangs.
func TestSecretFileFIFORefused(t *testing.T) {
	dir := secretsDir(t)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	target := e2eSUT(t)
	_, c := e2eService(t, func(cfg *daemon.Config) { cfg.SecretsDir = dir })
	// Runs before the service's shutdown (cleanups run last first): a
	// writer that opens and closes releases a handler blocked on the FIFO.
	t.Cleanup(func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/v1/runs",
		strings.NewReader(headerSpec(t, target, map[string]string{"X-Key": "@file:fifo"})))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST /v1/runs with X-Key @file:fifo: %v (the daemon waits on the FIFO)", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var eb api.ErrorBody
	if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(b, &eb) != nil || eb.Error.Field != "headers" {
		t.Fatalf("POST = %d %s, want 400 naming headers", resp.StatusCode, b)
	}
	for _, w := range []string{"X-Key", "@file:fifo", "not a regular file"} {
		if !strings.Contains(eb.Error.Message, w) {
			t.Errorf("message %q does not say %q", eb.Error.Message, w)
		}
	}
}
