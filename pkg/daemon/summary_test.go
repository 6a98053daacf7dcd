package daemon

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/runstore"
)

// newTestService is a service over a fresh data directory, not serving:
// its handler is called directly.
func newTestService(t testing.TB, dir string) *Service {
	t.Helper()
	s, err := New(Config{Listen: "127.0.0.1:0", DataDir: dir, MaxQPS: 50000, MaxDuration: time.Hour,
		MaxInflight: 1024, LogLevel: "info", DrainTimeout: 5 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.store.Close() })
	return s
}

// GET /v1/runs writes each run's status from memory, finished runs' from
// kept bytes; the answer is byte for byte writeJSON's of the api.RunList,
// on every page, empty or not, the first time and the next.
func TestRunListIsWriteJSONs(t *testing.T) {
	s := newTestService(t, t.TempDir())
	spec := json.RawMessage(`{"target":"http://127.0.0.1:1","model":"m","scenario":"Server"}`)
	for i, end := range []runstore.State{runstore.Done, runstore.Failed, runstore.Cancelled, runstore.Running, runstore.Queued, runstore.Done} {
		rec, err := s.store.Create(spec)
		if err != nil {
			t.Fatal(err)
		}
		if end == runstore.Queued || end == runstore.Cancelled {
			if end == runstore.Queued {
				s.queue = append(s.queue, rec.ID)
			} else if _, err := s.store.SetState(rec.ID, end, "test"); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if _, err := s.store.SetState(rec.ID, runstore.Running, ""); err != nil {
			t.Fatal(err)
		}
		p, _ := json.Marshal(api.Progress{Issued: int64(i), Completed: int64(i)})
		if err := s.store.WriteFile(rec.ID, runstore.ProgressFile, p); err != nil {
			t.Fatal(err)
		}
		if err := s.store.WriteFile(rec.ID, runstore.ResultFile, []byte(`{"scenario":"Server","result_validity":"VALID"}`)); err != nil {
			t.Fatal(err)
		}
		if end == runstore.Failed {
			_, err = s.store.Fail(rec.ID, "test", errStub("boom"))
		} else if end != runstore.Running {
			_, err = s.store.SetState(rec.ID, end, "completed")
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	h := s.handler()
	for _, query := range []string{"", "limit=2", "limit=500", "state=done", "state=done,failed&limit=1", "state=interrupted"} {
		for range 2 {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, localRequest("GET", "/v1/runs?"+query))
			var list api.RunList
			if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &list) != nil {
				t.Fatalf("GET /v1/runs?%s = %d %s", query, w.Code, w.Body)
			}
			want := api.RunList{Runs: []api.RunStatus{}, NextPageToken: list.NextPageToken}
			for _, r := range list.Runs {
				rec, err := s.store.Get(r.ID)
				if err != nil {
					t.Fatal(err)
				}
				want.Runs = append(want.Runs, s.status(rec, false))
			}
			ww := httptest.NewRecorder()
			writeJSON(ww, http.StatusOK, want)
			if !bytes.Equal(w.Body.Bytes(), ww.Body.Bytes()) {
				t.Fatalf("GET /v1/runs?%s:\n%s\nwriteJSON writes:\n%s", query, w.Body, ww.Body)
			}
			if query == "" && (len(list.Runs) != 6 || list.Runs[0].Validity != "VALID" || list.Runs[0].Progress == nil || list.Runs[1].QueuePosition == nil) {
				t.Errorf("list %s", w.Body)
			}
		}
	}
}

type errStub string

func (e errStub) Error() string { return string(e) }

// localRequest is a request to a handler of newTestService's, addressed as
// a local client addresses it: Host is the listen address, which the host
// guard accepts.
func localRequest(method, target string) *http.Request {
	r := httptest.NewRequest(method, target, nil)
	r.Host = "127.0.0.1:0"
	return r
}
