package houserules_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repoRoot is the module root, seen from this package's directory (where go
// test runs the test binary).
const repoRoot = "../.."

// module is this repository's module path; rules name its packages relative
// to it ("pkg/loadgen"), the standard library's by their import path.
const module = "github.com/netloadgen/netloadgen"

// transports are the packages that put requests on a wire.
var transports = []string{"kserve/...", "pkg/sut/...", "pkg/httploop/...", "pkg/grpcloop/...", "net/http"}

// importRules: no package matching from may import, directly or through any
// chain of imports (this module's, the standard library's or a
// dependency's), a package matching forbid. A pattern is a package path
// relative to the module ("pkg/loadgen"), or one of the standard library's
// ("net/http"); "/..." at the end matches the package and all below it.
// Test files' imports are not counted: tests may use anything.
var importRules = []struct {
	from   []string
	forbid []string
	why    string
}{
	{
		// The core measures and schedules; which wire carries a query is the
		// SUT adapter's business. Kept transport-free, the core can drive any
		// transport (and a simulated SUT) and its timing is not entangled
		// with a client library's.
		from:   []string{"pkg/loadgen", "pkg/trace", "pkg/shape", "pkg/stats", "pkg/rng"},
		forbid: transports,
		why:    "the load generator's core stays free of any transport",
	},
	{
		// api is the wire format of loadgend's HTTP API, imported by clients;
		// it must not drag the run machinery (and everything it imports)
		// into them. The runner depends on api, not the other way round.
		from:   []string{"api"},
		forbid: []string{"pkg/runner/..."},
		why:    "the API types are the contract, not the engine",
	},
	{
		// cmd/ holds the binaries' main packages: wiring, flags, exit codes.
		// A library package that needs something from there has it in the
		// wrong place; move it under pkg/ or internal/.
		from:   []string{"pkg/..."},
		forbid: []string{"cmd/..."},
		why:    "libraries do not depend on the binaries",
	},
}

// matches reports whether the import path p matches the rule pattern pat.
// A pattern whose first element is a directory at the module root names
// this module's packages; any other, the standard library's.
func matches(pat, p string) bool {
	full := pat
	first, _, _ := strings.Cut(pat, "/")
	if fi, err := os.Stat(filepath.Join(repoRoot, first)); err == nil && fi.IsDir() {
		full = module + "/" + pat
	}
	if base, ok := strings.CutSuffix(full, "/..."); ok {
		return p == base || strings.HasPrefix(p, base+"/")
	}
	return p == full
}

// short names a package as the rules do: relative to the module when it is
// one of its own.
func short(p string) string {
	if rel, ok := strings.CutPrefix(p, module+"/"); ok {
		return rel
	}
	return p
}

// importGraph lists every package that the module's packages need
// (non-test builds, for this GOOS) with its direct imports: one `go list`.
func importGraph(t *testing.T) (pkgs []string, imports map[string][]string) {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./...")
	cmd.Dir = repoRoot
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, stderr.Bytes())
	}
	imports = map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		pkgs = append(pkgs, f[0])
		imports[f[0]] = f[1:]
	}
	return pkgs, imports
}

// chains returns, for each package reachable from src, the shortest import
// chain to it (src first).
func chains(src string, imports map[string][]string) map[string][]string {
	prev := map[string]string{src: ""}
	queue := []string{src}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, q := range imports[p] {
			if _, seen := prev[q]; !seen {
				prev[q] = p
				queue = append(queue, q)
			}
		}
	}
	out := map[string][]string{}
	for p := range prev {
		var c []string
		for q := p; q != ""; q = prev[q] {
			c = append([]string{q}, c...)
		}
		out[p] = c
	}
	return out
}

func TestImportRules(t *testing.T) {
	pkgs, imports := importGraph(t)
	for _, r := range importRules {
		for _, from := range r.from {
			found := false
			for _, src := range pkgs {
				if !strings.HasPrefix(src, module+"/") || !matches(from, src) {
					continue
				}
				found = true
				reach := chains(src, imports)
				for _, dst := range pkgs {
					c, ok := reach[dst]
					if !ok || dst == src {
						continue
					}
					for _, forbid := range r.forbid {
						if matches(forbid, dst) {
							names := make([]string, len(c))
							for i, p := range c {
								names[i] = short(p)
							}
							t.Errorf("%s imports %s via %s (rule: %s must not import %s: %s)",
								short(src), short(dst), strings.Join(names, " -> "), from, forbid, r.why)
						}
					}
				}
			}
			if !found {
				t.Errorf("import rule for %q matches no package of the module: was it moved? Update the rule", from)
			}
		}
	}
}

func TestMatches(t *testing.T) {
	for _, c := range []struct {
		pat, p string
		want   bool
	}{
		{"net/http", "net/http", true},
		{"net/http", "net/http/httptrace", false},
		{"kserve/...", module + "/kserve", true},
		{"kserve/...", module + "/kserve/inferencepb", true},
		{"pkg/sut/...", module + "/pkg/sutproxy", false},
		{"pkg/sut/...", module + "/pkg/sut", true},
		{"pkg/loadgen", module + "/pkg/loadgen", true},
		{"pkg/loadgen", "pkg/loadgen", false},
		{"cmd/...", module + "/cmd/loadgend", true},
	} {
		if got := matches(c.pat, c.p); got != c.want {
			t.Errorf("matches(%q, %q) = %v, want %v", c.pat, c.p, got, c.want)
		}
	}
}
