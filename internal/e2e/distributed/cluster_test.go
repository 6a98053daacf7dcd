package distributed_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
)

const repoRoot = "../../.."

// token is the coordinator's API token, given to every worker and to the
// CLI through LOADGEND_API_TOKEN: no process may print it.
const token = "accept-e2e-token-5b0c7d1e9f"

// model is the target's one simulated model: 2 ms a request, four
// instances batching up to 8, far above the few hundred requests a second
// the runs send.
const model = "name=m,fn=echo,dtype=FP32,dims=16,max_batch=8,latency=constant:2ms,instances=4"

// Timing of the coordinator: a worker silent for workerTimeout is lost, a
// run drains for at most drainTimeout. The bound on a lost
// worker's run is their sum plus 2 s.
const (
	workerTimeout = time.Second
	drainTimeout  = 2 * time.Second
)

// binaries are built once for the package's tests, as `make build` builds
// them. A plain build (no -race): the children are driven at a few hundred
// requests a second on a shared 2-core machine.
var binaries = struct {
	once sync.Once
	dir  string
	err  error
	out  []byte
}{}

func TestMain(m *testing.M) {
	code := m.Run()
	if binaries.dir != "" {
		os.RemoveAll(binaries.dir)
	}
	os.Exit(code)
}

// built returns the paths of the built loadgend and sutproxy.
func built(t *testing.T) (loadgend, sutproxy string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds loadgend and sutproxy and runs them")
	}
	binaries.once.Do(func() {
		binaries.dir, binaries.err = os.MkdirTemp("", "accept-e2e-bin-")
		if binaries.err != nil {
			return
		}
		cmd := exec.Command("go", "build", "-trimpath", "-o", binaries.dir+string(filepath.Separator), "./cmd/loadgend", "./cmd/sutproxy")
		cmd.Dir = repoRoot
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		binaries.out, binaries.err = cmd.CombinedOutput()
	})
	if binaries.err != nil {
		t.Fatalf("go build: %v\n%s", binaries.err, binaries.out)
	}
	return filepath.Join(binaries.dir, "loadgend"), filepath.Join(binaries.dir, "sutproxy")
}

// childEnv is this process's environment less any LOADGEND_* variable
// (a developer's own must not change what runs), plus extra.
func childEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "LOADGEND_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// proc is a child process with its output kept.
type proc struct {
	name   string
	cmd    *exec.Cmd
	out    *lineBuffer
	exited chan struct{}
	err    error // cmd.Wait's, once exited is closed
}

// startProc starts argv; onLine (if set) sees each line of its output.
// The process is killed when the test ends, and its output shown if the
// test failed; the token in its output fails the test.
func startProc(t *testing.T, name string, argv, env []string, onLine func(string)) *proc {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	out := &lineBuffer{onLine: onLine}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{name: name, cmd: cmd, out: out, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.kill()
		if strings.Contains(out.String(), token) {
			t.Errorf("%s printed the API token", name)
		}
		if t.Failed() {
			t.Logf("%s (%s) output:\n%s", name, strings.Join(argv, " "), out.String())
		}
	})
	return p
}

// kill sends SIGKILL (kill -9) and waits for the exit.
func (p *proc) kill() {
	select {
	case <-p.exited:
	default:
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// lineBuffer keeps a child's output and hands each complete line to onLine.
type lineBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	partial []byte
	onLine  func(string)
}

func (l *lineBuffer) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(b)
	if l.onLine == nil {
		return len(b), nil
	}
	l.partial = append(l.partial, b...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.onLine(string(l.partial[:i]))
		l.partial = l.partial[i+1:]
	}
	return len(b), nil
}

