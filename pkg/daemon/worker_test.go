package daemon

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/atomicfile"
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
