package daemon

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/runstore"
	"github.com/netloadgen/netloadgen/pkg/search"
	"github.com/netloadgen/netloadgen/pkg/serverview"
)

// A peak search through the API: its status carries the answer, with the
// criterion the trials were judged by and the peak's own verdict, and every
// file the search writes is served. Trials of 200 ms meet the latency bound
// but not early stopping: the peak is a loadgen6 pass and an INVALID run.
func TestSearchStatusAndFiles(t *testing.T) {
	sut := startSUT(t)
	_, base := startDaemon(t, nil)
	body := fmt.Sprintf(`{"target":%q,"model":"identity","scenario":"Server",`+
		`"settings":{"target_qps":50,"min_duration_ms":200,"min_query_count":1,"target_latency_ms":100,"latency_percentile":0.99},`+
		`"search":{"mode":"find-peak","lower_qps":50,"upper_qps":100,"strategy":"full"}}`, "http://"+sut.HTTPAddr())
	code, b := do(t, "POST", base+"/v1/runs", body)
	var created api.RunCreated
	if code != http.StatusAccepted || json.Unmarshal(b, &created) != nil {
		t.Fatalf("POST /v1/runs = %d %s", code, b)
	}
	id := created.ID
	st := waitState(t, base, id)
	s := st.Search
	if st.State != api.StateDone || s == nil {
		t.Fatalf("status %+v", st)
	}
	want := api.SearchStatus{Mode: search.ModeFindPeak, Algorithm: search.AlgoFindPeak, Unit: "queries/s", JudgedBy: "latency_constraint",
		Criterion: "the latency constraint (p99 ≤ 100 ms) with no failed samples", Ended: true, EndReason: s.EndReason,
		Found: true, Peak: 100, Reported: s.Reported, Trial: 2, TrialRunID: id + "/trial-002",
		PeakRunValidity: "INVALID", PeakRunNotMet: []string{"early stopping"}, Lower: 100,
		Strategy: search.StrategyFull, MinDurationS: 0.2, FullLengthEquivalentS: 0.4}
	if s.Reported <= 0 || !strings.Contains(s.EndReason, "upper limit") || fmt.Sprint(*s) != fmt.Sprint(want) {
		t.Errorf("search\n got %+v\nwant %+v", *s, want)
	}
	if len(st.Trials) != 2 {
		t.Fatalf("trials %+v", st.Trials)
	}
	for i, tr := range st.Trials {
		c := tr.Criteria
		if !tr.Pass || tr.Verdict != "INVALID" || tr.Phase != []string{"base", "boundary"}[i] || tr.LatencyBoundMs != 100 ||
			c == nil || !c.LatencyMet || c.EarlyStoppingMet || !c.MinDurationMet || !c.NoFailedSamples {
			t.Errorf("trial %+v, criteria %+v", tr, c)
		}
	}
	if st.Validity != "INVALID" {
		t.Errorf("validity %q: the peak trial's result.json is the run's own", st.Validity)
	}
	for _, f := range []string{api.SearchFile, api.SearchSummaryFile, "result.json", "mlperf_log_summary.txt"} {
		if !slices.Contains(st.Files, f) {
			t.Errorf("files %v lack %s", st.Files, f)
		}
	}

	req, _ := http.NewRequestWithContext(t.Context(), "GET", base+"/v1/runs/"+id+"/files/"+api.SearchSummaryFile, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") || err != nil ||
		!strings.Contains(string(sum), "scheduled samples/s, the figure to report (trial 2, asked 100 queries/s) by the latency constraint (p99 ≤ 100 ms) with no failed samples; as a single run it is INVALID: early stopping not met\n") {
		t.Errorf("%s: %d %s %v\n%s", api.SearchSummaryFile, resp.StatusCode, resp.Header.Get("Content-Type"), err, sum)
	}
	code, b = do(t, "GET", base+"/v1/runs/"+id+"/files/"+api.SearchFile, "")
	var rec search.Result
	if code != 200 || json.Unmarshal(b, &rec) != nil || !rec.Found || rec.Peak != 100 || len(rec.Trials) != 2 {
		t.Errorf("%s: %d %s", api.SearchFile, code, b)
	}
	// Each trial's own files, by its index; nothing outside its directory.
	for i, tr := range rec.Trials {
		code, b = do(t, "GET", fmt.Sprintf("%s/v1/runs/%s/trials/%d/files/result.json", base, id, tr.Index), "")
		var res struct {
			Validity string `json:"result_validity"`
		}
		if code != 200 || json.Unmarshal(b, &res) != nil || res.Validity != "INVALID" {
			t.Errorf("trial %d's result.json: %d %.200s", i+1, code, b)
		}
	}
	code, b = do(t, "GET", base+"/v1/runs/"+id+"/trials/1/files/"+"mlperf_log_summary.txt", "")
	if code != 200 || !strings.Contains(string(b), "Result is : INVALID") {
		t.Errorf("trial 1's summary: %d %.200s", code, b)
	}
	for _, p := range []string{"/trials/3/files/result.json", "/trials/0/files/result.json", "/trials/x/files/result.json",
		"/trials/1/files/run.json", "/trials/1/files/..%2Frun.json", "/trials/-1/files/result.json"} {
		if code, b := do(t, "GET", base+"/v1/runs/"+id+p, ""); code != 404 {
			t.Errorf("%s: %d %.200s, want 404", p, code, b)
		}
	}
}

// A sweep through the API: a search block with mode sweep and its rates
// runs one trial per rate, in order; the status lists them with their
// latency percentiles, and search.json and each trial's files are served.
func TestSweepThroughTheAPI(t *testing.T) {
	sut := startSUT(t)
	_, base := startDaemon(t, nil)
	body := fmt.Sprintf(`{"target":%q,"model":"identity","scenario":"Server",`+
		`"settings":{"min_duration_ms":200,"min_query_count":1,"target_latency_ms":100},`+
		`"search":{"mode":"sweep","rates":[40,20,60]}}`, "http://"+sut.HTTPAddr())
	code, b := do(t, "POST", base+"/v1/runs", body)
	var created api.RunCreated
	if code != http.StatusAccepted || json.Unmarshal(b, &created) != nil {
		t.Fatalf("POST /v1/runs = %d %s", code, b)
	}
	id := created.ID
	st := waitState(t, base, id)
	if st.State != api.StateDone || st.Search == nil || st.Search.Mode != search.ModeSweep || st.Search.Found || len(st.Trials) != 3 {
		t.Fatalf("status %+v search %+v", st, st.Search)
	}
	for i, tr := range st.Trials {
		if tr.Target != []float64{40, 20, 60}[i] || tr.Phase != "sweep" || tr.LatencyMs == nil || tr.LatencyMs.P99 <= 0 || tr.Achieved <= 0 {
			t.Errorf("trial %d: %+v", i+1, tr)
		}
		if code, b := do(t, "GET", fmt.Sprintf("%s/v1/runs/%s/trials/%d/files/result.json", base, id, tr.Index), ""); code != 200 {
			t.Errorf("trial %d's result.json: %d %.200s", tr.Index, code, b)
		}
	}
	code, b = do(t, "GET", base+"/v1/runs/"+id+"/files/"+api.SearchFile, "")
	var rec search.Result
	if code != 200 || json.Unmarshal(b, &rec) != nil || rec.Mode != search.ModeSweep || len(rec.Trials) != 3 {
		t.Errorf("%s: %d %.300s", api.SearchFile, code, b)
	}
	code, b = do(t, "GET", base+"/v1/runs/"+id+"/files/"+api.SearchSummaryFile, "")
	if code != 200 || !strings.Contains(string(b), "p99 vs rate") {
		t.Errorf("%s: %d %s", api.SearchSummaryFile, code, b)
	}
}

// A sweep's spec errors name the search block's field.
func TestSweepSpecErrors(t *testing.T) {
	_, base := startDaemon(t, nil)
	for _, tc := range []struct{ search, field string }{
		{`{"mode":"sweep"}`, "search.rates"},
		{`{"mode":"sweep","rates":[100,0]}`, "search.rates"},
		{`{"mode":"sweep","rates":[100],"verify_runs":2}`, "search.verify_runs"},
		{`{"mode":"find-peak","rates":[100]}`, "search.rates"},
		{`{"mode":"sweep","rates":[1e12]}`, "search.rates"},
		{`{"mode":"climb","rates":[100]}`, "search.mode"},
	} {
		body := `{"target":"http://127.0.0.1:1","model":"identity","scenario":"Server","search":` + tc.search + `}`
		code, b := do(t, "POST", base+"/v1/runs", body)
		var e api.ErrorBody
		if code != http.StatusBadRequest || json.Unmarshal(b, &e) != nil || e.Error.Field != tc.field {
			t.Errorf("%s: %d %s, want 400 naming %s", tc.search, code, b, tc.field)
		}
	}
}

// Every file the API serves is one the store opens (else it answers 404),
// and the search's names are pkg/search's.
func TestServedFilesAreStoreFiles(t *testing.T) {
	for _, name := range api.RunFiles() {
		if !slices.Contains(runstore.FileNames(), name) {
			t.Errorf("api serves %s, runstore's allowlist lacks it", name)
		}
	}
	if api.SearchFile != search.ResultFile || runstore.SearchFile != search.ResultFile ||
		api.SearchSummaryFile != search.SummaryFile || runstore.SearchSummaryFile != search.SummaryFile ||
		api.EarlyVerdictFile != search.EarlyVerdictFile || runstore.EarlyVerdictFile != search.EarlyVerdictFile {
		t.Errorf("the search's file names differ: api %s %s, runstore %s %s, search %s %s", api.SearchFile, api.SearchSummaryFile,
			runstore.SearchFile, runstore.SearchSummaryFile, search.ResultFile, search.SummaryFile)
	}
	if runstore.ServerMetricsFile != serverview.MetricsFile {
		t.Errorf("runstore's server metrics file %s, serverview's %s", runstore.ServerMetricsFile, serverview.MetricsFile)
	}
}

// A search's token-latency and goodput figures reach the run's status as
// search.json has them.
func TestSearchStatusCarriesTokenFigures(t *testing.T) {
	res := &search.Result{JudgedBy: search.JudgedByGoodput, GoodputPercent: 90, Trials: []search.Trial{{Index: 1, Dir: "trial-001",
		TokenLatencies: &search.TokenFigures{TTFTMs: 50, TTFTBoundMs: 100, TTFTMet: true, TPOTMs: 27, TPOTBoundMs: 26},
		Goodput:        &search.GoodputFigures{SamplesIssued: 100, SamplesMeetingSLO: 91, Percent: 91}}}}
	trials, st := searchStatus(res, "r1")
	want := api.TrialTokenLatencies{TTFTMs: 50, TTFTBoundMs: 100, TTFTMet: true, TPOTMs: 27, TPOTBoundMs: 26}
	if len(trials) != 1 || trials[0].TokenLatencies == nil || *trials[0].TokenLatencies != want {
		t.Fatalf("trials %+v", trials)
	}
	if g := trials[0].Goodput; g == nil || *g != (api.TrialGoodput{SamplesIssued: 100, SamplesMeetingSLO: 91, Percent: 91}) {
		t.Errorf("goodput %+v", g)
	}
	if st.JudgedBy != search.JudgedByGoodput || st.GoodputPercent != 90 {
		t.Errorf("status %+v", st)
	}
}

// A trial run again because it failed early (issue 33) is in the run's
// trials list beside its retry, each pointing at the other.
func TestSearchStatusListsARetryAndItsTrial(t *testing.T) {
	res := &search.Result{Trials: []search.Trial{
		{Index: 1, Dir: "trial-001", Target: 100, Pass: true},
		{Index: 2, Dir: "trial-002", Target: 200, RetriedAs: 3},
		{Index: 3, Dir: "trial-003", Target: 200, Pass: true, RetryOf: 2},
	}}
	trials, _ := searchStatus(res, "r1")
	if len(trials) != 3 || trials[1].RetriedAs != 3 || trials[2].RetryOf != 2 || trials[0].RetryOf != 0 || trials[0].RetriedAs != 0 {
		t.Fatalf("trials %+v; want 2 retried as 3, 3 a retry of 2", trials)
	}
}
