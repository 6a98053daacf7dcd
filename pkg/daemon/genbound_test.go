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

// finishedRunStatus makes a run that finished with result as its
// result.json and returns its status as GET /v1/runs/{id} answers it, with
// the answer.
func finishedRunStatus(t *testing.T, result string) (api.RunStatus, *httptest.ResponseRecorder) {
	t.Helper()
	s := newTestService(t, t.TempDir())
	rec, err := s.store.Create(json.RawMessage(`{"target":"http://127.0.0.1:1","model":"m","scenario":"Server"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.store.SetState(rec.ID, runstore.Running, ""); err != nil {
		t.Fatal(err)
	}
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
	return st, w
}

// A finished run's status carries its result's invalid reasons and
// warnings (the generator-bound one among them), read from result.json.
func TestRunStatusCarriesWarnings(t *testing.T) {
	result := `{"scenario":"Server","result_validity":"INVALID","invalid_reasons":["99.00 percentile latency 13.6 ms exceeds the bound 10000000 ns"],` +
		`"generator_bound":{"lateness_p99_ns":13600000,"bound_ns":10000000,"share":1.36},"warnings":["generator bound: issue lateness p99 13.600 ms"]}`
	st, w := finishedRunStatus(t, result)
	if st.Validity != "INVALID" || !slices.Equal(st.Warnings, []string{"generator bound: issue lateness p99 13.600 ms"}) ||
		len(st.InvalidReasons) != 1 {
		t.Errorf("status validity %q, warnings %q, invalid_reasons %q:\n%s", st.Validity, st.Warnings, st.InvalidReasons, w.Body)
	}
}
