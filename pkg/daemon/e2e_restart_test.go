package daemon_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/daemon"
)

// kill -9 during a run, then a restart on the same data directory: the run
// is listed as interrupted with the progress it had saved, a finished run's
// files are byte for byte what they were, and a run queued behind the killed
// one is queued again and runs to completion.
func TestE2EKillAndRestart(t *testing.T) {
	target := e2eSUT(t)
	data := filepath.Join(t.TempDir(), "data")
	env := "LOADGEND_DATA_DIR=" + data
	runDir := func(id string) string { return filepath.Join(data, "runs", id) }

	p := startLoadgend(t, env)
	c := p.client
	finished := c.submit(t, serverSpec(target, 200, 1000))
	if st := c.waitEnded(t, finished, 30*time.Second); st.State != api.StateDone {
		t.Fatalf("first run ended %s (%s %s)", st.State, st.EndReason, st.Error)
	}
	before := hashDir(t, runDir(finished))
	for _, name := range []string{"run.json", "result.json", "mlperf_log_summary.txt", "mlperf_log_detail.txt", "latency.hlog"} {
		if _, ok := before[name]; !ok {
			t.Fatalf("finished run lacks %s: has %v", name, slices.Sorted(maps.Keys(before)))
		}
	}

	long := c.submit(t, serverSpec(target, 200, 60000))
	queued := c.submit(t, serverSpec(target, 200, 1000))
	// Progress reaches disk once a second: wait until the run has issued
	// and progress.json exists, so the kill has something to keep.
	c.waitProgress(t, long, 30*time.Second, func(pr api.Progress) bool {
		_, err := os.Stat(filepath.Join(runDir(long), "progress.json"))
		return pr.Issued > 0 && err == nil
	})
	if st := c.status(t, queued); st.State != api.StateQueued || st.QueuePosition == nil || *st.QueuePosition != 1 {
		t.Fatalf("run submitted behind the long one: %s, queue position %v", st.State, st.QueuePosition)
	}

	err := p.signal(t, syscall.SIGKILL, 10*time.Second)
	killedAt := time.Now()
	if ee, ok := errors.AsType[*exec.ExitError](err); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("loadgend exit: %v, want killed by SIGKILL", err)
	}
	var onDisk api.Progress
	progressBefore := readJSON(t, filepath.Join(runDir(long), "progress.json"), &onDisk)

	c = startLoadgend(t, env).client

	code, b := c.do(t, http.MethodGet, "/v1/runs?limit=10", "")
	var list api.RunList
	if code != http.StatusOK || json.Unmarshal(b, &list) != nil {
		t.Fatalf("GET /v1/runs = %d %s", code, b)
	}
	listed := map[string]api.RunStatus{}
	var order []string
	for _, r := range list.Runs {
		listed[r.ID] = r
		order = append(order, r.ID)
	}
	if want := []string{queued, long, finished}; !slices.Equal(order, want) {
		t.Errorf("listed %v, want newest first %v", order, want)
	}
	lr := listed[long]
	if lr.State != api.StateInterrupted {
		t.Errorf("killed run listed as %q, want interrupted", lr.State)
	}
	if lr.Progress == nil || lr.Progress.Issued <= 0 || lr.Progress.CompletedSamples <= 0 {
		t.Errorf("killed run's progress %+v, want the partial counts", lr.Progress)
	} else if !reflect.DeepEqual(*lr.Progress, onDisk) {
		t.Errorf("killed run's progress %+v, want what it saved before the kill %+v", *lr.Progress, onDisk)
	}
	if fr := listed[finished]; fr.State != api.StateDone || fr.Validity == "" {
		t.Errorf("finished run after restart: %s validity %q", fr.State, fr.Validity)
	}

	// Filtering by state finds it too.
	code, b = c.do(t, http.MethodGet, "/v1/runs?state=interrupted", "")
	var only api.RunList
	if code != http.StatusOK || json.Unmarshal(b, &only) != nil || len(only.Runs) != 1 || only.Runs[0].ID != long {
		t.Errorf("GET /v1/runs?state=interrupted = %d %s", code, b)
	}

	after := hashDir(t, runDir(finished))
	if !maps.Equal(before, after) {
		t.Errorf("finished run's files changed across the kill and restart:\nbefore %v\nafter  %v", before, after)
	}
	if got := hashFile(t, filepath.Join(runDir(long), "progress.json")); got != progressBefore {
		t.Errorf("killed run's progress.json was rewritten by the restart")
	}

	st := c.waitEnded(t, queued, 30*time.Second)
	if st.State != api.StateDone || st.StartedAt == nil || !st.StartedAt.After(killedAt) {
		t.Errorf("queued run after restart: %s started %v (kill at %v)", st.State, st.StartedAt, killedAt)
	}
	if code, _ := c.do(t, http.MethodGet, "/v1/runs/"+queued+"/result", ""); code != http.StatusOK {
		t.Errorf("queued run's result: %d", code)
	}
}

