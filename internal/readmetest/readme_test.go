package readmetest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/internal/testtool"
)

// blocksTimeout bounds the README's tested blocks together: their runs
// last about 15 s.
const blocksTimeout = 3 * time.Minute

// TestReadme does what the README tells a newcomer: start `make serve`'s
// script, paste the lines it prints, then run every shell block marked
// tested, in order (the README's, then those of the pages docs/README.md
// links, in its order), in one bash session (so $ID set in one block is there in
// the next) from a directory whose bin/ holds the binaries, as the
// repository's root does after `make build`. Each block must exit 0 under
// bash -euo pipefail; every finished run must be VALID; Ctrl-C must stop
// both servers.
func TestReadme(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries and runs the README's scenarios")
	}
	testtool.Need(t, "bash")
	testtool.Need(t, "curl")
	blocks := sessionBlocks(t)
	bin := buildBinaries(t)
	s := startServe(t, bin)
	for _, name := range []string{"API", "SUT", "SUT_GRPC"} {
		if s.exports[name] == "" {
			t.Fatalf("serve.sh printed no `export %s=` line\n%s", name, s.output())
		}
	}
	if got, want := s.exports["API"], "http://"+s.addrs[0]; got != want {
		t.Errorf("serve.sh: export API=%s, want %s (SERVE_API_ADDR)", got, want)
	}
	for _, url := range []string{s.exports["API"] + "/healthz", s.exports["SUT"] + "/v2/health/ready"} {
		if code := httpStatus(t, url); code != http.StatusOK {
			t.Errorf("GET %s = %d, want 200", url, code)
		}
	}

	t.Run("port in use", func(t *testing.T) {
		// A second `make serve` on the same addresses says which one is taken.
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		out, err := runScript(ctx, repoRoot, serveEnv(bin, t.TempDir(), s.addrs), "bash", "scripts/serve.sh")
		if code := exitCode(err); code != 2 {
			t.Errorf("second serve.sh: exit %d (%v), want 2\n%s", code, err, out)
		}
		if want := s.addrs[1] + " is already in use"; !strings.Contains(out, want) || !strings.Contains(out, "SERVE_SUT_HTTP=") {
			t.Errorf("second serve.sh said %q, want %q and the variable to change", out, want)
		}
	})

	t.Run("blocks", func(t *testing.T) {
		work := t.TempDir()
		if err := os.Symlink(bin, filepath.Join(work, "bin")); err != nil {
			t.Fatal(err)
		}
		script, lines := sessionScript(t, blocks, work)
		// The count, so a change that moves blocks can show none was lost.
		t.Logf("%d tested blocks run: %s", len(lines), blocksPerFile(lines))
		ctx, cancel := context.WithTimeout(t.Context(), blocksTimeout)
		defer cancel()
		env := cleanEnv("TMPDIR="+t.TempDir(), "API="+s.exports["API"], "SUT="+s.exports["SUT"], "SUT_GRPC="+s.exports["SUT_GRPC"])
		out, err := runScript(ctx, work, env, "bash", "-euo", "pipefail", script)
		t.Logf("README session output:\n%s", out)
		if err != nil {
			t.Fatalf("the block at %s failed: %v (output above)", failedBlock(out, lines), err)
		}
		if !strings.HasSuffix(strings.TrimSpace(out), "::readme end") {
			t.Fatalf("the session did not reach its end (output above)")
		}
		runs := doneRuns(t, s.exports["API"])
		if len(runs) == 0 {
			t.Fatal("the README's curl session left no finished run in loadgend")
		}
		for _, r := range runs {
			if r.Validity != "VALID" {
				b, _ := json.MarshalIndent(r, "", "  ")
				t.Errorf("run %s ended %q, want VALID: %s", r.ID, r.Validity, b)
			}
		}
	})

	t.Run("Ctrl-C stops both", func(t *testing.T) { s.stop(t) })
}

// sessionScript writes each tested block to a file under dir and a script
// sourcing them in order, with a marker before each, its index in the
// file:line list returned.
// A block needing a program that is not installed is left out (and fails the
// test in CI, as testtool.Need does).
func sessionScript(t *testing.T, blocks []block, dir string) (string, []string) {
	t.Helper()
	var sb strings.Builder
	var lines []string // file:line of each block the session sources
	for i, b := range blocks {
		if !b.tested {
			continue
		}
		missing := ""
		for _, prog := range b.needs {
			if _, err := exec.LookPath(prog); err != nil {
				missing = prog
			}
		}
		if missing != "" {
			if os.Getenv("CI") == "true" {
				t.Fatalf("the block at %s:%d needs %s, which is not installed", b.file, b.line, missing)
			}
			// A skipped subtest, so the skip shows (make test lists skips).
			t.Run(fmt.Sprintf("block at %s:%d", b.file, b.line), func(t *testing.T) {
				t.Skipf("the block at %s:%d skipped: %s not installed", b.file, b.line, missing)
			})
			continue
		}
		name := filepath.Join(dir, fmt.Sprintf(".readme-block-%02d.sh", i))
		if err := os.WriteFile(name, []byte(b.body), 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&sb, "echo '::readme block %d'\nsource %q\n", len(lines), name)
		lines = append(lines, fmt.Sprintf("%s:%d", b.file, b.line))
	}
	if len(lines) == 0 {
		t.Fatal("neither the README nor docs/ has a tested block")
	}
	sb.WriteString("echo '::readme end'\n")
	script := filepath.Join(dir, ".readme-session.sh")
	if err := os.WriteFile(script, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return script, lines
}

var blockMarker = regexp.MustCompile(`(?m)^::readme block ([0-9]+)$`)

// failedBlock is the file:line of the last block the session started.
func failedBlock(out string, lines []string) string {
	m := blockMarker.FindAllStringSubmatch(out, -1)
	if len(m) == 0 {
		return "(no block started)"
	}
	var i int
	fmt.Sscan(m[len(m)-1][1], &i)
	return lines[i]
}

// blocksPerFile counts the file:line entries by file, in their order:
// "README.md 7, docs/cli.md 2".
func blocksPerFile(lines []string) string {
	var files []string
	count := map[string]int{}
	for _, l := range lines {
		file := l[:strings.LastIndexByte(l, ':')]
		if count[file] == 0 {
			files = append(files, file)
		}
		count[file]++
	}
	parts := make([]string, len(files))
	for i, f := range files {
		parts[i] = fmt.Sprintf("%s %d", f, count[f])
	}
	return strings.Join(parts, ", ")
}

func doneRuns(t *testing.T, apiURL string) []api.RunStatus {
	t.Helper()
	resp, err := http.Get(apiURL + "/v1/runs?state=done&limit=100")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list api.RunList
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/runs?state=done = %d, %v", resp.StatusCode, err)
	}
	return list.Runs
}

func httpStatus(t *testing.T, url string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}
