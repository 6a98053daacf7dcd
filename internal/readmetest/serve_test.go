package readmetest_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// served is scripts/serve.sh running: what it printed for the user to paste
// and the processes it said it started.
type served struct {
	cmd     *exec.Cmd
	exports map[string]string // API, SUT, SUT_GRPC
	pids    map[string]int    // sutproxy, loadgend
	addrs   []string          // the addresses it was asked to listen on
	mu      sync.Mutex
	out     bytes.Buffer // stdout after the export lines, and stderr
	done    chan struct{}
	waitErr error
}

var (
	exportLine = regexp.MustCompile(`^export (API|SUT|SUT_GRPC)=(\S+)$`)
	pidLine    = regexp.MustCompile(`^(sutproxy|loadgend) \(pid ([0-9]+)\)`)
)

// freeAddr finds a free loopback port. Closing the listener before the
// script binds it is a race with other processes, but the kernel does not
// hand the same ephemeral port out again at once.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func serveEnv(bin, dataDir string, addrs []string) []string {
	return cleanEnv("BIN="+bin, "TMPDIR="+dataDir, "SERVE_DATA_DIR="+dataDir,
		"SERVE_API_ADDR="+addrs[0], "SERVE_SUT_HTTP="+addrs[1], "SERVE_SUT_GRPC="+addrs[2])
}

// startServe runs `make serve`'s script on three free ports and waits for
// the lines it prints for the user. Cleanup stops it if the test did not.
func startServe(t *testing.T, bin string) *served {
	t.Helper()
	s := &served{exports: map[string]string{}, pids: map[string]int{}, done: make(chan struct{}),
		addrs: []string{freeAddr(t), freeAddr(t), freeAddr(t)}}
	s.cmd = exec.Command("bash", filepath.Join(repoRoot, "scripts", "serve.sh"))
	s.cmd.Env = serveEnv(bin, t.TempDir(), s.addrs)
	s.cmd.Stderr = lockedWriter{&s.mu, &s.out}
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			if m := exportLine.FindStringSubmatch(line); m != nil {
				s.exports[m[1]] = m[2]
			}
			if m := pidLine.FindStringSubmatch(line); m != nil {
				s.pids[m[1]], _ = strconv.Atoi(m[2])
			}
			if line == "Ctrl-C stops both." {
				close(ready)
			}
			fmt.Fprintln(&s.out, line)
			s.mu.Unlock()
		}
		s.waitErr = s.cmd.Wait()
	}()
	t.Cleanup(func() {
		select {
		case <-s.done:
		default:
			_ = s.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-s.done:
			case <-time.After(30 * time.Second):
				_ = s.cmd.Process.Kill()
				<-s.done
			}
		}
	})
	select {
	case <-ready:
	case <-s.done:
		t.Fatalf("serve.sh exited before it was ready: %v\n%s", s.waitErr, s.output())
	case <-time.After(60 * time.Second):
		t.Fatalf("serve.sh not ready after 60 s\n%s", s.output())
	}
	return s
}

func (s *served) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

// interruptSignal is SIGINT, what Ctrl-C sends, unless this process was
// started with SIGINT ignored (a background job of a non-interactive
// shell): the script inherits that, and bash cannot trap an ignored signal.
func interruptSignal(t *testing.T) syscall.Signal {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return syscall.SIGINT
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err == nil && mask&(1<<(uint(syscall.SIGINT)-1)) != 0 {
				t.Log("SIGINT is ignored in this process (and would be in the script): stopping serve.sh with SIGTERM")
				return syscall.SIGTERM
			}
		}
	}
	return syscall.SIGINT
}

// stop interrupts the script as Ctrl-C would and checks it stopped both
// servers: it exits 0, says so, neither process is left, no port answers.
func (s *served) stop(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(interruptSignal(t)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("serve.sh still running 60 s after the interrupt\n%s", s.output())
	}
	if s.waitErr != nil {
		t.Errorf("serve.sh: %v, want exit 0 after an interrupt\n%s", s.waitErr, s.output())
	}
	if !strings.Contains(s.output(), "serve: stopped sutproxy and loadgend") {
		t.Errorf("serve.sh did not report stopping both\n%s", s.output())
	}
	for name, pid := range s.pids {
		// The script waited for its children, so they are gone, not orphans.
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("%s (pid %d) still exists after serve.sh exited: kill -0 = %v", name, pid, err)
		}
	}
	for _, addr := range s.addrs {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			t.Errorf("%s still accepts connections after serve.sh exited", addr)
		}
	}
}

// runScript runs a program with a time bound and returns its combined output.
func runScript(ctx context.Context, dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	return out.String(), err
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
