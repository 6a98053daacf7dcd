package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// e2eVersion is stamped into the loadgend this test builds, as the image's
// build stamps its VERSION (Makefile LDFLAGS).
const e2eVersion = "deploy-e2e-workers"

// TestWorkersFromManifest starts workers exactly as the kubelet would start
// the distributed overlay's worker pods (two of the Deployment's, one of
// the Job's), and checks that the coordinator lists them. What is tested
// is what is deployed:
//
//   - argv is the rendered container's command and args, with $(VAR)
//     expanded against its env as the kubelet does; the command's
//     /loadgend is the Dockerfile's binary, built here with a version
//     stamped in as the image's is;
//   - the environment is the image's ENV (the Dockerfile's final stage)
//     overlaid by the container's env, resolved as the kubelet does:
//     POD_NAME from the pod's name (names of the form a Deployment or a
//     Job gives), LOADGEND_API_TOKEN from the Secret loadgend-api-token this
//     test creates, as an operator does, with the coordinator's token.
//
// The coordinator is the same overlay's loadgend pod, started the same
// way (no command: the image's ENTRYPOINT, `loadgend serve`; its
// allowlist from the build's ConfigMap).
//
// The substitutions, because there is no cluster here: the workers'
// coordinator URL's host:port (the loadgend Service) becomes the test
// coordinator's loopback address; each LOADGEND_LISTEN (0.0.0.0:8080, one
// pod each) becomes 127.0.0.1:0, loopback and a port of each process's
// own; the coordinator's LOADGEND_DATA_DIR (its emptyDir's mount) a
// temporary directory; its LOADGEND_ALLOWED_TARGETS (the cluster's
// Services) 127.0.0.1, where this test's target listens.
//
// Then a distributed run goes through them: a spec with "workers": 3
// against a loopback sutproxy ends VALID with the three pods as its
// workers[], and the Job's worker, --once, exits 0 after it.
func TestWorkersFromManifest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds loadgend")
	}
	dep, err := RenderedWorker("overlays/distributed", "Deployment")
	if err != nil {
		t.Fatal(err)
	}
	job, err := RenderedWorker("overlays/distributed-job", "Job")
	if err != nil {
		t.Fatal(err)
	}
	bin := buildLoadgend(t)
	const token = "e2e-token-0123456789abcdef"
	coord := startCoordinator(t, bin, token)
	// Pod names as a Deployment's ReplicaSet and a Job name them.
	pods := []struct {
		name string
		c    corev1.Container
	}{{"loadgend-worker-6f9d8c7b5d-x2k4p", dep}, {"loadgend-worker-6f9d8c7b5d-q7r9t", dep}, {"loadgend-worker-once-z8m2w", job}}
	var workers []*proc
	var names []string
	for _, pod := range pods {
		argv, env := podProcess(t, pod.c, pod.name, token, coord.addr)
		workers = append(workers, startProc(t, pod.name, append([]string{bin}, argv[1:]...), env))
		names = append(names, pod.name)
	}
	list := waitWorkers(t, coord, token, names, workers)
	for _, w := range list {
		if w.State != "idle" || w.Version != e2eVersion {
			t.Errorf("worker %s: state %q version %q, want idle and the image's version %q", w.Name, w.State, w.Version, e2eVersion)
		}
	}
	if v := coordVersion(t, coord, token); v != e2eVersion {
		t.Errorf("the coordinator's version %q, want %q", v, e2eVersion)
	}
	probeWorkers(t, dep, list)
	distributedRun(t, coord, token, names)
	if err := workers[2].wait(60 * time.Second); err != nil {
		t.Errorf("the Job's worker (--once) after its run: %v, want exit 0", err)
	}
	for _, w := range workers[:2] {
		w.stop(t, syscall.SIGTERM, terminationGrace(t))
	}
}

