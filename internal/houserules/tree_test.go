package houserules_test

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// goFiles lists the repository's Go files (tracked, and untracked but not
// ignored, as `make fuzz`'s `git grep --untracked` sees them), relative to
// the repository root, outside testdata directories: the test files when
// tests is true, the others when false.
func goFiles(t *testing.T, tests bool) []string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "--cached", "--others", "--exclude-standard", "--", "*.go")
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = errors.New(string(ee.Stderr))
		}
		t.Fatalf("git ls-files: %v", err)
	}
	var files []string
	for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f == "" || strings.HasSuffix(f, "_test.go") != tests || inTestdata(f) {
			continue
		}
		if _, err := os.Stat(filepath.Join(repoRoot, f)); errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the work tree, not yet in the index
		}
		files = append(files, f)
	}
	return files
}

func inTestdata(f string) bool {
	for _, e := range strings.Split(filepath.ToSlash(filepath.Dir(f)), "/") {
		if e == "testdata" {
			return true
		}
	}
	return false
}
