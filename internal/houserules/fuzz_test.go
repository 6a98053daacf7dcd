package houserules_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"regexp"
	"strings"
	"testing"
)

// TestMakeFuzzRunsEveryTarget: every fuzz target in the tree (a top-level
// `func FuzzXxx(*testing.F)` in a _test.go file, found by parsing, not by the
// Makefile's grep) is run by `make fuzz`, in its own package's directory.
func TestMakeFuzzRunsEveryTarget(t *testing.T) {
	var targets []string // "./dir FuzzName"
	fset := token.NewFileSet()
	for _, f := range goFiles(t, true) {
		file, err := parser.ParseFile(fset, repoRoot+"/"+f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Fuzz") && fn.Type.Params.NumFields() == 1 {
				targets = append(targets, fmt.Sprintf("./%s %s", path.Dir(f), fn.Name.Name))
			}
		}
	}
	if len(targets) == 0 {
		t.Fatal("found no fuzz target in the tree")
	}

	cmd := exec.Command("make", "-n", "fuzz", "FUZZTIME=1s")
	cmd.Dir = repoRoot
	// Run from inside `make test`, the child must not take the parent's
	// flags (-n, -j's jobserver).
	cmd.Env = append(os.Environ(), "MAKEFLAGS=", "MFLAGS=", "MAKELEVEL=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n fuzz: %v\n%s", err, out)
	}
	run := map[string]bool{}
	line := regexp.MustCompile(`(?m)^\S*go test (\S+) -run '\^\$' -fuzz '\^(Fuzz\w*)\$' -fuzztime 1s$`)
	for _, m := range line.FindAllStringSubmatch(string(out), -1) {
		run[m[1]+" "+m[2]] = true
	}
	var missing []string
	for _, target := range targets {
		if !run[target] {
			missing = append(missing, target)
		}
	}
	if len(missing) > 0 || len(run) != len(targets) {
		t.Errorf("make fuzz runs %d targets, the tree has %d; not run: %q. `make -n fuzz` printed:\n%s",
			len(run), len(targets), missing, out)
	}
}