// distributedRun submits a short Server run over the workers named (as
// many as there are) against a sutproxy on loopback, follows it to its end
// and checks its result: VALID, and one workers[] entry per worker, by
// name, each with samples issued.
func distributedRun(t *testing.T, coord coordinator, token string, names []string) {
	t.Helper()
	target := startSutproxy(t)
	spec := fmt.Sprintf(`{"target": %q, "model": "identity", "scenario": "Server", "workers": %d,
		"settings": {"target_qps": 400, "target_latency_ms": 100, "min_duration_ms": 1500, "min_query_count": 600}}`,
		"http://"+target, len(names))
	var created struct {
		ID string `json:"id"`
	}
	if err := sendJSON(t, "POST", "http://"+coord.addr+"/v1/runs", token, spec, &created); err != nil || created.ID == "" {
		t.Fatalf("submitting the distributed run: %v (id %q)", err, created.ID)
	}
	var st struct {
		State  string `json:"state"`
		Reason string `json:"reason"`
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := untilRunEnds(ctx, "http://"+coord.addr+"/v1/runs/"+created.ID+"/events", token); err != nil {
		t.Fatalf("following the distributed run: %v", err)
	}
	if err := getJSON(t, ctx, "http://"+coord.addr+"/v1/runs/"+created.ID, token, &st); err != nil {
		t.Fatal(err)
	}
	if st.State != "done" {
		t.Fatalf("the distributed run ended %s: %s\ncoordinator:\n%s", st.State, st.Reason, coord.out.String())
	}
	var res struct {
		Validity string   `json:"result_validity"`
		Invalid  []string `json:"invalid_reasons"`
		Workers  []struct {
			Name          string `json:"name"`
			Shard         int    `json:"shard"`
			SamplesIssued int64  `json:"samples_issued"`
		} `json:"workers"`
	}
	if err := getJSON(t, ctx, "http://"+coord.addr+"/v1/runs/"+created.ID+"/result", token, &res); err != nil {
		t.Fatal(err)
	}
	if res.Validity != "VALID" {
		t.Errorf("the distributed run is %s (%q), want VALID", res.Validity, res.Invalid)
	}
	var got []string
	for k, w := range res.Workers {
		got = append(got, w.Name)
		if w.Shard != k || w.SamplesIssued == 0 {
			t.Errorf("workers[%d]: %+v, want shard %d with samples issued", k, w, k)
		}
	}
	want := slices.Clone(names)
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("result.json workers %v, want the pods %v", got, want)
	}
}

// untilRunEnds reads a run's event stream (GET /v1/runs/{id}/events)
// until the daemon closes it, which it does once the run has ended.
func untilRunEnds(ctx context.Context, eventsURL, token string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, eventsURL, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		return fmt.Errorf("%s: %s: %s", eventsURL, resp.Status, b)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

// startSutproxy builds ../cmd/sutproxy and starts it on loopback with its
// default models; it returns its HTTP address.
func startSutproxy(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "sutproxy")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/sutproxy")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/sutproxy: %v\n%s", err, out)
	}
	ready := filepath.Join(dir, "ready.json")
	p := startProc(t, "sutproxy", []string{bin, "--http-addr", "127.0.0.1:0", "--grpc-addr", "off", "--ready-file", ready}, os.Environ())
	t.Cleanup(func() { p.stop(t, syscall.SIGTERM, 10*time.Second) })
	deadline := time.Now().Add(30 * time.Second)
	for {
		var addrs struct {
			HTTP string `json:"http"`
		}
		if b, err := os.ReadFile(ready); err == nil && json.Unmarshal(b, &addrs) == nil && addrs.HTTP != "" {
			return addrs.HTTP
		}
		select {
		case <-p.exited:
			t.Fatalf("sutproxy exited (%v) before listening", p.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("sutproxy did not write its ready file within 30 s")
		}
		time.Sleep(20 * time.Millisecond) // a file written by another process: no event to wait on
	}
}

// sendJSON sends body to rawURL with the token and decodes a 2xx answer
// into v.
func sendJSON(t *testing.T, method, rawURL, token, body string, v any) error {
	t.Helper()
	req, err := http.NewRequest(method, rawURL, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %s", method, rawURL, resp.Status, b)
	}
	return json.Unmarshal(b, v)
}

// buildLoadgend builds ../cmd/loadgend as the image's `make build` does
// (static, trimmed, version stamped) into a temporary directory.
func buildLoadgend(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "loadgend")
	cmd := exec.Command("go", "build", "-trimpath",
		"-ldflags", "-X github.com/netloadgen/netloadgen/pkg/version.Version="+e2eVersion,
		"-o", bin, "./cmd/loadgend")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/loadgend: %v\n%s", err, out)
	}
	return bin
}

// imageEnv is the ENV of the Dockerfile's final stage, as KEY=VALUE.
func imageEnv(t *testing.T) map[string]string {
	t.Helper()
	ins, err := parseDockerfile(readDockerfile(t))
	if err != nil {
		t.Fatal(err)
	}
	final := stages(ins)
	env := map[string]string{}
	for _, in := range ins {
		if in.cmd != "ENV" || in.stage != len(final)-1 {
			continue
		}
		for _, kv := range strings.Fields(in.args) {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				t.Fatalf("ENV %s: want KEY=VALUE pairs", in.args)
			}
			env[k] = v
		}
	}
	if len(env) == 0 {
		t.Fatal("the Dockerfile's final stage sets no ENV")
	}
	return env
}

