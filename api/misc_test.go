package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
)

func TestParseListQuery(t *testing.T) {
	cases := []struct {
		query string
		want  ListQuery
		field string
	}{
		{"", ListQuery{Limit: DefaultListLimit}, ""},
		{"state=running,queued&limit=10&page_token=abc", ListQuery{States: []State{StateRunning, StateQueued}, Limit: 10, PageToken: "abc"}, ""},
		{"state=done&state=failed", ListQuery{States: []State{StateDone, StateFailed}, Limit: DefaultListLimit}, ""},
		{"state=finished", ListQuery{}, "state"},
		{"limit=0", ListQuery{}, "limit"},
		{"limit=501", ListQuery{}, "limit"},
		{"limit=ten", ListQuery{}, "limit"},
		{"offset=5", ListQuery{}, "offset"},
		{"model=resnet50&verdict=none&scenario=Offline&state=done", ListQuery{States: []State{StateDone}, Model: "resnet50", Verdict: VerdictNone, Scenario: "Offline", Limit: DefaultListLimit}, ""},
		{"verdict=VALID", ListQuery{Verdict: VerdictValid, Limit: DefaultListLimit}, ""},
		{"verdict=INVALID&model=a%20b", ListQuery{Verdict: VerdictInvalid, Model: "a b", Limit: DefaultListLimit}, ""},
		{"verdict=valid", ListQuery{}, "verdict"},
		{"verdict=N%2FA", ListQuery{}, "verdict"},
		{"verdict=VALID&verdict=VALID", ListQuery{}, "verdict"},
		{"scenario=server", ListQuery{}, "scenario"},
		{"scenario=Server,Offline", ListQuery{}, "scenario"},
		{"model=" + strings.Repeat("m", 257), ListQuery{}, "model"},
		{"model=a%0Ab", ListQuery{}, "model"},
		{"model=a&model=b", ListQuery{}, "model"},
		{"page_token=" + strings.Repeat("t", 513), ListQuery{}, "page_token"},
	}
	for _, c := range cases {
		q, _ := url.ParseQuery(c.query)
		got, err := ParseListQuery(q)
		var fe *FieldError
		switch {
		case c.field != "":
			if !errors.As(err, &fe) || fe.Field != c.field {
				t.Errorf("%q: got %v, want a FieldError on %s", c.query, err, c.field)
			}
		case err != nil:
			t.Errorf("%q: %v", c.query, err)
		case !reflect.DeepEqual(got, c.want):
			t.Errorf("%q: got %+v, want %+v", c.query, got, c.want)
		}
	}
}

func TestFileMediaType(t *testing.T) {
	for _, name := range []string{"result.json", "latency.hlog", "mlperf_log_summary.txt", "mlperf_log_detail.txt", "mlperf_log_accuracy.json"} {
		if _, ok := FileMediaType(name); !ok {
			t.Errorf("%s is not served", name)
		}
	}
	for _, name := range []string{"", "..", "../spec.json", "result.json/", "/etc/passwd", "RESULT.JSON", "spec.json", "result.json\x00"} {
		if mt, ok := FileMediaType(name); ok {
			t.Errorf("%q is served as %s", name, mt)
		}
	}
}

func TestErrorFor(t *testing.T) {
	_, tooBig := DecodeRunSpec(strings.NewReader(`{"model": "`+strings.Repeat("m", 100)+`"}`), Limits{MaxBodyBytes: 50})
	_, bad := DecodeRunSpec(strings.NewReader(`{"model": 1}`), Limits{})
	cases := []struct {
		err    error
		status int
		code   string
		field  string
	}{
		{tooBig, http.StatusRequestEntityTooLarge, CodeBodyTooLarge, ""},
		{bad, http.StatusBadRequest, CodeInvalidRequest, "model"},
		{errors.New("disk full at /var/lib/loadgend"), http.StatusInternalServerError, CodeInternal, ""},
	}
	for _, c := range cases {
		status, body := ErrorFor(c.err)
		if status != c.status || body.Error.Code != c.code || body.Error.Field != c.field {
			t.Errorf("ErrorFor(%v) = %d %+v, want %d %s field %q", c.err, status, body, c.status, c.code, c.field)
		}
		if status == http.StatusInternalServerError && strings.Contains(body.Error.Message, "disk") {
			t.Errorf("an internal error's text reached the client: %q", body.Error.Message)
		}
	}
}

func TestProgressFrom(t *testing.T) {
	p := ProgressFrom(loadgen.Progress{
		PlannedQueries: 1000, IssuedQueries: 500, CompletedQueries: 490, InFlightQueries: 10,
		CompletedSamples: 490, FailedSamples: 2, OverLatencySamples: 3,
		Elapsed: 2500 * time.Millisecond, ExpectedEnd: 10 * time.Second, MaxIssueLateness: 250 * time.Microsecond,
		P50: 1500 * time.Microsecond, P90: 3 * time.Millisecond, P99: 12 * time.Millisecond,
		Failures: []loadgen.Failure{{Outcome: "error", Status: "HTTP 503", Count: 2}},
		Tokens: &loadgen.LiveTokens{Samples: 490, OutputTokens: 4900, OutputTokensPerSecond: 1960,
			TTFTP50: 40 * time.Millisecond, TTFTP99: 90 * time.Millisecond, TPOTP50: 5 * time.Millisecond, TPOTP99: 7500 * time.Microsecond},
	}, 196)
	want := Progress{PlannedQueries: 1000, Issued: 500, Completed: 490, InFlight: 10, CompletedSamples: 490, Failed: 2,
		OverLatency: 3, ElapsedS: 2.5, ExpectedEndS: 10, CurrentQPS: 196, P50Ms: 1.5, P90Ms: 3, P99Ms: 12, MaxIssueLatenessMs: 0.25,
		Failures: []LiveFailure{{Outcome: "error", Status: "HTTP 503", Count: 2}},
		Tokens:   &LiveTokens{Samples: 490, OutputTokens: 4900, OutputTokensPerSecond: 1960, TTFTP50Ms: 40, TTFTP99Ms: 90, TPOTP50Ms: 5, TPOTP99Ms: 7.5}}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("got %+v\nwant %+v", p, want)
	}
	// A run with no failure and no token shows neither.
	b, err := json.Marshal(ProgressFrom(loadgen.Progress{}, 0))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "failures") || strings.Contains(string(b), "tokens") {
		t.Errorf("empty progress: %s", b)
	}
}

