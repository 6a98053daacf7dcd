package daemon

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/runstore"
)

// seededRun is one run of seedFilterRuns: what the filters look at.
type seededRun struct {
	id, model, scenario, validity string
	given                         string // the scenario as stored ("": none)
	state                         runstore.State
}

// seedFilterRuns stores n runs of two models, three scenarios (one left
// out of the spec: the default), finished VALID, INVALID and N/A, failed
// without a verdict, cancelled and queued; oldest first.
func seedFilterRuns(t *testing.T, s *Service, n int) []seededRun {
	t.Helper()
	var out []seededRun
	for i := range n {
		r := seededRun{model: []string{"a", "b"}[i%2], scenario: []string{"Server", "Offline", ""}[i%3]}
		spec := fmt.Sprintf(`{"target":"http://127.0.0.1:1","model":%q,"scenario":%q}`, r.model, r.scenario)
		rec, err := s.store.Create(json.RawMessage(spec))
		if err != nil {
			t.Fatal(err)
		}
		r.id, r.given = rec.ID, r.scenario
		if r.scenario == "" {
			r.scenario = api.DefaultScenario
		}
		switch i % 6 {
		case 0, 1, 2: // done: VALID, INVALID, N/A
			r.state, r.validity = runstore.Done, []string{"VALID", "INVALID", "N/A"}[i%6]
			mustSetState(t, s, rec.ID, runstore.Running)
			res := fmt.Sprintf(`{"scenario":%q,"result_validity":%q,"result_completed_samples_per_sec":%d,"result_samples_per_second":%d,"duration_ns":1000000000,"samples_completed":7}`,
				r.scenario, r.validity, 10*(i+1), 20*(i+1))
			if err := s.store.WriteFile(rec.ID, runstore.ResultFile, []byte(res)); err != nil {
				t.Fatal(err)
			}
			mustSetState(t, s, rec.ID, runstore.Done)
		case 3:
			r.state = runstore.Failed
			mustSetState(t, s, rec.ID, runstore.Running)
			if _, err := s.store.Fail(rec.ID, "test", errStub("boom")); err != nil {
				t.Fatal(err)
			}
		case 4:
			r.state = runstore.Cancelled
			mustSetState(t, s, rec.ID, runstore.Cancelled)
		case 5:
			r.state = runstore.Queued
			s.queue = append(s.queue, rec.ID)
		}
		out = append(out, r)
	}
	return out
}

func mustSetState(t *testing.T, s *Service, id string, st runstore.State) {
	t.Helper()
	if _, err := s.store.SetState(id, st, "test"); err != nil {
		t.Fatal(err)
	}
}

// listAll pages through GET /v1/runs?query with limit, checking each page,
// and returns the ids listed in order and the number of pages.
func listAll(t *testing.T, h http.Handler, query string, limit int) ([]string, int) {
	t.Helper()
	var ids []string
	token := ""
	for pages := 1; ; pages++ {
		q, _ := url.ParseQuery(query)
		q.Set("limit", fmt.Sprint(limit))
		if token != "" {
			q.Set("page_token", token)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, localRequest("GET", "/v1/runs?"+q.Encode()))
		var list api.RunList
		if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &list) != nil {
			t.Fatalf("GET /v1/runs?%s = %d %s", q.Encode(), w.Code, w.Body)
		}
		if len(list.Runs) > limit {
			t.Fatalf("page of %d runs, limit %d", len(list.Runs), limit)
		}
		for _, r := range list.Runs {
			ids = append(ids, r.ID)
		}
		if list.NextPageToken == "" {
			return ids, pages
		}
		if pages > 1000 {
			t.Fatal("paging does not end")
		}
		token = list.NextPageToken
	}
}

// Each filter, alone and combined with the others and with state, lists
// exactly the runs that pass it, newest first, on pages of any size.
func TestListFilters(t *testing.T) {
	s := newTestService(t, t.TempDir())
	runs := seedFilterRuns(t, s, 24)
	h := s.handler()
	want := func(keep func(seededRun) bool) []string {
		var ids []string
		for _, r := range slices.Backward(runs) {
			if keep(r) {
				ids = append(ids, r.id)
			}
		}
		return ids
	}
	cases := []struct {
		query string
		keep  func(seededRun) bool
	}{
		{"", func(seededRun) bool { return true }},
		{"model=a", func(r seededRun) bool { return r.model == "a" }},
		{"model=nobody", func(seededRun) bool { return false }},
		{"verdict=VALID", func(r seededRun) bool { return r.validity == "VALID" }},
		{"verdict=INVALID", func(r seededRun) bool { return r.validity == "INVALID" }},
		{"verdict=none", func(r seededRun) bool { return r.validity != "VALID" && r.validity != "INVALID" }},
		{"scenario=Server", func(r seededRun) bool { return r.scenario == "Server" }},
		{"scenario=Offline", func(r seededRun) bool { return r.scenario == "Offline" }},
		{"scenario=MultiStream", func(seededRun) bool { return false }},
		{"state=done&model=b", func(r seededRun) bool { return r.state == runstore.Done && r.model == "b" }},
		{"state=done,queued&verdict=none", func(r seededRun) bool {
			return (r.state == runstore.Done || r.state == runstore.Queued) && r.validity != "VALID" && r.validity != "INVALID"
		}},
		{"model=a&scenario=Server&verdict=VALID", func(r seededRun) bool { return r.model == "a" && r.scenario == "Server" && r.validity == "VALID" }},
	}
	for _, c := range cases {
		w := want(c.keep)
		for _, limit := range []int{1, 2, 5, 500} {
			got, _ := listAll(t, h, c.query, limit)
			if !slices.Equal(got, w) {
				t.Errorf("?%s, limit %d: listed %v, want %v", c.query, limit, got, w)
			}
		}
	}
}

