//go:build unix

package secret

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A reference under LOADGEND_SECRETS_DIR naming a FIFO, a socket or a link
// to one is refused at once (issue 26 #4): opening a FIFO for reading
// blocks until a writer comes, and a request would wait on it for ever.
// Each Resolve runs in a goroutine with a bounded wait, so that a
// regression fails here rather than hanging the package's tests.
func TestResolveFileRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// Whatever happens, nothing stays blocked on the FIFO after the test:
	// a writer that opens and closes releases a reader blocked in open.
	t.Cleanup(func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, "sock"), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	if err := os.Symlink("fifo", filepath.Join(dir, "to-fifo")); err != nil {
		t.Fatal(err)
	}
	under := Sources{FilesDir: dir}
	for _, ref := range []string{"@file:fifo", "@file:" + fifo, "@file:to-fifo", "@file:sock"} {
		done := make(chan error, 1)
		go func() {
			_, err := Resolve(ref, under)
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, ErrRef) || !strings.Contains(err.Error(), ref) || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("Resolve(%q) = %v; want an ErrRef naming it and saying it is not a regular file", ref, err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("Resolve(%q) still blocked after 10 s: a FIFO must be refused, not waited on", ref)
		}
	}
}
