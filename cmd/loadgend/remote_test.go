package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/daemon"
	"github.com/netloadgen/netloadgen/pkg/runlog"
)

const testToken = "s3cret-token-never-printed"

// startDaemon starts loadgend's service in process on a free loopback
// port, with testToken as its API token (set in the environment, where
// `loadgend run --coordinator` reads it).
func startDaemon(t *testing.T) string {
	t.Helper()
	t.Setenv(TokenEnv, testToken)
	cfg := daemon.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), APIToken: testToken, MaxQPS: 10000, MaxDuration: time.Hour,
		MaxInflight: 1024, LogLevel: "warn", DrainTimeout: 2 * time.Second}
	svc, err := daemon.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := svc.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return "http://" + svc.Addr()
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestRemoteRun: a Server run submitted to a daemon exits as a local one
// (0 VALID), prints the same summary line, and leaves in --out the same
// files a local run of the same flags writes (and samples.jsonl, kept for
// --samples-out), and in --samples-out a line per sample issued.
func TestRemoteRun(t *testing.T) {
	p := startProxy(t, model2ms)
	base := startDaemon(t)
	flags := []string{"--target", targetOf(p, "http"), "--model", "m", "--scenario", "Server", "--target-qps", "200",
		"--target-latency-ms", "50", "--latency-percentile", "90", "--min-duration-ms", "300", "--min-query-count", "100"}
	local := t.TempDir()
	if inv := runArgs(append(flags, "--out", local)...); inv.code != exitValid {
		t.Fatalf("local run: %v", inv)
	}
	dir := t.TempDir()
	samples := filepath.Join(t.TempDir(), "samples.jsonl")
	inv := runArgs(append(flags, "--coordinator", base, "--out", dir, "--samples-out", samples)...)
	if inv.code != exitValid {
		t.Fatalf("remote run: %v", inv)
	}
	res := completedRun(t, inv, dir)
	got, want := dirNames(t, dir), append(dirNames(t, local), runlog.SamplesJSONLFile)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("--out holds %v, want %v (a local run's and samples.jsonl)", got, want)
	}
	f, err := os.Open(samples)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := int64(0)
	for sc := bufio.NewScanner(f); sc.Scan(); n++ {
		var l struct{ Sample int64 }
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.Sample != n {
			t.Fatalf("line %d: %s (%v)", n, sc.Bytes(), err)
		}
	}
	if n == 0 || n != res.SamplesIssued {
		t.Errorf("%d lines in --samples-out, %d samples issued", n, res.SamplesIssued)
	}
	if !strings.Contains(inv.stdout, "logs: "+dir) || strings.Contains(inv.stdout+inv.stderr, testToken) {
		t.Errorf("output: %v", inv)
	}
}

// TestRemoteRefusalNamesFlag: the daemon's 400 comes back naming the flag
// of the field it refused, exit 2, and nothing is left in --out.
func TestRemoteRefusalNamesFlag(t *testing.T) {
	base := startDaemon(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--target-qps", "20000"}, "--target-qps: 20000 QPS is over this daemon's limit of 10000 QPS"},
		{[]string{"--workers", "2000"}, "--workers: 2000: want 0 (a run on the daemon itself) to 1024 workers"},
		{[]string{"--workers", "2", "--scenario", "SingleStream"}, "--workers: SingleStream is one sequence"},
		{[]string{"--worker-timeout-ms", "50", "--workers", "2"}, "--worker-timeout-ms: 50: want 100 to 600000 ms"},
	}
	t.Setenv(TokenEnv, "not-the-token")
	inv := runArgs("--coordinator", base, "--target", "http://127.0.0.1:9", "--model", "m", "--out", t.TempDir())
	if inv.code != exitError || !strings.Contains(inv.stderr, "answered 401 unauthorized") || !strings.Contains(inv.stderr, TokenEnv) ||
		strings.Contains(inv.stderr, "not-the-token") {
		t.Errorf("a wrong token: %v", inv)
	}
	t.Setenv(TokenEnv, testToken)
	for _, c := range cases {
		dir := filepath.Join(t.TempDir(), "out")
		args := append([]string{"--coordinator", base, "--target", "http://127.0.0.1:9", "--model", "m", "--out", dir}, c.args...)
		inv := runArgs(args...)
		if inv.code != exitError || !strings.Contains(inv.stderr, c.want) || !strings.Contains(inv.stderr, "answered 400") {
			t.Errorf("%v: want exit 2 saying %q, got %v", c.args, c.want, inv)
		}
		if names, _ := os.ReadDir(dir); len(names) != 0 {
			t.Errorf("%v: --out holds %v", c.args, names)
		}
	}
}

