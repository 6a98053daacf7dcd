package daemon_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/daemon"
	"github.com/netloadgen/netloadgen/pkg/sutproxy"
)

// e2eSUT starts sutproxy with its built-in models (identity: ≈3900 req/s)
// and returns its HTTP target URL.
func e2eSUT(t *testing.T) string {
	t.Helper()
	p, err := sutproxy.Start(t.Context(), sutproxy.Config{HTTPAddr: "127.0.0.1:0", GRPCAddr: "off"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return "http://" + p.HTTPAddr()
}

// e2eService starts loadgend in process on a free loopback port.
func e2eService(t *testing.T, edit func(*daemon.Config)) (*daemon.Service, e2eClient) {
	t.Helper()
	cfg := daemon.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), MaxQPS: 10000, MaxDuration: time.Hour,
		MaxInflight: 1024, LogLevel: "info", DrainTimeout: 5 * time.Second}
	if edit != nil {
		edit(&cfg)
	}
	svc, err := daemon.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := svc.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return svc, e2eClient{base: "http://" + svc.Addr(), token: cfg.APIToken}
}

// serverSpec is a Server run of the identity model at qps for durationMs.
func serverSpec(target string, qps, durationMs int) string {
	return fmt.Sprintf(`{"target":%q,"model":"identity","scenario":"Server","settings":{"target_qps":%d,"min_duration_ms":%d,"min_query_count":1,"target_latency_ms":100,"latency_percentile":0.99}}`,
		target, qps, durationMs)
}

// e2eClient drives the control API as a user's script would.
type e2eClient struct {
	base, token string
}

func (c e2eClient) do(t *testing.T, method, path, body string) (int, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp.StatusCode, b
}

// submit posts a run spec and returns the new run's id.
func (c e2eClient) submit(t *testing.T, spec string) string {
	t.Helper()
	code, b := c.do(t, http.MethodPost, "/v1/runs", spec)
	var created api.RunCreated
	if code != http.StatusAccepted || json.Unmarshal(b, &created) != nil || created.ID == "" {
		t.Fatalf("POST /v1/runs = %d %s", code, b)
	}
	return created.ID
}

func (c e2eClient) status(t *testing.T, id string) api.RunStatus {
	t.Helper()
	code, b := c.do(t, http.MethodGet, "/v1/runs/"+id, "")
	var st api.RunStatus
	if code != http.StatusOK || json.Unmarshal(b, &st) != nil {
		t.Fatalf("GET /v1/runs/%s = %d %s", id, code, b)
	}
	return st
}

// watch follows a run's event stream, calling on for each event until it
// returns true (then watch returns nil) or the stream ends.
func (c e2eClient) watch(t *testing.T, id string, timeout time.Duration, on func(event string, data []byte) bool) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/v1/runs/"+id+"/events", nil)
	if err != nil {
		return err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("events: %d %s", resp.StatusCode, b)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var event string
	var data []byte
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = append(data, strings.TrimPrefix(line, "data: ")...)
		case line == "":
			if event != "" && on(event, data) {
				return nil
			}
			event, data = "", nil
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("events of %s: %w", id, err)
	}
	return fmt.Errorf("events of %s: the stream ended first", id)
}

// waitEnded follows the event stream to the run's terminal state.
func (c e2eClient) waitEnded(t *testing.T, id string, timeout time.Duration) api.RunStatus {
	t.Helper()
	err := c.watch(t, id, timeout, func(event string, data []byte) bool {
		var ev api.StateEvent
		return event == api.EventState && json.Unmarshal(data, &ev) == nil && ev.State.Terminal()
	})
	if err != nil {
		t.Fatalf("waiting for run %s to end: %v", id, err)
	}
	return c.status(t, id)
}

// waitProgress follows the event stream until a progress event satisfies ok.
func (c e2eClient) waitProgress(t *testing.T, id string, timeout time.Duration, ok func(api.Progress) bool) api.Progress {
	t.Helper()
	var got api.Progress
	err := c.watch(t, id, timeout, func(event string, data []byte) bool {
		if event != api.EventProgress {
			return false
		}
		var p api.Progress
		if json.Unmarshal(data, &p) != nil {
			return false
		}
		got = p
		return ok(p)
	})
	if err != nil {
		t.Fatalf("waiting for progress of run %s (last %+v): %v", id, got, err)
	}
	return got
}

// e2eProc is loadgend running as a child process.
type e2eProc struct {
	cmd    *exec.Cmd
	client e2eClient
	log    *logLines
	exited chan struct{}
	err    error // cmd.Wait's, once exited is closed
}

// startLoadgend runs the built binary with no arguments (the container's
// entry point) and the given LOADGEND_* variables, and waits for its
// "loadgend listening" log line to learn the address: LOADGEND_LISTEN
// defaults to 127.0.0.1:0 here, so no port is guessed.
func startLoadgend(t *testing.T, env ...string) *e2eProc {
	t.Helper()
	bin := loadgendBinary(t)
	cmd := exec.Command(bin)
	cmd.Env = childEnv(append([]string{"LOADGEND_LISTEN=127.0.0.1:0", "LOADGEND_LOG_LEVEL=info"}, env...))
	listening := make(chan string, 1)
	lines := &logLines{onLine: func(line string) {
		var rec struct {
			Msg  string `json:"msg"`
			Addr string `json:"addr"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "loadgend listening" {
			select {
			case listening <- rec.Addr:
			default:
			}
		}
	}}
	cmd.Stderr = lines
	cmd.Stdout = lines
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &e2eProc{cmd: cmd, log: lines, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("loadgend (pid %d) log:\n%s", cmd.Process.Pid, lines.String())
		}
	})
	select {
	case addr := <-listening:
		p.client = e2eClient{base: "http://" + addr, token: envValue(env, "LOADGEND_API_TOKEN")}
	case <-p.exited:
		t.Fatalf("loadgend exited before listening (%v):\n%s", p.err, lines.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("loadgend did not log that it listens within 30 s:\n%s", lines.String())
	}
	return p
}

// signal sends sig and waits for the process to exit.
func (p *e2eProc) signal(t *testing.T, sig syscall.Signal, timeout time.Duration) error {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.exited:
		return p.err
	case <-time.After(timeout):
		t.Fatalf("loadgend did not exit within %v of %v", timeout, sig)
		return nil
	}
}

// childEnv is this process's environment without any LOADGEND_* variable,
// plus vars.
func childEnv(vars []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LOADGEND_") {
			env = append(env, kv)
		}
	}
	return append(env, vars...)
}

func envValue(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

// logLines collects a child's output and hands each complete line to
// onLine.
type logLines struct {
	mu      sync.Mutex
	all     bytes.Buffer
	partial []byte
	onLine  func(string)
}

func (l *logLines) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all.Write(b)
	l.partial = append(l.partial, b...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		if l.onLine != nil {
			l.onLine(string(l.partial[:i]))
		}
		l.partial = l.partial[i+1:]
	}
	return len(b), nil
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.all.String()
}
