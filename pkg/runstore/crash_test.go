package runstore

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// crashHelperEnv, when set to a data directory, turns the test binary into
// the writer that TestCrashMidWrite kills.
const crashHelperEnv = "RUNSTORE_CRASH_HELPER_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashHelperEnv); dir != "" {
		os.Exit(crashHelper(dir, os.Stdout))
	}
	os.Exit(m.Run())
}

// crashHelper plays a daemon that runs one run after another, each writing
// progress.json several times, then result.json, then ending done. It
// reports every write on out once the write has returned, and runs until
// it is killed (or a bound far beyond what the test needs).
func crashHelper(dir string, out io.Writer) int {
	s, err := Open(dir, WithLogger(quietLogger()))
	if err != nil {
		fmt.Fprintln(out, "error", err)
		return 1
	}
	fail := func(err error) int { fmt.Fprintln(out, "error", err); return 1 }
	// Made before any write, so that between two writes the helper does
	// next to nothing and a kill nearly always lands inside a write.
	versions := make([][]byte, 6)
	for j := range versions {
		versions[j] = payload(j)
	}
	result := payload(100)
	for k := range 1000 {
		r, err := s.Create([]byte(`{"k":` + strconv.Itoa(k) + `}`))
		if err != nil {
			return fail(err)
		}
		if _, err := s.SetState(r.ID, Running, ""); err != nil {
			return fail(err)
		}
		var progress []byte
		for j := range 6 {
			progress = versions[j]
			if err := s.WriteFile(r.ID, ProgressFile, progress); err != nil {
				return fail(err)
			}
			fmt.Fprintln(out, "progress", r.ID, j)
		}
		if err := s.WriteFile(r.ID, ResultFile, result); err != nil {
			return fail(err)
		}
		if _, err := s.SetState(r.ID, Done, "completed"); err != nil {
			return fail(err)
		}
		fmt.Fprintln(out, "done", r.ID, sum(result), sum(progress))
	}
	return 0
}

// payload is version j of a file: a header naming the version, the body's
// length and its hash, then a body whose length depends on j, so that any
// mix of two versions, or a cut, fails checkPayload.
func payload(j int) []byte {
	body := bytes.Repeat([]byte(fmt.Sprintf("version %d ", j)), (256<<10+j*7919)/10)
	return append([]byte(fmt.Sprintf("v=%d len=%d sha=%s\n", j, len(body), sum(body))), body...)
}

// checkPayload returns the version of a whole payload, or an error for a
// torn one.
func checkPayload(b []byte) (int, error) {
	head, body, ok := bytes.Cut(b, []byte("\n"))
	if !ok {
		return 0, fmt.Errorf("no header in %d bytes", len(b))
	}
	var j, n int
	var h string
	if _, err := fmt.Sscanf(string(head), "v=%d len=%d sha=%s", &j, &n, &h); err != nil {
		return 0, fmt.Errorf("header %q: %v", head, err)
	}
	if len(body) != n || sum(body) != h {
		return 0, fmt.Errorf("version %d torn: %d bytes, want %d", j, len(body), n)
	}
	return j, nil
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestCrashMidWrite kills a writing process with SIGKILL, several times over
// the same data directory, and checks after each kill that every file is a
// whole version, the killed run is interrupted with its last progress kept,
// and every earlier run is intact.
func TestCrashMidWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	finished := make(map[string][2]string) // id -> result, progress sums
	var earlier map[string]string          // files of finished runs before a crash
	for cycle := range 3 {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), crashHelperEnv+"="+dir)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill after a finished run and a number of progress writes that
		// differs by cycle, while the helper is writing the next file.
		killAfter := fmt.Sprintf("progress %%s %d", 2*cycle)
		doneInCycle, killed := 0, false
		lastProgress := make(map[string]int)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			switch f[0] {
			case "error":
				t.Fatalf("helper: %s", sc.Text())
			case "done":
				finished[f[1]] = [2]string{f[2], f[3]}
				doneInCycle++
			case "progress":
				j, _ := strconv.Atoi(f[2])
				lastProgress[f[1]] = j
				if !killed && doneInCycle > 0 && sc.Text() == fmt.Sprintf(killAfter, f[1]) {
					if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
						t.Fatal(err)
					}
					killed = true
				}
			}
			// Lines after the kill were written before it: read them all.
		}
		if !killed {
			t.Fatalf("cycle %d: helper ended before it was killed", cycle)
		}
		if err := cmd.Wait(); err == nil {
			t.Fatalf("cycle %d: helper exited cleanly after SIGKILL", cycle)
		}

		// Whether the kill caught a write under way (a temporary file
		// exists) is up to the scheduler; say which case was tested.
		t.Logf("cycle %d: killed with %d temporary files", cycle, len(tempFiles(t, dir)))

		s, err := Open(dir, WithLogger(quietLogger()))
		if err != nil {
			t.Fatalf("cycle %d: Open: %v", cycle, err)
		}
		if p := s.Problems(); len(p) != 0 {
			t.Errorf("cycle %d: problems %v", cycle, p)
		}
		if tmp := tempFiles(t, dir); len(tmp) != 0 {
			t.Errorf("cycle %d: temporary files left: %v", cycle, tmp)
		}
		runs, _, err := s.List("", 10000, "")
		if err != nil {
			t.Fatal(err)
		}
		interrupted := 0
		for _, r := range runs {
			switch r.State {
			case Done, Queued:
			case Interrupted:
				interrupted++
			default:
				t.Errorf("cycle %d: run %s is %s after a crash", cycle, r.ID, r.State)
			}
			for _, name := range []string{ProgressFile, ResultFile} {
				b, err := os.ReadFile(filepath.Join(s.Dir(r.ID), name))
				if os.IsNotExist(err) {
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				v, err := checkPayload(b)
				if err != nil {
					t.Errorf("cycle %d: run %s %s: %v", cycle, r.ID, name, err)
					continue
				}
				// A write that returned is on disk; the one under way
				// may or may not have landed.
				if last, ok := lastProgress[r.ID]; ok && name == ProgressFile && (v < last || v > last+1) {
					t.Errorf("cycle %d: run %s progress version %d, last written %d", cycle, r.ID, v, last)
				}
			}
			if want, ok := finished[r.ID]; ok {
				if r.State != Done {
					t.Errorf("cycle %d: finished run %s is %s", cycle, r.ID, r.State)
				}
				res, _ := os.ReadFile(filepath.Join(s.Dir(r.ID), ResultFile))
				prog, _ := os.ReadFile(filepath.Join(s.Dir(r.ID), ProgressFile))
				if sum(res) != want[0] || sum(prog) != want[1] {
					t.Errorf("cycle %d: finished run %s files differ from what was written", cycle, r.ID)
				}
			}
		}
		if interrupted != cycle+1 {
			// One run killed per cycle; a kill mid-Create would leave
			// none, but the helper is killed after a progress write.
			t.Errorf("cycle %d: %d interrupted runs, want %d", cycle, interrupted, cycle+1)
		}
		now := hashTree(t, dir)
		for name, h := range earlier {
			if now[name] != h {
				t.Errorf("cycle %d: earlier file %s changed", cycle, name)
			}
		}
		s.Close()
		earlier = hashTree(t, dir)
		delete(earlier, ".lock")
	}
}