func TestStates(t *testing.T) {
	terminal := map[State]bool{StateDone: true, StateFailed: true, StateCancelled: true, StateInterrupted: true}
	for _, s := range States() {
		if s.Terminal() != terminal[s] {
			t.Errorf("%s.Terminal() = %v", s, s.Terminal())
		}
		if got, err := ParseState(string(s)); err != nil || got != s {
			t.Errorf("ParseState(%q) = %q, %v", s, got, err)
		}
	}
	if _, err := ParseState("Done"); err == nil {
		t.Error("ParseState takes a name in another case")
	}
}

func TestRoutePatterns(t *testing.T) {
	mux := http.NewServeMux()
	for _, r := range Routes {
		// ServeMux panics on a malformed or conflicting pattern.
		mux.HandleFunc(r.Pattern(), func(http.ResponseWriter, *http.Request) {})
	}
	req, _ := http.NewRequest("GET", "/v1/runs/abc/files/result.json", nil)
	if _, pattern := mux.Handler(req); pattern != "GET /v1/runs/{id}/files/{name}" {
		t.Errorf("matched %q", pattern)
	}
}

// TestSpecRoundTrip: a decoded spec marshals to JSON the strict decoder
// takes back unchanged (GET /v1/runs/{id} shows the spec as stored).
func TestSpecRoundTrip(t *testing.T) {
	body := `{"target": "http://h:1", "model": "m", "scenario": "Server", "preset": "gnmt", "ruleset": "v0.5",
		"settings": {"target_qps": 10, "min_duration_ms": 1000, "min_query_count": 10, "latency_percentile": 97, "early_verdict": false},
		"json": true, "conns": 3}`
	s, err := DecodeRunSpec(strings.NewReader(body), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := jsonMarshal(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeRunSpec(strings.NewReader(string(b)), Limits{})
	if err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if !reflect.DeepEqual(back, s) {
		t.Errorf("round trip changed the spec:\n%+v\n%+v", s, back)
	}
	if !strings.Contains(string(b), `"early_verdict":false`) {
		t.Errorf("an explicit false was lost: %s", b)
	}
}

// The filters combine; a run without a verdict, or judged N/A, is
// "none"; a stored spec without a scenario ran Server.
func TestListQueryMatches(t *testing.T) {
	cases := []struct {
		q                         ListQuery
		st                        State
		model, scenario, validity string
		want                      bool
	}{
		{ListQuery{}, StateQueued, "m", "Server", "", true},
		{ListQuery{Model: "m"}, StateDone, "m", "Server", "VALID", true},
		{ListQuery{Model: "m"}, StateDone, "M", "Server", "VALID", false},
		{ListQuery{Verdict: VerdictNone}, StateDone, "m", "Server", "N/A", true},
		{ListQuery{Verdict: VerdictNone}, StateFailed, "m", "Server", "", true},
		{ListQuery{Verdict: VerdictNone}, StateDone, "m", "Server", "INVALID", false},
		{ListQuery{Verdict: VerdictValid}, StateDone, "m", "Server", "INVALID", false},
		{ListQuery{Scenario: "Server"}, StateDone, "m", "", "", true},
		{ListQuery{Scenario: "Offline"}, StateDone, "m", "", "", false},
		{ListQuery{States: []State{StateDone}, Model: "m", Verdict: VerdictValid}, StateRunning, "m", "Server", "", false},
		{ListQuery{States: []State{StateDone, StateRunning}, Model: "m"}, StateRunning, "m", "Server", "", true},
	}
	for i, c := range cases {
		if got := c.q.Matches(c.st, c.model, c.scenario, c.validity); got != c.want {
			t.Errorf("case %d: %+v matches %s %s %s %q: %v, want %v", i, c.q, c.st, c.model, c.scenario, c.validity, got, c.want)
		}
	}
}

// The achieved rate is LoadGen's figure for the scenario, or the answered
// samples over the duration where that is 0; never NaN.
func TestAchievedQPSOf(t *testing.T) {
	cases := []struct {
		res  loadgen.Result
		want float64
	}{
		{loadgen.Result{Scenario: "Server", CompletedSamplesPerSec: 99.5, SamplesPerSecond: 1}, 99.5},
		{loadgen.Result{Scenario: "Offline", CompletedSamplesPerSec: 1, SamplesPerSecond: 1234}, 1234},
		{loadgen.Result{Scenario: "SingleStream", QPSWithLoadgenOverhead: 250}, 250},
		{loadgen.Result{Scenario: "MultiStream", QPSWithLoadgenOverhead: 16}, 16},
		{loadgen.Result{Scenario: "Server", SamplesCompleted: 30, DurationNs: 2e9}, 15},
		{loadgen.Result{Scenario: "Server"}, 0},
	}
	for _, c := range cases {
		got := AchievedQPSOf(&c.res)
		if got == nil || *got != c.want {
			t.Errorf("%s: %v, want %v", c.res.Scenario, got, c.want)
		}
	}
	if AchievedQPSOf(nil) != nil {
		t.Error("nil result: a rate")
	}
}
