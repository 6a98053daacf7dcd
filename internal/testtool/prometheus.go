package testtool

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// StartPrometheus runs the prometheus binary on a free loopback port,
// scraping target (host:port) every second as job "loadgend", and returns its
// base URL once /-/ready answers; it is killed at the end of the test and its
// log shown if the test failed. The port is found by listening on :0 and
// closing; should another process take it first, prometheus exits and the
// next attempt picks another.
func StartPrometheus(t testing.TB, bin, target string, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	conf := filepath.Join(dir, "prometheus.yml")
	yml := fmt.Sprintf("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n"+
		"scrape_configs:\n  - job_name: loadgend\n    static_configs:\n      - targets: [%q]\n", target)
	if err := os.WriteFile(conf, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	var lastErr error
	for attempt := range 3 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		cmd := exec.Command(bin, append([]string{"--config.file=" + conf,
			"--storage.tsdb.path=" + filepath.Join(dir, fmt.Sprintf("tsdb%d", attempt)),
			"--web.listen-address=" + addr, "--log.level=warn"}, args...)...)
		log := &syncLog{}
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		stop := func() {
			_ = cmd.Process.Kill()
			<-exited
		}
		base := "http://" + addr
		if err := waitReady(base+"/-/ready", exited, 30*time.Second); err != nil {
			stop()
			lastErr = fmt.Errorf("prometheus %v: %w\n%s", args, err, log.String())
			continue
		}
		t.Cleanup(func() {
			stop()
			if t.Failed() {
				t.Logf("prometheus %v log:\n%s", args, log.String())
			}
		})
		return base
	}
	t.Fatal(lastErr)
	return ""
}

// waitReady polls url until 200, the process exits or the timeout passes: a
// readiness endpoint has no event to wait on.
func waitReady(url string, exited <-chan error, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("exited: %v", err)
		default:
		}
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready after %v", url, timeout)
}

// syncLog gathers a child's stdout and stderr into one log.
type syncLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncLog) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
