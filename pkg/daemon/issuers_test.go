package daemon

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
)

// settings.issuers through the API (issue 29): a Server run split between
// two issuers is done with every sample answered; SingleStream with two
// is refused at submission, naming the field.
func TestIssuersThroughTheAPI(t *testing.T) {
	sut := startSUT(t)
	_, base := startDaemon(t, nil)
	body := fmt.Sprintf(`{"target":%q,"model":"identity","scenario":"Server",`+
		`"settings":{"issuers":2,"target_qps":200,"target_latency_ms":100,"min_duration_ms":200,"min_query_count":40}}`, "http://"+sut.HTTPAddr())
	code, b := do(t, "POST", base+"/v1/runs", body)
	var created api.RunCreated
	if code != http.StatusAccepted || json.Unmarshal(b, &created) != nil {
		t.Fatalf("POST /v1/runs = %d %s", code, b)
	}
	if st := waitState(t, base, created.ID); st.State != api.StateDone {
		t.Fatalf("status %+v", st)
	}
	code, b = do(t, "GET", base+"/v1/runs/"+created.ID+"/files/result.json", "")
	var res loadgen.Result
	if code != 200 || json.Unmarshal(b, &res) != nil || res.SamplesIssued < 40 || res.SamplesCompleted != res.SamplesIssued || res.SamplesFailed != 0 {
		t.Errorf("result.json: %d %.300s", code, b)
	}
	body = fmt.Sprintf(`{"target":%q,"model":"identity","scenario":"SingleStream","settings":{"issuers":2}}`, "http://"+sut.HTTPAddr())
	code, b = do(t, "POST", base+"/v1/runs", body)
	var e api.ErrorBody
	if code != http.StatusBadRequest || json.Unmarshal(b, &e) != nil || e.Error.Field != "settings.issuers" {
		t.Errorf("issuers with SingleStream: %d %s, want 400 naming settings.issuers", code, b)
	}
}