func (l *lineBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// logField starts a process whose JSON log announces msg with an address
// in field, and returns that address (within 30 s).
func logField(t *testing.T, name string, argv, env []string, msg, field string) (*proc, string) {
	t.Helper()
	found := make(chan string, 1)
	p := startProc(t, name, argv, env, func(line string) {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil || rec["msg"] != msg {
			return
		}
		if s, ok := rec[field].(string); ok {
			select {
			case found <- s:
			default:
			}
		}
	})
	select {
	case addr := <-found:
		return p, addr
	case <-p.exited:
		t.Fatalf("%s exited (%v) before logging %q", name, p.err, msg)
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not log %q within 30 s", name, msg)
	}
	return nil, ""
}

// startTarget starts the built sutproxy serving model over HTTP on
// listen (127.0.0.1:0 for loopback) and returns its host:port.
func startTarget(t *testing.T, sutproxy, listen string) string {
	t.Helper()
	_, addr := logField(t, "sutproxy", []string{sutproxy, "--http-addr", listen, "--grpc-addr", "off", "--model", model}, childEnv(),
		"sutproxy listening", "http")
	return addr
}

// coordinator is `loadgend serve` with the API token.
type coordinator struct {
	*proc
	addr    string // host:port of its control API
	url     string
	dataDir string // its LOADGEND_DATA_DIR
}

// startCoordinator starts `loadgend serve` listening on listen; extra
// environment after the test's own (LOADGEND_ALLOWED_HOSTS off loopback).
func startCoordinator(t *testing.T, loadgend, listen string, extra ...string) *coordinator {
	t.Helper()
	data := t.TempDir()
	env := childEnv(append([]string{
		"LOADGEND_LISTEN=" + listen,
		"LOADGEND_DATA_DIR=" + data,
		"LOADGEND_API_TOKEN=" + token,
		"LOADGEND_WORKER_TIMEOUT=" + workerTimeout.String(),
		"LOADGEND_DRAIN_TIMEOUT=" + drainTimeout.String(),
	}, extra...)...)
	p, addr := logField(t, "coordinator", []string{loadgend, "serve"}, env, "loadgend listening", "addr")
	return &coordinator{proc: p, addr: addr, url: "http://" + addr, dataDir: data}
}

// startWorker starts `loadgend worker --coordinator URL --name name`, its
// argv prefixed by wrap (e.g. ip netns exec NS), its /metrics on listen.
func startWorker(t *testing.T, loadgend string, c *coordinator, name, listen string, wrap []string, extra ...string) *proc {
	t.Helper()
	argv := append(slices.Clone(wrap), loadgend, "worker", "--coordinator", c.url, "--name", name)
	env := childEnv(append([]string{"LOADGEND_API_TOKEN=" + token, "LOADGEND_LISTEN=" + listen}, extra...)...)
	return startProc(t, "worker "+name, argv, env, nil)
}

// get GETs the coordinator's path into v (JSON).
func (c *coordinator) get(ctx context.Context, path string, v any) error {
	b, err := getBody(ctx, c.url+path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// getBody GETs url with the token and returns the body of a 200.
func getBody(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, bytes.TrimSpace(b))
	}
	return b, nil
}

// noToken fails the test if a file under dir holds the API token.
func noToken(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, []byte(token)) {
			t.Errorf("%s holds the API token", path)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}

// workers is GET /v1/workers by name.
func (c *coordinator) workers(t *testing.T) map[string]api.WorkerInfo {
	t.Helper()
	var list api.WorkerList
	if err := c.get(context.Background(), "/v1/workers", &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]api.WorkerInfo{}
	for _, w := range list.Workers {
		out[w.Name] = w
	}
	return out
}

// waitIdle polls GET /v1/workers (a registration has no event to wait
// for) until every named worker is listed idle, within 30 s; a worker's
// exit fails the test at once.
func (c *coordinator) waitIdle(t *testing.T, procs []*proc, names ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var last api.WorkerList
	var lastErr error
	for {
		for _, p := range procs {
			select {
			case <-p.exited:
				t.Fatalf("%s exited (%v) before all were idle", p.name, p.err)
			default:
			}
		}
		if lastErr = c.get(ctx, "/v1/workers", &last); lastErr == nil && allIdle(last, names) {
			return
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("GET /v1/workers within 30 s: %+v (last error %v); want %v idle", last, lastErr, names)
		}
	}
}

func allIdle(list api.WorkerList, names []string) bool {
	for _, n := range names {
		if !slices.ContainsFunc(list.Workers, func(w api.WorkerInfo) bool { return w.Name == n && w.State == api.WorkerIdle }) {
			return false
		}
	}
	return true
}

// status is GET /v1/runs/{id}.
func (c *coordinator) status(ctx context.Context, id string) (api.RunStatus, error) {
	var st api.RunStatus
	err := c.get(ctx, "/v1/runs/"+id, &st)
	return st, err
}

// waitStatus polls GET /v1/runs/{id} every 20 ms until ok(status), within
// d, and returns that status and when it was seen.
func (c *coordinator) waitStatus(t *testing.T, id string, d time.Duration, what string, ok func(api.RunStatus) bool) (api.RunStatus, time.Time) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var st api.RunStatus
	var err error
	for {
		if st, err = c.status(ctx, id); err == nil && ok(st) {
			return st, time.Now()
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("run %s: not %s within %v: last status %+v (error %v)", id, what, d, st, err)
		}
	}
}

