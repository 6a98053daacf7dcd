// Package testtool finds the external programs some tests drive (curl,
// grpcurl, prometheus). Outside CI a missing program skips the test; in CI
// (CI=true, where .ci/run installs them) it fails it, so a broken install
// step cannot turn into a silently green run.
package testtool

import (
	"os"
	"os/exec"
	"testing"
)

// Need returns the path of program name, skipping or failing t when it is
// not installed.
func Need(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed; .ci/run should have installed it: %v", name, err)
	}
	t.Skipf("%s not installed", name)
	return ""
}
