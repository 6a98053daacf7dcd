package daemon

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
)

// A closed loop through the API (settings.concurrency): the run is done
// with validity N/A, result.json carries closed_loop, and no LoadGen log
// is among its files.
func TestClosedLoopThroughTheAPI(t *testing.T) {
	sut := startSUT(t)
	_, base := startDaemon(t, nil)
	body := fmt.Sprintf(`{"target":%q,"model":"identity","scenario":"SingleStream",`+
		`"settings":{"concurrency":2,"min_duration_ms":200,"min_query_count":1}}`, "http://"+sut.HTTPAddr())
	code, b := do(t, "POST", base+"/v1/runs", body)
	var created api.RunCreated
	if code != http.StatusAccepted || json.Unmarshal(b, &created) != nil {
		t.Fatalf("POST /v1/runs = %d %s", code, b)
	}
	st := waitState(t, base, created.ID)
	if st.State != api.StateDone || st.Validity != loadgen.ValidityNA || len(st.InvalidReasons) != 0 {
		t.Fatalf("status %+v", st)
	}
	if slices.Contains(st.Files, "mlperf_log_summary.txt") || !slices.Contains(st.Files, "result.json") {
		t.Errorf("files %v: want result.json and no LoadGen logs", st.Files)
	}
	code, b = do(t, "GET", base+"/v1/runs/"+created.ID+"/files/result.json", "")
	var res loadgen.Result
	if code != 200 || json.Unmarshal(b, &res) != nil || res.ClosedLoop == nil || res.ClosedLoop.Concurrency != 2 ||
		res.ClosedLoop.MaxOutstanding > 2 || res.SamplesCompleted == 0 {
		t.Errorf("result.json: %d %.300s", code, b)
	}
	body = fmt.Sprintf(`{"target":%q,"model":"identity","scenario":"Server","settings":{"concurrency":2}}`, "http://"+sut.HTTPAddr())
	code, b = do(t, "POST", base+"/v1/runs", body)
	var e api.ErrorBody
	if code != http.StatusBadRequest || json.Unmarshal(b, &e) != nil || e.Error.Field != "settings.concurrency" {
		t.Errorf("concurrency with Server: %d %s, want 400 naming settings.concurrency", code, b)
	}
}