// SIGTERM during a run: loadgend stops issuing, drains, writes the run's
// files, marks it interrupted and exits 0; a queued run stays queued.
func TestE2EGracefulShutdown(t *testing.T) {
	target := e2eSUT(t)
	data := filepath.Join(t.TempDir(), "data")
	p := startLoadgend(t, "LOADGEND_DATA_DIR="+data, "LOADGEND_DRAIN_TIMEOUT=5s")
	c := p.client
	id := c.submit(t, serverSpec(target, 200, 60000))
	queued := c.submit(t, serverSpec(target, 200, 500))
	c.waitProgress(t, id, 30*time.Second, func(pr api.Progress) bool { return pr.CompletedSamples > 0 })

	if err := p.signal(t, syscall.SIGTERM, 30*time.Second); err != nil {
		t.Fatalf("loadgend after SIGTERM: %v, want exit status 0", err)
	}

	// What the stopped daemon left is read by a new one on the same
	// directory (which also shows the first released its lock).
	_, c = e2eService(t, func(cfg *daemon.Config) { cfg.DataDir = data })
	st := c.status(t, id)
	if st.State != api.StateInterrupted || st.EndedAt == nil {
		t.Fatalf("run after SIGTERM: %s (%s), ended %v; want interrupted", st.State, st.EndReason, st.EndedAt)
	}
	code, b := c.do(t, http.MethodGet, "/v1/runs/"+id+"/result", "")
	var res struct {
		Issued    int64  `json:"samples_issued"`
		Completed int64  `json:"samples_completed"`
		Failed    int64  `json:"samples_failed"`
		EndReason string `json:"end_reason"`
	}
	if code != http.StatusOK || json.Unmarshal(b, &res) != nil {
		t.Fatalf("result of the interrupted run: %d %s", code, b)
	}
	if res.Completed <= 0 || res.Issued != res.Completed+res.Failed {
		t.Errorf("result: issued %d, completed %d, failed %d; want issuing stopped and everything accounted for", res.Issued, res.Completed, res.Failed)
	}
	if res.EndReason != "interrupted" {
		t.Errorf("result's end_reason %q, want interrupted", res.EndReason)
	}
	if st.Progress == nil || st.Progress.CompletedSamples != res.Completed {
		t.Errorf("last progress %+v, want its completed samples = the result's %d", st.Progress, res.Completed)
	}
	for _, name := range []string{"mlperf_log_summary.txt", "mlperf_log_detail.txt", "latency.hlog"} {
		code, b := c.do(t, http.MethodGet, "/v1/runs/"+id+"/files/"+name, "")
		if code != http.StatusOK || len(b) == 0 {
			t.Errorf("file %s: %d, %d bytes", name, code, len(b))
		}
		if name == "mlperf_log_summary.txt" && !strings.Contains(string(b), "  end_reason : interrupted\n") {
			t.Errorf("the summary does not say end_reason : interrupted:\n%s", b)
		}
	}
	if st := c.waitEnded(t, queued, 30*time.Second); st.State != api.StateDone {
		t.Errorf("run queued at shutdown: %s after the restart, want done", st.State)
	}
}

// hashDir is the sha256 of every file in dir, by name.
func hashDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range ents {
		if e.Type().IsRegular() {
			out[e.Name()] = hashFile(t, filepath.Join(dir, e.Name()))
		}
	}
	return out
}

func hashFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// readJSON decodes the file at path into v and returns the file's hash.
func readJSON(t *testing.T, path string, v any) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
