package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// srcDir is this package's source directory, the working directory the
// tests started in.
var srcDir string

// TestMain runs the tests in a directory of their own: a run without --out
// writes to a new directory under ./runs, which must not land in the
// source tree.
func TestMain(m *testing.M) {
	os.Exit(func() int {
		wd, err := os.Getwd()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		srcDir = wd
		tmp, err := os.MkdirTemp("", "loadgend-test-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		defer os.RemoveAll(tmp)
		if err := os.Chdir(tmp); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		return m.Run()
	}())
}

// srcPath is a path relative to the package's source directory.
func srcPath(rel string) string { return filepath.Join(srcDir, rel) }
