package daemon

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/netloadgen/netloadgen/api"
)

// A finished run's status carries its result's failures by kind, as
// result.json has them.
func TestRunStatusCarriesFailures(t *testing.T) {
	result := `{"scenario":"Server","result_validity":"INVALID","samples_failed":193,"failures":[` +
		`{"outcome":"error","status":"HTTP 500","count":190,"example":"server: HTTP 500: boom"},` +
		`{"outcome":"unanswered","status":"","count":3,"example":"no response before the drain timeout"}]}`
	st, w := finishedRunStatus(t, result)
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