// TestRemoteOnlyFlags: the distributed flags need --coordinator; a search
// or an accuracy run is not submitted by it.
func TestRemoteOnlyFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--workers", "2"}, "--workers: runs on workers registered with a daemon: give --coordinator URL too"},
		{[]string{"--workers-wait-ms", "100"}, "--workers-wait-ms needs --coordinator"},
		{[]string{"--max-clock-uncertainty-ms", "0.5"}, "--max-clock-uncertainty-ms needs --coordinator"},
		{[]string{"--coordinator", "http://127.0.0.1:9", "--mode", "find-peak"}, "--mode find-peak: not with --coordinator"},
		{[]string{"--coordinator", "http://u:p@127.0.0.1:9"}, "--coordinator: the URL holds credentials"},
		{[]string{"--coordinator", "ftp://127.0.0.1:9"}, "--coordinator: \"ftp://127.0.0.1:9\": want http://host:port"},
	} {
		inv := runArgs(append([]string{"--target", "http://127.0.0.1:9", "--model", "m", "--out", t.TempDir()}, c.args...)...)
		if inv.code != exitError || !strings.Contains(inv.stderr, c.want) || strings.Contains(inv.stderr, "u:p@") {
			t.Errorf("%v: want exit 2 saying %q, got %v", c.args, c.want, inv)
		}
	}
}

// fakeDaemon is a hostile or scripted daemon: it takes one run and
// answers its status from status (called with the number of the poll).
type fakeDaemon struct {
	status    func(n int) (int, string)
	cancelled atomic.Bool
	files     map[string]string
	polls     atomic.Int32
	// polled is closed at the first status asked: the run is followed.
	polled chan struct{}
	once   sync.Once
}

