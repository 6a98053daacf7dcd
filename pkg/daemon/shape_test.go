package daemon

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
)

// TestShapedSpecsThroughTheAPI: the load shapes' fields are refused as
// 400s naming the field (a trace outside LOADGEND_DATA_ROOT, stages with
// another scenario, stages that do not parse, a sweep of speeds without a
// trace), and shaped specs (stages, a trace under the data root) are
// accepted and run to their end.
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
	body := fmt.Sprintf(`{"target":%q,"model":"identity","stages":"1s:50,1s:50->100","arrivals":"constant","settings":{"early_verdict":false}}`, target)
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
	// A trace under the data root, named relative to it: every request
	// replayed, at twice its pace.
	var tr strings.Builder
	for i := range 40 {
		fmt.Fprintf(&tr, `{"timestamp": %d, "input_length": 8, "output_length": 2}`+"\n", i*20)
	}
	if err := os.WriteFile(filepath.Join(root, "t.jsonl"), []byte(tr.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	body = fmt.Sprintf(`{"target":%q,"model":"identity","trace":"t.jsonl","trace_speed":2,"settings":{"early_verdict":false}}`, target)
	if code, b = do(t, "POST", base+"/v1/runs", body); code != http.StatusAccepted || json.Unmarshal(b, &created) != nil {
		t.Fatalf("POST /v1/runs = %d %s", code, b)
	}
	if st = waitState(t, base, created.ID); st.State != api.StateDone {
		t.Fatalf("status %+v", st)
	}
	code, b = do(t, "GET", base+"/v1/runs/"+created.ID+"/files/result.json", "")
	res = loadgen.Result{}
	if code != 200 || json.Unmarshal(b, &res) != nil || res.SamplesCompleted != 40 || res.SamplesFailed != 0 {
		t.Errorf("result.json of the replay: %d %.300s", code, b)
	}
}

// TestSweepOfTraceSpeedsThroughTheAPI: "a sweep may scale a trace's
// speed": one trial per speed, in order, each replaying every request of
// the trace.
func TestSweepOfTraceSpeedsThroughTheAPI(t *testing.T) {
	sut := startSUT(t)
	root := t.TempDir()
	var tr strings.Builder
	for i := range 30 {
		fmt.Fprintf(&tr, `{"timestamp": %d, "input_length": 8, "output_length": 2}`+"\n", i*40)
	}
	if err := os.WriteFile(filepath.Join(root, "t.jsonl"), []byte(tr.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, base := startDaemon(t, func(c *Config) { c.DataRoot = root })
	body := fmt.Sprintf(`{"target":%q,"model":"identity","trace":"t.jsonl","search":{"mode":"sweep","trace_speeds":[1,4]}}`, "http://"+sut.HTTPAddr())
	code, b := do(t, "POST", base+"/v1/runs", body)
	var created api.RunCreated
	if code != http.StatusAccepted || json.Unmarshal(b, &created) != nil {
		t.Fatalf("POST /v1/runs = %d %s", code, b)
	}
	st := waitState(t, base, created.ID)
	if st.State != api.StateDone || len(st.Trials) != 2 {
		t.Fatalf("status %+v", st)
	}
	for i, trial := range st.Trials {
		if trial.Target != []float64{1, 4}[i] {
			t.Errorf("trial %d at %v, want speed %v", i+1, trial.Target, []float64{1, 4}[i])
		}
		code, b := do(t, "GET", fmt.Sprintf("%s/v1/runs/%s/trials/%d/files/result.json", base, created.ID, trial.Index), "")
		var res loadgen.Result
		if code != 200 || json.Unmarshal(b, &res) != nil || res.SamplesCompleted != 30 {
			t.Errorf("trial %d's result.json: %d %.300s", trial.Index, code, b)
		}
	}
}
