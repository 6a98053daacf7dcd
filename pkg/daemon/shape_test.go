package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/shape"
)

// TestShapedSpecsThroughTheAPI: the load shapes' fields are refused as
// 400s naming the field (a trace outside LOADGEND_DATA_ROOT, stages with
// another scenario, stages that do not parse, a sweep of speeds without a
// trace), and a shaped spec, once pkg/shape builds its stages, is
// accepted and runs to its end.
func TestShapedSpecsThroughTheAPI(t *testing.T) {
	sut := startSUT(t)
	root := t.TempDir()
	outside := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(outside, []byte(`{"timestamp": 0, "input_length": 4, "output_length": 2}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, base := startDaemon(t, func(c *Config) { c.DataRoot = root })
	target := "http://" + sut.HTTPAddr()
	for _, c := range []struct{ body, field string }{
		{fmt.Sprintf(`{"target":%q,"model":"identity","trace":%q}`, target, outside), "trace"},
		{fmt.Sprintf(`{"target":%q,"model":"identity","trace":"../../etc/passwd"}`, target), "trace"},
		{fmt.Sprintf(`{"target":%q,"model":"identity","stages":"1s:10","scenario":"Offline"}`, target), "scenario"},
		{fmt.Sprintf(`{"target":%q,"model":"identity","stages":"soon"}`, target), "stages"},
		{fmt.Sprintf(`{"target":%q,"model":"identity","stages":7}`, target), "stages"},
		{fmt.Sprintf(`{"target":%q,"model":"identity","trace_speed":2}`, target), "trace_speed"},
		{fmt.Sprintf(`{"target":%q,"model":"identity","stages":"1s:10","search":{"mode":"sweep","trace_speeds":[1,2]}}`, target), "search.trace_speeds"},
		{fmt.Sprintf(`{"target":%q,"model":"identity","stages":"1s:10","workers":2}`, target), "workers"},
	} {
		code, b := do(t, "POST", base+"/v1/runs", c.body)
		var e api.ErrorBody
		if code != http.StatusBadRequest || json.Unmarshal(b, &e) != nil || e.Error.Field != c.field {
			t.Errorf("%s: %d %s, want 400 naming %s", c.body, code, b, c.field)
		}
	}
	if _, err := shape.ParseStages("1s:1"); errors.Is(err, errors.ErrUnsupported) {
		t.Skip("pkg/shape's stages are not built on this branch: the shaped run itself is not tested")
	}
	body := fmt.Sprintf(`{"target":%q,"model":"identity","stages":"1s:50,1s:50->100","arrivals":"constant"}`, target)
	code, b := do(t, "POST", base+"/v1/runs", body)
	var created api.RunCreated
	if code != http.StatusAccepted || json.Unmarshal(b, &created) != nil {
		t.Fatalf("POST /v1/runs = %d %s", code, b)
	}
	st := waitState(t, base, created.ID)
	if st.State != api.StateDone {
		t.Fatalf("status %+v", st)
	}
	code, b = do(t, "GET", base+"/v1/runs/"+created.ID+"/files/result.json", "")
	var res loadgen.Result
	// Constant arrivals: 50 in the first second, 75 in the ramp's, the
	// shape's and not LoadGen's Poisson schedule (600 s at 1 QPS).
	if code != 200 || json.Unmarshal(b, &res) != nil || res.SamplesCompleted < 123 || res.SamplesCompleted > 127 || res.SamplesFailed != 0 {
		t.Errorf("result.json: %d %.300s", code, b)
	}
}