func (d *fakeDaemon) start(t *testing.T) string {
	d.polled = make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/runs", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
		fmt.Fprint(w, `{"id":"20260101-000000-abcd","url":"/v1/runs/20260101-000000-abcd","state":"queued","queue_position":0}`)
	})
	mux.HandleFunc("GET /v1/runs/{id}", func(w http.ResponseWriter, r *http.Request) {
		code, body := d.status(int(d.polls.Add(1)))
		d.once.Do(func() { close(d.polled) })
		w.WriteHeader(code)
		fmt.Fprint(w, body)
	})
	mux.HandleFunc("POST /v1/runs/{id}/cancel", func(w http.ResponseWriter, r *http.Request) {
		d.cancelled.Store(true)
		w.WriteHeader(http.StatusAccepted)
		fmt.Fprint(w, `{}`)
	})
	mux.HandleFunc("GET /v1/runs/{id}/files/{name}", func(w http.ResponseWriter, r *http.Request) {
		body, ok := d.files[r.PathValue("name")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, body)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func statusJSON(state string, files ...string) string {
	b, _ := json.Marshal(api.RunStatus{ID: "20260101-000000-abcd", State: api.State(state), Files: files, Error: "the run could not start"})
	return string(b)
}

// TestRemoteSignalCancels: the first SIGINT cancels the run on the daemon,
// whose files are then fetched; the exit status is a local interrupted
// run's, 130. A second signal exits at once, however the daemon hangs.
func TestRemoteSignalCancels(t *testing.T) {
	d := &fakeDaemon{files: map[string]string{runlog.SummaryFile: "summary\n"}}
	d.status = func(int) (int, string) {
		if d.cancelled.Load() {
			return 200, statusJSON("cancelled", runlog.SummaryFile)
		}
		return 200, statusJSON("running")
	}
	base := d.start(t)
	dir := t.TempDir()
	sigs, code, _, errb := signalledRun([]string{"--coordinator", base, "--target", "http://127.0.0.1:9", "--model", "m", "--out", dir})
	<-d.polled
	sigs <- syscall.SIGINT
	if c := <-code; c != exitInterrupted || !d.cancelled.Load() {
		t.Fatalf("exit %d, cancelled %v; want 130 and a cancel\n%s", c, d.cancelled.Load(), errb)
	}
	if b, err := os.ReadFile(filepath.Join(dir, runlog.SummaryFile)); err != nil || string(b) != "summary\n" {
		t.Errorf("the cancelled run's files were not fetched: %q %v", b, err)
	}

	// A daemon that never ends the run, even cancelled: a second signal.
	hang := &fakeDaemon{status: func(int) (int, string) { return 200, statusJSON("running") }}
	base = hang.start(t)
	sigs, code, _, errb = signalledRun([]string{"--coordinator", base, "--target", "http://127.0.0.1:9", "--model", "m", "--out", t.TempDir()})
	<-hang.polled
	sigs <- syscall.SIGINT
	sigs <- syscall.SIGINT
	if c := <-code; c != exitInterrupted || !strings.Contains(errb.String(), "again: exiting now") {
		t.Errorf("second signal: exit %d\n%s", c, errb)
	}
}

// TestRemoteEnds: how a run that ended otherwise than done exits (2, saying
// why), and a daemon gone (lost after lostAfter) or answering nonsense.
func TestRemoteEnds(t *testing.T) {
	defer func(d time.Duration) { lostAfter = d }(lostAfter)
	lostAfter = 300 * time.Millisecond
	cases := []struct {
		name   string
		status func(n int) (int, string)
		want   string
	}{
		{"failed", func(int) (int, string) { return 200, statusJSON("failed") }, "ended failed on the daemon: the run could not start"},
		{"gone", func(int) (int, string) { return 404, `{"error":{"code":"not_found","message":"no run"}}` }, "answered 404 not_found: no run"},
		{"busy", func(int) (int, string) { return 503, `{"error":{"code":"unavailable","message":"busy"}}` }, "answered 503 unavailable"},
		{"not json", func(int) (int, string) { return 200, `<html>` }, "not the API's JSON"},
		{"empty", func(int) (int, string) { return 200, `` }, "not the API's JSON"},
	}
	for _, c := range cases {
		d := &fakeDaemon{status: c.status}
		base := d.start(t)
		inv := runArgs("--coordinator", base, "--target", "http://127.0.0.1:9", "--model", "m", "--out", t.TempDir())
		if inv.code != exitError || !strings.Contains(inv.stderr, c.want) {
			t.Errorf("%s: want exit 2 saying %q, got %v", c.name, c.want, inv)
		}
	}
}

// TestRemoteHostileFiles: file names the daemon lists that are not a run's
// are not fetched (nothing is written outside --out), and a daemon that
// echoes the token back never gets it printed.
func TestRemoteHostileFiles(t *testing.T) {
	t.Setenv(TokenEnv, testToken)
	d := &fakeDaemon{files: map[string]string{}}
	d.status = func(int) (int, string) {
		return 200, statusJSON("done", "../../evil", "/etc/evil", runlog.ResultFile)
	}
	base := d.start(t)
	parent := t.TempDir()
	dir := filepath.Join(parent, "a", "b")
	inv := runArgs("--coordinator", base, "--target", "http://127.0.0.1:9", "--model", "m", "--out", dir)
	if inv.code != exitError || !strings.Contains(inv.stderr, "fetching result.json") {
		t.Errorf("want exit 2 (result.json not served), got %v", inv)
	}
	if _, err := os.Stat(filepath.Join(parent, "evil")); err == nil {
		t.Error("a file was written outside --out")
	}

	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"code":"invalid_request","message":"target: you sent %s","field":"target"}}`, r.Header.Get("Authorization"))
	}))
	t.Cleanup(echo.Close)
	inv = runArgs("--coordinator", echo.URL, "--target", "http://127.0.0.1:9", "--model", "m", "--out", t.TempDir())
	if inv.code != exitError || strings.Contains(inv.stderr, testToken) || !strings.Contains(inv.stderr, "--target: you sent Bearer <redacted>") {
		t.Errorf("the token echoed: %v", inv)
	}
}
