package daemon

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/runlog"
)

// TestWorkersWaitedFor: a spec asking for workers is taken (202) and
// waits for them up to workers_wait_ms; too few by then, the run fails
// naming who is registered and who is busy.
func TestWorkersWaitedFor(t *testing.T) {
	_, base := startDaemon(t, nil)
	code, b := do(t, "POST", base+"/v1/runs", `{"target":"http://127.0.0.1:9","model":"m","workers":3,"workers_wait_ms":50}`)
	if code != http.StatusAccepted {
		t.Fatalf("POST with workers: %d %s", code, b)
	}
	var run struct{ ID string }
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	st := waitState(t, base, run.ID)
	if st.State != "failed" || !strings.Contains(st.Error, "wants 3 workers, 0 idle") || !strings.Contains(st.Error, "busy: none") {
		t.Fatalf("state %s, error %q", st.State, st.Error)
	}
}

// TestKeepSamples: keep_samples makes a tensor run keep samples.jsonl, a
// line for every sample issued, served as a generative run's is.
func TestKeepSamples(t *testing.T) {
	sut := startSUT(t)
	_, base := startDaemon(t, nil)
	body := `{"target":"http://` + sut.HTTPAddr() + `","model":"identity","scenario":"Server","keep_samples":true,
		"settings":{"target_qps":100,"min_duration_ms":200,"min_query_count":20,"target_latency_ms":100,"latency_percentile":0.9}}`
	code, b := do(t, "POST", base+"/v1/runs", body)
	if code != http.StatusAccepted {
		t.Fatalf("POST: %d %s", code, b)
	}
	var run struct{ ID string }
	json.Unmarshal(b, &run)
	st := waitState(t, base, run.ID)
	if st.State != "done" || !slices.Contains(st.Files, runlog.SamplesJSONLFile) {
		t.Fatalf("state %s, files %v; want done with %s", st.State, st.Files, runlog.SamplesJSONLFile)
	}
	_, b = do(t, "GET", base+"/v1/runs/"+run.ID+"/result", "")
	var res struct {
		SamplesIssued int64 `json:"samples_issued"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	resp, samples := send(t, "GET", base+"/v1/runs/"+run.ID+"/samples.jsonl", "", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("samples.jsonl: %d %s", resp.StatusCode, samples)
	}
	lines := int64(0)
	for sc := bufio.NewScanner(bytes.NewReader(samples)); sc.Scan(); lines++ {
		var l struct{ Sample int64 }
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.Sample != lines {
			t.Fatalf("line %d: %s (%v)", lines, sc.Bytes(), err)
		}
	}
	if lines == 0 || lines != res.SamplesIssued {
		t.Errorf("%d lines, %d samples issued", lines, res.SamplesIssued)
	}
}
