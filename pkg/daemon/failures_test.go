package daemon

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/runstore"
)

// A finished run's status carries its result's failures by kind, as
// result.json has them.
func TestRunStatusCarriesFailures(t *testing.T) {
	s := newTestService(t, t.TempDir())
	rec, err := s.store.Create(json.RawMessage(`{"target":"http://127.0.0.1:1","model":"m","scenario":"Server"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.store.SetState(rec.ID, runstore.Running, ""); err != nil {
		t.Fatal(err)
	}
	result := `{"scenario":"Server","result_validity":"INVALID","samples_failed":193,"failures":[` +
		`{"outcome":"error","status":"HTTP 500","count":190,"example":"server: HTTP 500: boom"},` +
		`{"outcome":"unanswered","status":"","count":3,"example":"no response before the drain timeout"}]}`
	if err := s.store.WriteFile(rec.ID, runstore.ResultFile, []byte(result)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.store.SetState(rec.ID, runstore.Done, "completed"); err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	s.handler().ServeHTTP(w, localRequest("GET", "/v1/runs/"+rec.ID))
	var st api.RunStatus
	if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &st) != nil {
		t.Fatalf("GET = %d %s", w.Code, w.Body)
	}
	want := []api.Failure{{Outcome: "error", Status: "HTTP 500", Count: 190, Example: "server: HTTP 500: boom"},
		{Outcome: "unanswered", Status: "", Count: 3, Example: "no response before the drain timeout"}}
	if !slices.Equal(st.Failures, want) {
		t.Errorf("status failures %+v, want %+v:\n%s", st.Failures, want, w.Body)
	}
	var raw map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	f0, _ := raw["failures"].([]any)
	if len(f0) != 2 || f0[1].(map[string]any)["status"] != "" {
		t.Errorf("an empty status is not written as \"\": %s", w.Body)
	}
}