// Pages are cursors under a filter too: runs created between two pages
// do not shift the next one, and no run is listed twice or skipped.
func TestListFilterPagesAreStable(t *testing.T) {
	s := newTestService(t, t.TempDir())
	runs := seedFilterRuns(t, s, 12)
	h := s.handler()
	first := func(q string) api.RunList {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, localRequest("GET", "/v1/runs?"+q))
		var list api.RunList
		if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &list) != nil {
			t.Fatalf("GET /v1/runs?%s = %d %s", q, w.Code, w.Body)
		}
		return list
	}
	p1 := first("model=a&limit=2")
	seedFilterRuns(t, s, 6) // newer runs, model a among them
	p2 := first("model=a&limit=2&page_token=" + url.QueryEscape(p1.NextPageToken))
	var want []string
	for _, r := range slices.Backward(runs) {
		if r.model == "a" {
			want = append(want, r.id)
		}
	}
	var got []string
	for _, r := range append(p1.Runs, p2.Runs...) {
		got = append(got, r.ID)
	}
	if !slices.Equal(got, want[:4]) {
		t.Errorf("pages 1 and 2 across new runs: %v, want %v", got, want[:4])
	}
}

// A filter that matches little looks at no more than the bound on one
// page: the page comes back short (even empty) with a token, and paging
// on finds every match.
func TestListFilterScanIsBounded(t *testing.T) {
	s := newTestService(t, t.TempDir())
	runs := seedFilterRuns(t, s, 30)
	s.listScan = 4
	h := s.handler()
	// The oldest run is the only VALID one of model a in Server... find it
	// as the list would: model a, VALID, scenario Server.
	var want []string
	for _, r := range slices.Backward(runs) {
		if r.model == "a" && r.validity == "VALID" && r.scenario == "Server" {
			want = append(want, r.id)
		}
	}
	got, pages := listAll(t, h, "model=a&verdict=VALID&scenario=Server", 50)
	if !slices.Equal(got, want) {
		t.Errorf("listed %v, want %v", got, want)
	}
	if min := (len(runs) + 3) / 4; pages < min {
		t.Errorf("%d pages for %d runs looked at 4 a page, want at least %d", pages, len(runs), min)
	}
	// An unfiltered list is not bounded by it: one page of 30.
	if got, pages := listAll(t, h, "", 50); len(got) != len(runs) || pages != 1 {
		t.Errorf("unfiltered: %d runs in %d pages, want %d in 1", len(got), pages, len(runs))
	}
}

// Each entry carries what the runs page shows: the spec (model,
// scenario, asked rate), state, validity, the achieved rate once ended,
// the queue position while queued.
func TestListEntryCarriesTheRunsPage(t *testing.T) {
	s := newTestService(t, t.TempDir())
	runs := seedFilterRuns(t, s, 6)
	w := httptest.NewRecorder()
	s.handler().ServeHTTP(w, localRequest("GET", "/v1/runs"))
	var list api.RunList
	if err := json.Unmarshal(w.Body.Bytes(), &list); err != nil || len(list.Runs) != 6 {
		t.Fatalf("GET /v1/runs = %d %s", w.Code, w.Body)
	}
	byID := map[string]api.RunStatus{}
	for _, r := range list.Runs {
		byID[r.ID] = r
	}
	for i, r := range runs {
		st := byID[r.id]
		if st.Spec.Model != r.model || st.Spec.Scenario != r.given {
			t.Errorf("run %d: spec %+v", i, st.Spec)
		}
		switch r.state {
		case runstore.Done:
			// Server's completed samples a second, Offline's samples a second.
			wantQPS := float64(10 * (i + 1))
			if r.scenario == "Offline" {
				wantQPS = float64(20 * (i + 1))
			}
			if st.AchievedQPS == nil || *st.AchievedQPS != wantQPS || st.Validity != r.validity {
				t.Errorf("run %d (%s): achieved %v validity %q, want %v %q", i, r.scenario, st.AchievedQPS, st.Validity, wantQPS, r.validity)
			}
		case runstore.Queued:
			if st.QueuePosition == nil || st.AchievedQPS != nil {
				t.Errorf("queued run %d: %+v", i, st)
			}
		default:
			if st.AchievedQPS != nil {
				t.Errorf("run %d (%s) without a result: achieved %v", i, r.state, *st.AchievedQPS)
			}
		}
	}
}

// Bad filters are 400s naming the parameter; nothing is listed.
func TestListFilterRefusals(t *testing.T) {
	s := newTestService(t, t.TempDir())
	seedFilterRuns(t, s, 3)
	h := s.handler()
	for query, field := range map[string]string{
		"verdict=valid":                       "verdict",
		"verdict=N%2FA":                       "verdict",
		"verdict=VALID&verdict=INVALID":       "verdict",
		"scenario=server":                     "scenario",
		"model=" + strings.Repeat("m", 257):   "model",
		"model=a%00b":                         "model",
		"model=a&model=b":                     "model",
		"page_token=nope&model=a":             "page_token",
		"verdict=" + strings.Repeat("x", 1e5): "verdict",
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, localRequest("GET", "/v1/runs?"+query))
		var eb api.ErrorBody
		if w.Code != http.StatusBadRequest || json.Unmarshal(w.Body.Bytes(), &eb) != nil || eb.Error.Field != field {
			t.Errorf("?%.40s: %d %.200s, want 400 on %s", query, w.Code, w.Body, field)
		}
		if w.Body.Len() > 2000 {
			t.Errorf("?%.40s: the error echoes the value: %d bytes", query, w.Body.Len())
		}
	}
}