// podProcess is the argv and environment of c in a pod named pod, with
// the two substitutions TestWorkersFromManifest documents.
func podProcess(t *testing.T, c corev1.Container, pod, token, coordAddr string) (argv, env []string) {
	t.Helper()
	vars, err := kubeletEnv(c, fakePod{name: pod, namespace: "netloadgen",
		secrets: map[string]map[string]string{"loadgend-api-token": {"token": token}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := splitListen(vars["LOADGEND_LISTEN"]); err != nil {
		t.Fatalf("LOADGEND_LISTEN: %v", err)
	}
	vars["LOADGEND_LISTEN"] = "127.0.0.1:0"
	argv = containerArgv(t, c, vars)
	replaced := 0
	for i, a := range argv {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k != "--coordinator" {
			continue
		}
		u, err := url.Parse(v)
		if err != nil {
			t.Fatalf("%s: %v", a, err)
		}
		u.Host = coordAddr
		argv[i] = k + "=" + u.String()
		replaced++
	}
	if replaced != 1 {
		t.Fatalf("argv %v: want one --coordinator=URL to point at the test's coordinator", argv)
	}
	return argv, childEnvOf(withImageEnv(t, vars))
}

// withImageEnv is the image's ENV overlaid by vars, the container's.
func withImageEnv(t *testing.T, vars map[string]string) map[string]string {
	t.Helper()
	full := imageEnv(t)
	for k, v := range vars {
		full[k] = v
	}
	return full
}

// childEnvOf is this process's environment less any LOADGEND_* variable
// (the test's own must not leak in), plus vars.
func childEnvOf(vars map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "LOADGEND_") {
			if _, set := vars[k]; !set {
				env = append(env, kv)
			}
		}
	}
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	return env
}

// coordinator is `loadgend serve` on loopback.
type coordinator struct {
	*proc
	addr string
}

// startCoordinator starts the distributed overlay's loadgend pod as the
// kubelet would, with the substitutions TestWorkersFromManifest documents.
func startCoordinator(t *testing.T, bin, token string) coordinator {
	t.Helper()
	const dir = "overlays/distributed"
	pod, err := renderedPod(dir, "Deployment", "loadgend")
	if err != nil {
		t.Fatal(err)
	}
	c := pod.Containers[0]
	configMaps := map[string]map[string]string{}
	for name, cm := range typedBuild(t, dir).configMaps {
		configMaps[name] = cm.Data
	}
	vars, err := kubeletEnv(c, fakePod{name: "loadgend-7c9f6d5b8d-k2m4n", namespace: "netloadgen",
		secrets:    map[string]map[string]string{"loadgend-api-token": {"token": token}},
		configMaps: configMaps})
	if err != nil {
		t.Fatal(err)
	}
	vars["LOADGEND_LISTEN"] = "127.0.0.1:0"
	vars["LOADGEND_DATA_DIR"] = t.TempDir()
	vars["LOADGEND_ALLOWED_TARGETS"] = "127.0.0.1"
	argv := containerArgv(t, c, vars)
	listening := make(chan string, 1)
	p := startProcWatch(t, "coordinator", append([]string{bin}, argv[1:]...), childEnvOf(withImageEnv(t, vars)), func(line string) {
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
	})
	select {
	case addr := <-listening:
		return coordinator{p, addr}
	case <-p.exited:
		t.Fatalf("the coordinator exited before listening (%v)", p.err)
	case <-time.After(30 * time.Second):
		t.Fatal("the coordinator did not log that it listens within 30 s")
	}
	return coordinator{}
}

// containerArgv is what the container runs: its command, or else the
// image's ENTRYPOINT, then its args ($(VAR) expanded as the kubelet does).
// The first element must be the image's /loadgend.
func containerArgv(t *testing.T, c corev1.Container, vars map[string]string) []string {
	t.Helper()
	if len(c.Command) == 0 {
		ins, err := parseDockerfile(readDockerfile(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range ins {
			if in.cmd == "ENTRYPOINT" {
				c.Command = nil
				if err := json.Unmarshal([]byte(in.args), &c.Command); err != nil {
					t.Fatalf("ENTRYPOINT %s: %v", in.args, err)
				}
			}
		}
	}
	argv := kubeletArgv(c, vars)
	if len(argv) == 0 || argv[0] != "/loadgend" {
		t.Fatalf("the container runs %v: the image's binary is /loadgend", argv)
	}
	return argv
}

// workerInfo is the part of GET /v1/workers' entries this test reads.
type workerInfo struct {
	Name    string `json:"name"`
	Address string `json:"address"`
	Version string `json:"version"`
	State   string `json:"state"`
}

func getJSON(t *testing.T, ctx context.Context, rawURL, token string, v any) error {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", rawURL, resp.Status, bytes.TrimSpace(b))
	}
	if v == nil {
		return nil
	}
	return json.Unmarshal(b, v)
}

// waitWorkers polls GET /v1/workers (the coordinator has no event for a
// registration) until every pod is listed idle, a worker exits, or 30 s
// pass. A worker exits 0 when stopped or when its --once run is done.
func waitWorkers(t *testing.T, coord coordinator, token string, pods []string, workers []*proc) []workerInfo {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last []workerInfo
	var lastErr error
	for {
		for _, w := range workers {
			select {
			case <-w.exited:
				t.Fatalf("worker %s exited (%v) before all were listed idle (its output is below)", w.name, w.err)
			default:
			}
		}
		var list struct {
			Workers []workerInfo `json:"workers"`
		}
		lastErr = getJSON(t, ctx, "http://"+coord.addr+"/v1/workers", token, &list)
		if lastErr == nil {
			last = list.Workers
			if listed(last, pods) {
				return last
			}
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("GET /v1/workers within 30 s: %s (last error %v), want %v idle; coordinator output:\n%s", mustJSON(last), lastErr, pods, coord.out.String())
		}
	}
}

// listed: every pod is in list, idle.
func listed(list []workerInfo, pods []string) bool {
	for _, p := range pods {
		if !slices.ContainsFunc(list, func(w workerInfo) bool { return w.Name == p && w.State == "idle" }) {
			return false
		}
	}
	return len(list) == len(pods)
}

func coordVersion(t *testing.T, coord coordinator, token string) string {
	t.Helper()
	var v struct {
		Version string `json:"version"`
	}
	if err := getJSON(t, context.Background(), "http://"+coord.addr+"/v1/version", token, &v); err != nil {
		t.Fatal(err)
	}
	return v.Version
}

// probeWorkers sends each worker what the kubelet and Prometheus would: the
// container's probes' paths and /metrics, on the address the worker
// registered (its LOADGEND_LISTEN, port chosen).
func probeWorkers(t *testing.T, c corev1.Container, list []workerInfo) {
	t.Helper()
	paths := []string{"/metrics"}
	for _, p := range []*corev1.Probe{c.StartupProbe, c.LivenessProbe, c.ReadinessProbe} {
		if p != nil && p.HTTPGet != nil {
			paths = append(paths, p.HTTPGet.Path)
		}
	}
	for _, w := range list {
		host, port, err := splitListen(w.Address)
		if err != nil || host != "127.0.0.1" {
			t.Errorf("worker %s registered address %q: want the 127.0.0.1:PORT it listens on (%v)", w.Name, w.Address, err)
			continue
		}
		for _, path := range paths {
			u := "http://127.0.0.1:" + strconv.Itoa(port) + path
			if err := getJSON(t, context.Background(), u, "", nil); err != nil {
				t.Errorf("worker %s: the manifest's %s: %v", w.Name, path, err)
			}
		}
	}
}

// terminationGrace is the worker pod's terminationGracePeriodSeconds: the
// kubelet kills it with SIGKILL that long after SIGTERM.
func terminationGrace(t *testing.T) time.Duration {
	t.Helper()
	d := typedBuild(t, "overlays/distributed").deployments[workerDeployment]
	if d == nil || d.Spec.Template.Spec.TerminationGracePeriodSeconds == nil {
		t.Fatal("the worker Deployment sets no terminationGracePeriodSeconds")
	}
	return time.Duration(*d.Spec.Template.Spec.TerminationGracePeriodSeconds) * time.Second
}

// proc is a child process with its output kept.
type proc struct {
	name   string
	cmd    *exec.Cmd
	out    *lineBuffer
	exited chan struct{}
	err    error // cmd.Wait's, once exited is closed
}

func startProc(t *testing.T, name string, argv, env []string) *proc {
	return startProcWatch(t, name, argv, env, nil)
}

func startProcWatch(t *testing.T, name string, argv, env []string, onLine func(string)) *proc {
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
		select {
		case <-p.exited:
		default:
			_ = cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("%s (%s) output:\n%s", name, strings.Join(argv, " "), out.String())
		}
	})
	return p
}

// stop sends sig and wants the process to exit 0 within grace.
// wait waits up to d for the process to exit on its own; its exit error,
// or one saying it did not exit.
func (p *proc) wait(d time.Duration) error {
	select {
	case <-p.exited:
		return p.err
	case <-time.After(d):
		return fmt.Errorf("%s still running after %v", p.name, d)
	}
}

func (p *proc) stop(t *testing.T, sig syscall.Signal, grace time.Duration) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.exited:
		if p.err != nil {
			t.Errorf("%s after %v: %v, want exit 0", p.name, sig, p.err)
		}
	case <-time.After(grace):
		t.Errorf("%s did not exit within %v of %v (the pod's grace period: the kubelet would kill it)", p.name, grace, sig)
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
