package daemon

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"weak"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/atomicfile"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runstore"
)

// TestStoredSpecNoLongerAdmittedFails: a run queued under one daemon's
// limits and started under lower ones (LOADGEND_MAX_QPS lowered across a
// restart) ends failed, saying why, instead of staying queued.
func TestStoredSpecNoLongerAdmittedFails(t *testing.T) {
	dir := t.TempDir()
	store, err := runstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := store.Create([]byte(`{"target": "http://127.0.0.1:9", "model": "m", "scenario": "Server",
		"settings": {"target_qps": 4000, "min_duration_ms": 100, "min_query_count": 1}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	_, base := startDaemon(t, func(c *Config) { c.DataDir, c.MaxQPS = dir, 1000 })
	st := waitState(t, base, rec.ID)
	if st.State != api.StateFailed || !strings.Contains(st.Error, "settings.target_qps") || !strings.Contains(st.Error, "limit of 1000 QPS") {
		t.Errorf("run %s error %q, want failed naming settings.target_qps over the 1000 QPS limit", st.State, st.Error)
	}
}

// TestRunEndsWhenTheDiskIsFull: the run store cannot write once the run is
// going (a full disk). The run still ends: the event stream closes on its
// terminal state, GET reports it, and the state reaches run.json once the
// disk has room (here: at shutdown).
func TestRunEndsWhenTheDiskIsFull(t *testing.T) {
	sut := startSUT(t)
	var full atomic.Bool
	write := func(dir, name string, data []byte) error {
		if full.Load() {
			return &os.PathError{Op: "write", Path: filepath.Join(dir, name), Err: syscall.ENOSPC}
		}
		return atomicfile.WriteFile(dir, name, data)
	}
	cfg := Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), MaxQPS: 50000, MaxDuration: time.Hour,
		MaxInflight: 1024, LogLevel: "info", DrainTimeout: 5 * time.Second}
	s, err := New(cfg, nil, WithStoreOptions(runstore.WithFileWriter(write)))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	base := "http://" + s.Addr()
	code, b := do(t, "POST", base+"/v1/runs", specFor("http://"+sut.HTTPAddr(), 300, ""))
	var created api.RunCreated
	if code != 202 || json.Unmarshal(b, &created) != nil {
		t.Fatalf("POST: %d %s", code, b)
	}
	follow(t, base, created.ID, func(event string, data []byte) bool {
		var ev api.StateEvent
		if event == api.EventState && json.Unmarshal(data, &ev) == nil && ev.State == api.StateRunning {
			full.Store(true)
			return true
		}
		return false
	})
	st := waitState(t, base, created.ID)
	if st.State != api.StateDone {
		t.Errorf("run %s (%s), want done though its state could not be written", st.State, st.Error)
	}
	full.Store(false)
	s.Shutdown(t.Context())
	b, err = os.ReadFile(filepath.Join(cfg.DataDir, "runs", created.ID, runstore.RecordFile))
	var rec runstore.Record
	if err != nil || json.Unmarshal(b, &rec) != nil || rec.State != runstore.Done {
		t.Errorf("run.json after the disk had room: %s (%v), want done", b, err)
	}
}

// TestRunMemoryReturned: a run's trace and records (here a million queries,
// ~100 MB) are unreachable once the run ends, cancelled, and the worker
// gives the memory back to the operating system before it waits for the
// next run (#8: 1.9 GB stayed resident after a cancelled run).
func TestRunMemoryReturned(t *testing.T) {
	sut := startSUT(t)
	s := newUnstartedService(t)
	idle := make(chan struct{}, 1)
	s.afterRun = func() { idle <- struct{}{} }
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shutdown(t, s) })
	base := "http://" + s.Addr()

	code, b := do(t, "POST", base+"/v1/runs", fmt.Sprintf(`{"target":%q,"model":"identity","scenario":"Server",
		"settings":{"target_qps":1000,"min_duration_ms":1000000,"target_latency_ms":1000}}`, "http://"+sut.HTTPAddr()))
	if code != 202 {
		t.Fatalf("submit: %d %s", code, b)
	}
	var created api.RunCreated
	if err := json.Unmarshal(b, &created); err != nil {
		t.Fatal(err)
	}
	var run weak.Pointer[loadgen.Run]
	follow(t, base, created.ID, func(event string, data []byte) bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.active != nil {
			if r := s.active.run.Load(); r != nil {
				run = weak.Make(r)
				return true
			}
		}
		return false
	})
	if code, b := do(t, "POST", base+"/v1/runs/"+created.ID+"/cancel", ""); code != 200 && code != 202 {
		t.Fatalf("cancel: %d %s", code, b)
	}
	select {
	case <-idle:
	case <-time.After(time.Minute):
		t.Fatal("the worker did not finish the run")
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("heap: %d MiB in use, %d MiB idle, %d MiB of it released", ms.HeapInuse>>20, ms.HeapIdle>>20, ms.HeapReleased>>20)
	if resident := ms.HeapSys - ms.HeapReleased; resident > 48<<20 {
		t.Errorf("%d MiB of heap resident after the run (%d MiB in use)", resident>>20, ms.HeapInuse>>20)
	}
	for range 5 {
		runtime.GC()
	}
	if run.Value() != nil {
		t.Error("the ended run is still reachable")
	}
	if st := waitState(t, base, created.ID); st.State != api.StateCancelled {
		t.Errorf("state %s", st.State)
	}
}

// A run the worker has taken off the queue but not yet started (it is
// being admitted) is still first in line: a run submitted then is queued
// behind it, at position 1, not 0 (TestQueueAndCancel saw 0 once on a
// loaded machine); its status says position 0; and a cancel of it is a
// cancel of a queued run: it never starts.
func TestRunBeingAdmittedIsFirstInLine(t *testing.T) {
	sut := startSUT(t)
	s := newUnstartedService(t)
	taken, release := make(chan string, 4), make(chan struct{})
	s.taking = func(id string) {
		taken <- id
		<-release
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shutdown(t, s) })
	defer close(release) // before shutdown: the worker may hold the next run
	base := "http://" + s.Addr()
	target := "http://" + sut.HTTPAddr()

	submit := func() api.RunCreated {
		t.Helper()
		code, b := do(t, "POST", base+"/v1/runs", spec(target, ""))
		var c api.RunCreated
		if code != 202 || json.Unmarshal(b, &c) != nil {
			t.Fatalf("submit: %d %s", code, b)
		}
		return c
	}
	first := submit()
	if id := <-taken; id != first.ID {
		t.Fatalf("the worker took %s, want %s", id, first.ID)
	}
	second := submit()
	if second.QueuePosition != 1 {
		t.Errorf("a run submitted while the first is being admitted is at position %d, want 1", second.QueuePosition)
	}
	_, b := do(t, "GET", base+"/v1/runs/"+first.ID, "")
	var st api.RunStatus
	if err := json.Unmarshal(b, &st); err != nil || st.State != api.StateQueued || st.QueuePosition == nil || *st.QueuePosition != 0 {
		t.Errorf("the run being admitted: %s, want queued at position 0", b)
	}
	if code, b := do(t, "POST", base+"/v1/runs/"+first.ID+"/cancel", ""); code != 200 || !strings.Contains(string(b), `"cancelled"`) {
		t.Fatalf("cancel of the run being admitted: %d %s", code, b)
	}
	release <- struct{}{} // the first: it must not start
	if id := <-taken; id != second.ID {
		t.Fatalf("the worker took %s next, want %s", id, second.ID)
	}
	release <- struct{}{}
	if st := waitState(t, base, second.ID); st.State != api.StateDone {
		t.Errorf("second run %s, want done", st.State)
	}
	if st := waitState(t, base, first.ID); st.State != api.StateCancelled || st.StartedAt != nil {
		t.Errorf("first run %s (started %v), want cancelled, never started", st.State, st.StartedAt)
	}
}

// newUnstartedService is a service with startDaemon's configuration, not yet
// started: a test sets its hooks first.
func newUnstartedService(t *testing.T) *Service {
	t.Helper()
	s, err := New(Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), MaxQPS: 50000, MaxDuration: time.Hour,
		MaxInflight: 1024, LogLevel: "info", DrainTimeout: 5 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestStoredMixOutsideAllowedTargetsFails: a queued run whose mix names a
// URL outside LOADGEND_ALLOWED_TARGETS (the allowlist narrowed across a
// restart) fails naming the mix's entry and its URL, as a target outside
// the list would, before anything is sent.
func TestStoredMixOutsideAllowedTargetsFails(t *testing.T) {
	dir := t.TempDir()
	store, err := runstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := store.Create([]byte(`{"target": "http://127.0.0.1:9", "model": "m", "scenario": "Server",
		"mix": "m=0.5,other=0.5@http://127.0.0.2:9",
		"settings": {"target_qps": 10, "min_duration_ms": 100, "min_query_count": 1}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	_, base := startDaemon(t, func(c *Config) { c.DataDir, c.AllowedTargets = dir, []string{"127.0.0.1"} })
	st := waitState(t, base, rec.ID)
	for _, want := range []string{"mix entry 2 (other)", "http://127.0.0.2:9", "LOADGEND_ALLOWED_TARGETS"} {
		if st.State != api.StateFailed || !strings.Contains(st.Error, want) {
			t.Errorf("run %s error %q, want failed saying %q", st.State, st.Error, want)
		}
	}
}
