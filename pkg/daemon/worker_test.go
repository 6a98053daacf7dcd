package daemon

import (
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/api"
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
