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

// TestRunSamplesJSONL: a generative run names its API in result.json and
// keeps its per-sample export in its
// directory, listed with its files and served at GET
// /v1/runs/{id}/samples.jsonl (and files/samples.jsonl): a line for every
// sample issued, with its tokens. A tensor run has none (404 saying why),
// a run not finished is 409 and an unknown one 404, as report.html.
func TestRunSamplesJSONL(t *testing.T) {
	sut := startSUT(t)
	_, base := startDaemon(t, nil)
	target := "http://" + sut.HTTPAddr()

	body := `{"target":"` + target + `","model":"llm","scenario":"Server","input_tokens":"16","output_tokens":"8",
		"settings":{"target_qps":50,"min_duration_ms":300,"min_query_count":20,"target_latency_ms":2000,"latency_percentile":0.9}}`
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
		SamplesIssued int64  `json:"samples_issued"`
		API           string `json:"api"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	// sutproxy lists the generate extension: the probe finds the stream.
	if res.API != "generate-stream" {
		t.Errorf("result.json api %q, want generate-stream", res.API)
	}
	resp, samples := send(t, "GET", base+"/v1/runs/"+run.ID+"/samples.jsonl", "", nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("samples.jsonl: %d %v %s", resp.StatusCode, resp.Header, samples)
	}
	var lines int64
	sc := bufio.NewScanner(bytes.NewReader(samples))
	for sc.Scan() {
		var l struct {
			Sample     int64  `json:"sample"`
			FirstToken *int64 `json:"first_token"`
			Tokens     int    `json:"tokens"`
			Status     string `json:"status"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %d: %v: %s", lines+1, err, sc.Bytes())
		}
		if l.Sample != lines || l.Status != "ok" || l.Tokens != 8 || l.FirstToken == nil {
			t.Errorf("line %d: %s; want sample %d ok with 8 tokens and a first token", lines+1, sc.Bytes(), lines)
		}
		lines++
	}
	if lines == 0 || lines != res.SamplesIssued {
		t.Errorf("%d lines, want one a sample issued (%d)", lines, res.SamplesIssued)
	}
	if code, file := do(t, "GET", base+"/v1/runs/"+run.ID+"/files/"+runlog.SamplesJSONLFile, ""); code != 200 || !bytes.Equal(file, samples) {
		t.Errorf("files/samples.jsonl: %d, %d bytes; want the same %d bytes", code, len(file), len(samples))
	}

	// A tensor run keeps none.
	_, b = do(t, "POST", base+"/v1/runs", spec(target, ""))
	var tensor struct{ ID string }
	json.Unmarshal(b, &tensor)
	if st := waitState(t, base, tensor.ID); slices.Contains(st.Files, runlog.SamplesJSONLFile) {
		t.Errorf("a tensor run lists %s: %v", runlog.SamplesJSONLFile, st.Files)
	}
	if code, b := do(t, "GET", base+"/v1/runs/"+tensor.ID+"/samples.jsonl", ""); code != http.StatusNotFound || !strings.Contains(string(b), "generative") {
		t.Errorf("samples of a tensor run: %d %s", code, b)
	}

	// Not finished: 409; unknown: 404.
	_, b = do(t, "POST", base+"/v1/runs", specFor(target, 60000, ""))
	var long struct{ ID string }
	json.Unmarshal(b, &long)
	if code, b := do(t, "GET", base+"/v1/runs/"+long.ID+"/samples.jsonl", ""); code != http.StatusConflict || !strings.Contains(string(b), "not_finished") {
		t.Errorf("samples of an unfinished run: %d %s", code, b)
	}
	do(t, "POST", base+"/v1/runs/"+long.ID+"/cancel", "")
	waitState(t, base, long.ID)
	if code, _ := do(t, "GET", base+"/v1/runs/nope/samples.jsonl", ""); code != http.StatusNotFound {
		t.Errorf("unknown run: %d", code)
	}
}
