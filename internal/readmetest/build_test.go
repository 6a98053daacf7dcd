package readmetest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const repoRoot = "../.."

// binaries are built once for the package's tests into a directory of its
// own, the way `make build` builds them (without the version stamp).
var binaries = struct {
	once sync.Once
	dir  string
	err  error
	out  []byte
}{}

func TestMain(m *testing.M) {
	code := m.Run()
	if binaries.dir != "" {
		os.RemoveAll(binaries.dir)
	}
	os.Exit(code)
}

// buildBinaries returns a directory holding loadgend and sutproxy.
func buildBinaries(t *testing.T) string {
	t.Helper()
	binaries.once.Do(func() {
		binaries.dir, binaries.err = os.MkdirTemp("", "readmetest-bin-")
		if binaries.err != nil {
			return
		}
		cmd := exec.Command("go", "build", "-trimpath", "-o", binaries.dir+string(filepath.Separator), "./cmd/loadgend", "./cmd/sutproxy")
		cmd.Dir = repoRoot
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		binaries.out, binaries.err = cmd.CombinedOutput()
	})
	if binaries.err != nil {
		t.Fatalf("go build: %v\n%s", binaries.err, binaries.out)
	}
	return binaries.dir
}

// cleanEnv is the test's environment without the variables the README and
// the scripts read, so a developer's own settings (a LOADGEND_API_TOKEN, an
// exported API) cannot change what runs.
func cleanEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "LOADGEND_") || strings.HasPrefix(name, "SERVE_") || strings.HasPrefix(name, "DEMO_") ||
			name == "API" || name == "SUT" || name == "SUT_GRPC" || name == "BIN" || name == "TMPDIR" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}