// invocation is one finished CLI command.
type invocation struct {
	args           []string
	code           int
	stdout, stderr string
}

func (i invocation) String() string {
	return fmt.Sprintf("loadgend %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(i.args, " "), i.code, i.stdout, i.stderr)
}

// cli runs the built loadgend with args (the token in its environment),
// within 2 minutes.
func cli(t *testing.T, loadgend string, args ...string) invocation {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, loadgend, args...)
	cmd.Env = childEnv("LOADGEND_API_TOKEN=" + token)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	inv := invocation{args: args, stdout: stdout.String(), stderr: stderr.String()}
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		inv.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("loadgend %v: %v", args, err)
	}
	if strings.Contains(inv.stdout+inv.stderr, token) {
		t.Errorf("loadgend %s printed the API token", args[0])
	}
	return inv
}

// submitted matches the line `loadgend run --coordinator` prints once the
// daemon took the run.
var submitted = regexp.MustCompile(`run (\S+) submitted to`)

// cliBackground starts `loadgend run` with args and returns it with the
// run's id, once the daemon took it.
func cliBackground(t *testing.T, loadgend string, args ...string) (*proc, string) {
	t.Helper()
	ids := make(chan string, 1)
	p := startProc(t, "loadgend run", append([]string{loadgend}, args...), childEnv("LOADGEND_API_TOKEN="+token), func(line string) {
		if m := submitted.FindStringSubmatch(line); m != nil {
			select {
			case ids <- m[1]:
			default:
			}
		}
	})
	select {
	case id := <-ids:
		return p, id
	case <-p.exited:
		t.Fatalf("loadgend run exited (%v) before the daemon took the run", p.err)
	case <-time.After(30 * time.Second):
		t.Fatal("loadgend run: no run submitted within 30 s")
	}
	return nil, ""
}

// exitCode waits (at most d) for p and returns its exit status.
func (p *proc) exitCode(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(d):
		t.Fatalf("%s did not exit within %v", p.name, d)
	}
	if ee, ok := errors.AsType[*exec.ExitError](p.err); ok {
		return ee.ExitCode()
	}
	if p.err != nil {
		t.Fatalf("%s: %v", p.name, p.err)
	}
	return 0
}

// loadResult reads dir's result.json.
func loadResult(t *testing.T, dir string) *loadgen.Result {
	t.Helper()
	res, err := runlog.Load(dir)
	if err != nil {
		t.Fatalf("result.json: %v", err)
	}
	return res
}

// runFiles are the files a single-host run writes, which the merged run
// must write too.
var runFiles = []string{runlog.SummaryFile, runlog.DetailFile, runlog.ResultFile, runlog.SamplesFile, runlog.HlogFile,
	runlog.TimeseriesCSVFile, runlog.TimeseriesJSONFile}

// checkFiles: every file of runFiles is in dir and not empty.
func checkFiles(t *testing.T, dir string) {
	t.Helper()
	for _, f := range runFiles {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: want the file a single-host run writes (%v)", f, err)
		}
	}
}
