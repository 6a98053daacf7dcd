package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/sim"
	"github.com/netloadgen/netloadgen/pkg/sutproxy"
)

// startDaemon starts a service on a free loopback port over a fresh data dir.
func startDaemon(t testing.TB, edit func(*Config)) (*Service, string) {
	t.Helper()
	cfg := Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), MaxQPS: 50000, MaxDuration: time.Hour,
		MaxInflight: 1024, LogLevel: "info", DrainTimeout: 5 * time.Second}
	if edit != nil {
		edit(&cfg)
	}
	s, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shutdown(t, s) })
	return s, "http://" + s.Addr()
}

// shutdown stops s and waits for its worker, so that nothing writes into
// a test's temporary directory after the test (t.Context is already
// cancelled when Cleanup functions run: Shutdown would not wait).
func shutdown(t testing.TB, s *Service) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

func startSUT(t testing.TB, models ...sim.ModelSpec) *sutproxy.Proxy {
	t.Helper()
	p, err := sutproxy.Start(t.Context(), sutproxy.Config{HTTPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0", Models: models})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// do sends a request as a script would: a body goes as application/json.
// header is name, value pairs that replace the defaults; an empty value
// leaves the header out.
func do(t testing.TB, method, url, body string, header ...string) (int, []byte) {
	t.Helper()
	h := map[string]string{}
	if body != "" {
		h["Content-Type"] = "application/json"
	}
	for i := 0; i+1 < len(header); i += 2 {
		h[header[i]] = header[i+1]
	}
	resp, b := send(t, method, url, body, h)
	return resp.StatusCode, b
}

// send sends a request with exactly the headers given (an empty value: not
// sent), Host among them, as a browser would put them on the wire.
func send(t testing.TB, method, url, body string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		switch {
		case k == "Host":
			req.Host = v
		case v != "":
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// follow reads a run's event stream until until returns true for an event
// (its name and data) or the stream ends; the stream is the API's event for
// "something changed", so no test polls.
func follow(t testing.TB, base, id string, until func(event string, data []byte) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/v1/runs/"+id+"/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var event string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if until(event, []byte(strings.TrimPrefix(line, "data: "))) {
				return
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("events of %s: %v", id, err)
	}
}

// waitState follows a run's events until its terminal state, then returns
// its status.
func waitState(t testing.TB, base, id string) api.RunStatus {
	t.Helper()
	follow(t, base, id, func(event string, data []byte) bool {
		var ev api.StateEvent
		return event == api.EventState && json.Unmarshal(data, &ev) == nil && ev.State.Terminal()
	})
	_, b := do(t, "GET", base+"/v1/runs/"+id, "")
	var st api.RunStatus
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if !st.State.Terminal() {
		t.Fatalf("run %s: the event stream ended with the run %s", id, st.State)
	}
	return st
}

func TestRoutesMatchSpec(t *testing.T) {
	s := &Service{}
	var want []string
	for _, r := range api.Routes {
		want = append(want, r.Pattern())
	}
	got := slices.Sorted(maps.Keys(s.routes()))
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("handled routes %v\nspec routes %v", got, want)
	}
}

// spec is a short Server run; extra adds settings.
func spec(target string, extra string) string {
	return specFor(target, 500, extra)
}

func specFor(target string, durationMs int, extra string) string {
	return fmt.Sprintf(`{"target":%q,"model":"identity","scenario":"Server","settings":{"target_qps":200,"min_duration_ms":%d,"min_query_count":50,"target_latency_ms":50,"latency_percentile":0.9%s}}`, target, durationMs, extra)
}

func TestRunLifecycle(t *testing.T) {
	sut := startSUT(t)
	_, base := startDaemon(t, nil)
	target := "http://" + sut.HTTPAddr()

	code, b := do(t, "POST", base+"/v1/runs", spec(target, ""))
	if code != http.StatusAccepted {
		t.Fatalf("POST /v1/runs = %d %s", code, b)
	}
	var created api.RunCreated
	json.Unmarshal(b, &created)
	if created.ID == "" || created.URL != "/v1/runs/"+created.ID {
		t.Fatalf("created %s", b)
	}
	st := waitState(t, base, created.ID)
	if st.State != api.StateDone || st.Validity != "VALID" || st.Progress == nil || st.Progress.Completed == 0 {
		t.Fatalf("finished run %+v", st)
	}
	code, b = do(t, "GET", base+"/v1/runs/"+created.ID+"/result", "")
	var res struct {
		Validity string `json:"result_validity"`
		Done     int64  `json:"samples_completed"`
	}
	if code != 200 || json.Unmarshal(b, &res) != nil || res.Validity != "VALID" || res.Done != st.Progress.CompletedSamples {
		t.Errorf("result %d %s", code, b)
	}
	for _, name := range api.RunFiles() {
		want := 200
		switch name {
		case api.SearchFile, api.SearchSummaryFile, api.EarlyVerdictFile:
			want = 404 // a peak search's files; this run is none
		case runlog.SamplesJSONLFile:
			want = 404 // a generative run's; this run is a tensor run
		}
		if code, _ := do(t, "GET", base+"/v1/runs/"+created.ID+"/files/"+name, ""); code != want {
			t.Errorf("file %s: %d, want %d", name, code, want)
		}
	}
	for _, bad := range []string{"run.json", "..%2Frun.json", "progress.json"} {
		if code, _ := do(t, "GET", base+"/v1/runs/"+created.ID+"/files/"+bad, ""); code != 404 {
			t.Errorf("file %s: %d, want 404", bad, code)
		}
	}
	if code, _ := do(t, "POST", base+"/v1/runs/"+created.ID+"/cancel", ""); code != http.StatusConflict {
		t.Errorf("cancel of a finished run: %d, want 409", code)
	}
	if code, _ := do(t, "GET", base+"/v1/runs/nope", ""); code != 404 {
		t.Errorf("unknown run: %d", code)
	}
}

// Runs wait their turn in FIFO order; a queued run can be cancelled; a
// running one cancelled stops, keeps its files and ends cancelled.
func TestQueueAndCancel(t *testing.T) {
	sut := startSUT(t)
	_, base := startDaemon(t, nil)
	target := "http://" + sut.HTTPAddr()
	long := specFor(target, 60000, "")
	var ids []string
	for i, body := range []string{long, spec(target, ""), spec(target, "")} {
		code, b := do(t, "POST", base+"/v1/runs", body)
		var c api.RunCreated
		json.Unmarshal(b, &c)
		if code != 202 || c.QueuePosition != i {
			t.Fatalf("run %d: %d %s, want queue position %d", i, code, b, i)
		}
		ids = append(ids, c.ID)
	}
	_, b := do(t, "GET", base+"/v1/runs", "")
	var list api.RunList
	json.Unmarshal(b, &list)
	if len(list.Runs) != 3 || list.Runs[0].ID != ids[2] || list.Runs[2].ID != ids[0] {
		t.Fatalf("list is not newest first: %s", b)
	}
	if code, b := do(t, "POST", base+"/v1/runs/"+ids[1]+"/cancel", ""); code != 200 || !strings.Contains(string(b), `"cancelled"`) {
		t.Fatalf("cancel queued: %d %s", code, b)
	}
	// Wait until the long run is issuing, then cancel it.
	issuing := false
	follow(t, base, ids[0], func(event string, data []byte) bool {
		var p api.Progress
		issuing = event == api.EventProgress && json.Unmarshal(data, &p) == nil && p.Issued > 0
		return issuing
	})
	if !issuing {
		t.Fatal("the long run ended before it issued")
	}
	if code, b := do(t, "POST", base+"/v1/runs/"+ids[0]+"/cancel", ""); code != 202 {
		t.Fatalf("cancel running: %d %s", code, b)
	}
	st := waitState(t, base, ids[0])
	if st.State != api.StateCancelled || !slices.Contains(st.Files, "result.json") {
		t.Errorf("cancelled run %+v", st)
	}
	if st := waitState(t, base, ids[2]); st.State != api.StateDone {
		t.Errorf("third run %s, want done after the others", st.State)
	}
	_, b = do(t, "GET", base+"/v1/runs?state=cancelled", "")
	json.Unmarshal(b, &list)
	if len(list.Runs) != 2 {
		t.Errorf("filter state=cancelled: %s", b)
	}
	_, b = do(t, "GET", base+"/v1/runs?limit=1", "")
	json.Unmarshal(b, &list)
	if len(list.Runs) != 1 || list.NextPageToken == "" {
		t.Fatalf("page 1: %s", b)
	}
	_, b = do(t, "GET", base+"/v1/runs?limit=5&page_token="+list.NextPageToken, "")
	json.Unmarshal(b, &list)
	if len(list.Runs) != 2 || list.Runs[0].ID != ids[1] {
		t.Errorf("page 2: %s", b)
	}
}

// Past LOADGEND_MAX_QUEUED waiting runs, a new one is refused with 429
// queue_full and not stored; a place freed in the queue takes one again.
func TestQueueCap(t *testing.T) {
	sut := startSUT(t)
	_, base := startDaemon(t, func(c *Config) { c.MaxQueued = 2 })
	target := "http://" + sut.HTTPAddr()
	submit := func(body string) (int, api.RunCreated, []byte) {
		code, b := do(t, "POST", base+"/v1/runs", body)
		var c api.RunCreated
		json.Unmarshal(b, &c)
		return code, c, b
	}
	code, active, b := submit(specFor(target, 60000, ""))
	if code != http.StatusAccepted {
		t.Fatalf("first run: %d %s", code, b)
	}
	// Once it runs, the queue behind it is empty.
	follow(t, base, active.ID, func(event string, data []byte) bool {
		var ev api.StateEvent
		return event == api.EventState && json.Unmarshal(data, &ev) == nil && ev.State != api.StateQueued
	})
	var queued []string
	for i := 1; i <= 2; i++ {
		code, c, b := submit(spec(target, ""))
		if code != http.StatusAccepted || c.QueuePosition != i {
			t.Fatalf("queued run %d: %d %s", i, code, b)
		}
		queued = append(queued, c.ID)
	}
	code, _, b = submit(spec(target, ""))
	wantError(t, "a third queued run", code, b, http.StatusTooManyRequests, api.CodeQueueFull)
	_, b = do(t, "GET", base+"/v1/runs", "")
	var list api.RunList
	if json.Unmarshal(b, &list) != nil || len(list.Runs) != 3 {
		t.Errorf("the refused run was stored: %s", b)
	}
	if code, b := do(t, "POST", base+"/v1/runs/"+queued[0]+"/cancel", ""); code != http.StatusOK {
		t.Fatalf("cancel queued: %d %s", code, b)
	}
	if code, c, b := submit(spec(target, "")); code != http.StatusAccepted || c.QueuePosition != 2 {
		t.Errorf("after a cancel: %d %s", code, b)
	}
	if code, b := do(t, "POST", base+"/v1/runs/"+active.ID+"/cancel", ""); code != http.StatusAccepted {
		t.Errorf("cancel the active run: %d %s", code, b)
	}
}

func TestEventsStream(t *testing.T) {
	sut := startSUT(t)
	_, base := startDaemon(t, nil)
	_, b := do(t, "POST", base+"/v1/runs", specFor("http://"+sut.HTTPAddr(), 1500, ""))
	var c api.RunCreated
	json.Unmarshal(b, &c)
	code, body := do(t, "GET", base+"/v1/runs/"+c.ID+"/events", "")
	if code != 200 {
		t.Fatalf("events: %d", code)
	}
	var events []string
	var last []byte
	for _, block := range bytes.Split(bytes.TrimSpace(body), []byte("\n\n")) {
		lines := bytes.SplitN(block, []byte("\n"), 2)
		events = append(events, strings.TrimPrefix(string(lines[0]), "event: "))
		last = bytes.TrimPrefix(lines[1], []byte("data: "))
	}
	if len(events) < 3 || events[0] != api.EventState || !slices.Contains(events, api.EventProgress) || events[len(events)-1] != api.EventState {
		t.Fatalf("events %v", events)
	}
	var end api.StateEvent
	if err := json.Unmarshal(last, &end); err != nil || end.State != api.StateDone || end.Validity != "VALID" {
		t.Errorf("last event %s", last)
	}
}

// Bad specs are refused at submission with a 4xx whose body names the
// problem (the decoder's own table covers every field; this checks the
// answers the API gives).
func TestMalformedSpecs(t *testing.T) {
	_, base := startDaemon(t, func(c *Config) {
		c.AllowedTargets = []string{"127.0.0.1"}
		c.MaxQPS = 1000
		c.MaxTraceSamples = 1_000_000
	})
	ok := func(extra string) string { return spec("http://127.0.0.1:9", extra) }
	cases := []struct {
		name, body string
		status     int
		mention    string
	}{
		{"empty body", ``, 400, ""},
		{"not json", `hello`, 400, ""},
		{"array", `[]`, 400, ""},
		{"trailing garbage", ok("") + `x`, 400, ""},
		{"unknown field", `{"target":"http://127.0.0.1:9","model":"m","scenario":"Server","speed":1}`, 400, "speed"},
		{"unknown setting", ok(`,"warp":1`), 400, "warp"},
		{"missing target", `{"model":"m","scenario":"Server"}`, 400, "target"},
		{"missing model", `{"target":"http://127.0.0.1:9","scenario":"Server"}`, 400, "model"},
		{"unknown scenario", `{"target":"http://127.0.0.1:9","model":"m","scenario":"Burst"}`, 400, "scenario"},
		{"unknown ruleset", `{"target":"http://127.0.0.1:9","model":"m","scenario":"Server","ruleset":"v9"}`, 400, "ruleset"},
		{"unknown preset", `{"target":"http://127.0.0.1:9","model":"m","scenario":"Server","preset":"bert"}`, 400, "preset"},
		{"ftp target", `{"target":"ftp://127.0.0.1:9","model":"m","scenario":"Server"}`, 400, "target"},
		{"empty port", `{"target":"http://127.0.0.1:","model":"m","scenario":"Server"}`, 400, "target"},
		{"not a url", `{"target":"::::","model":"m","scenario":"Server"}`, 400, "target"},
		{"credentials in the target", `{"target":"http://user:s3cret@127.0.0.1:9","model":"m","scenario":"Server"}`, 400, "target"},
		{"password in a malformed target", `{"target":"http://user:s3cret@127.0.0.1:9%","model":"m","scenario":"Server"}`, 400, "target"},
		{"port 0", `{"target":"http://127.0.0.1:0","model":"m","scenario":"Server"}`, 400, "target"},
		{"port 99999", `{"target":"grpc://127.0.0.1:99999","model":"m","scenario":"Server"}`, 400, "target"},
		{"query in the target", `{"target":"http://127.0.0.1:9/?x=1","model":"m","scenario":"Server"}`, 400, "target"},
		{"fragment in the target", `{"target":"http://127.0.0.1:9#x","model":"m","scenario":"Server"}`, 400, "target"},
		{"grpc target with a path", `{"target":"grpc://127.0.0.1:9/v2","model":"m","scenario":"Server"}`, 400, "target"},
		{"target number", `{"target":5,"model":"m","scenario":"Server"}`, 400, "target"},
		{"model number", `{"target":"http://127.0.0.1:9","model":7,"scenario":"Server"}`, 400, "model"},
		{"model not UTF-8", "{\"target\":\"http://127.0.0.1:9\",\"model\":\"res\xffnet\",\"scenario\":\"Server\"}", 400, "model"},
		{"model version a lone surrogate", `{"target":"http://127.0.0.1:9","model":"m","model_version":"\ud800","scenario":"Server"}`, 400, "model_version"},
		{"sut name not UTF-8", "{\"target\":\"http://127.0.0.1:9\",\"model\":\"m\",\"sut_name\":\"\xfe\",\"scenario\":\"Server\"}", 400, "sut_name"},
		{"qps string", ok(`,"target_qps":"fast"`), 400, "target_qps"},
		{"qps negative", ok(`,"target_qps":-5`), 400, "target_qps"},
		{"qps zero", ok(`,"target_qps":0`), 400, "target_qps"},
		{"qps over the limit", ok(`,"target_qps":5000`), 400, "target_qps"},
		{"qps absurd", ok(`,"target_qps":1e300`), 400, "target_qps"},
		{"duration negative", ok(`,"max_duration_ms":-1`), 400, "max_duration_ms"},
		{"duration over the limit", ok(`,"max_duration_ms":360000000`), 400, "max_duration_ms"},
		{"duration float", ok(`,"max_duration_ms":1.5`), 400, "max_duration_ms"},
		{"key given twice", ok(`,"target_qps":10`), 400, "target_qps"},
		{"query count huge", ok(`,"min_query_count":99999999999999999999999`), 400, "min_query_count"},
		{"percentile over", ok(`,"latency_percentile":250`), 400, "latency_percentile"},
		{"percentile negative", ok(`,"latency_percentile":-0.5`), 400, "latency_percentile"},
		{"latency zero", ok(`,"target_latency_ms":0`), 400, "target_latency_ms"},
		{"bool as string", ok(`,"performance_issue_unique":"yes"`), 400, "performance_issue_unique"},
		{"negative batch", `{"target":"http://127.0.0.1:9","model":"m","scenario":"Offline","batch_size":-4}`, 400, "batch_size"},
		{"inflight over the limit", `{"target":"http://127.0.0.1:9","model":"m","scenario":"Offline","max_inflight":100000}`, 400, "max_inflight"},
		{"offline query over the trace limit", `{"target":"http://127.0.0.1:9","model":"m","scenario":"Offline","settings":{"target_qps":1000,"min_duration_ms":3600000}}`, 400, "settings.min_duration_ms"},
		{"server trace over the limit", ok(`,"min_query_count":2000000`), 400, "settings.min_query_count"},
		{"settings not object", `{"target":"http://127.0.0.1:9","model":"m","scenario":"Server","settings":[1]}`, 400, "settings"},
		{"target outside allowlist", `{"target":"http://10.9.9.9:8000","model":"m","scenario":"Server"}`, 403, "10.9.9.9"},
		{"server metrics outside allowlist", `{"target":"http://127.0.0.1:9","model":"m","scenario":"Server","server_metrics":["http://10.9.9.9:8002/metrics"]}`, 403, "server_metrics http://10.9.9.9:8002/metrics"},
		{"mix entry outside allowlist", `{"target":"http://127.0.0.1:9","model":"m","scenario":"Server","mix":"m=0.5,other=0.5@http://10.255.255.1:9","settings":{"target_qps":10,"min_duration_ms":1000}}`, 403, "mix entry 2 (other): target http://10.255.255.1:9 is outside LOADGEND_ALLOWED_TARGETS"},
		{"server metrics with credentials", `{"target":"http://127.0.0.1:9","model":"m","scenario":"Server","server_metrics":["http://u:s3cret@127.0.0.1:8002/metrics"]}`, 400, "server_metrics"},
		{"oversized body", `{"target":"http://127.0.0.1:9","model":"` + strings.Repeat("m", 2<<20) + `","scenario":"Server"}`, 413, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, b := do(t, "POST", base+"/v1/runs", tc.body)
			if code != tc.status {
				t.Fatalf("status %d, want %d: %s", code, tc.status, b)
			}
			var eb api.ErrorBody
			if err := json.Unmarshal(b, &eb); err != nil || eb.Error.Message == "" {
				t.Fatalf("error body %s", b)
			}
			if tc.mention != "" && !strings.Contains(eb.Error.Message+" "+eb.Error.Field, tc.mention) {
				t.Errorf("error %+v does not name %q", eb.Error, tc.mention)
			}
			if tc.status == 400 && tc.mention != "" && eb.Error.Field == "" {
				t.Errorf("error %+v names no field", eb.Error)
			}
			if strings.Contains(string(b), "s3cret") {
				t.Errorf("the answer echoes the password: %s", b)
			}
		})
	}
	_, b := do(t, "GET", base+"/v1/runs", "")
	if !strings.Contains(string(b), `"runs": []`) {
		t.Errorf("a refused spec was stored: %s", b)
	}
}

func TestProbeAPI(t *testing.T) {
	sut := startSUT(t)
	_, base := startDaemon(t, nil)
	code, b := do(t, "POST", base+"/v1/probe", fmt.Sprintf(`{"target":"grpc://%s","model":"simple"}`, sut.GRPCAddr()))
	var pr api.ProbeResponse
	if code != 200 || json.Unmarshal(b, &pr) != nil || !pr.Live || pr.Model == nil || pr.MaxBatchSize != 8 || pr.Inference == nil || !pr.Inference.OK {
		t.Errorf("probe %d %s", code, b)
	}
	code, b = do(t, "POST", base+"/v1/probe", `{"target":"http://127.0.0.1:1"}`)
	if code != 200 || !strings.Contains(string(b), `"error"`) {
		t.Errorf("probe of a dead port %d %s", code, b)
	}
	if code, _ := do(t, "POST", base+"/v1/probe", `{"target":"nope"}`); code != 400 {
		t.Errorf("probe of a bad target %d", code)
	}
}
