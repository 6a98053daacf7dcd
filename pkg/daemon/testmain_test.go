package daemon_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// binDir holds the loadgend binary the process-level tests build once for
// the whole package; TestMain removes it.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "loadgend-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// loadgendBinary builds cmd/loadgend once and returns its path. A plain
// build (no -race): the child is driven at a few hundred requests a second
// on a 2-core machine, and the in-process tests run the daemon under -race.
func loadgendBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		root, err := filepath.Abs(filepath.Join("..", ".."))
		if err != nil {
			buildErr = err
			return
		}
		out := filepath.Join(binDir, "loadgend")
		cmd := exec.Command("go", "build", "-o", out, "./cmd/loadgend")
		cmd.Dir = root
		if b, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/loadgend: %v\n%s", err, b)
			return
		}
		buildPath = out
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildPath
}
