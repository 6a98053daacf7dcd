package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/netloadgen/netloadgen/api"
)

// The new-run form and the compare page, in a browser against a real
// loadgend and sutproxy (console_harness_test.go).

// openForm loads /ui/new and waits for the form.
func openForm(tb *tab, env consoleEnv) {
	tb.t.Helper()
	// The form asks POST /v1/runs/check as it changes, and a test types
	// field by field: the check may see the spec half typed (a target and
	// no model yet) and refuse it, as it does for a user. Only the check:
	// a refused submit is the test's own to declare.
	tb.allow(http.StatusBadRequest, "/v1/runs/check")
	tb.run(chromedp.Navigate(env.base+"/ui/new"), chromedp.WaitVisible(`main[data-ready] form#new-run`, chromedp.ByQuery))
}

// typeInto types into the form's field named name (input events, as a
// user's typing fires them).
func typeInto(name, text string) chromedp.Action {
	return sendKeys(`#new-run [name="`+name+`"]`, text)
}

// runsListed is GET /v1/runs' runs.
func runsListed(t *testing.T, env consoleEnv) []api.RunStatus {
	t.Helper()
	code, b := env.api.do(t, http.MethodGet, "/v1/runs", "")
	var list api.RunList
	if code != http.StatusOK || json.Unmarshal(b, &list) != nil {
		t.Fatalf("GET /v1/runs = %d %s", code, b)
	}
	return list.Runs
}

// A bad setting is refused by the API and its message shown beside the
// field it names, the field marked invalid and focused; nothing is queued.
func TestConsoleFormFieldError(t *testing.T) {
	env := startConsole(t, nil)
	tb := newTab(t, 0)
	// The submit is refused (the field error shown; openForm allows the
	// check's refusals).
	tb.allow(http.StatusBadRequest, "/v1/runs")
	openForm(tb, env)
	const field = "settings.target_qps"
	tb.run(typeInto("target", env.target), typeInto("model", "identity"), typeInto(field, "-5"),
		typeInto("settings.min_duration_ms", "1000"),
		// POST /v1/runs/check, as the form changes, marks the field first.
		chromedp.WaitVisible(`#new-run [name="`+field+`"] + .field-error[data-from="check"]`, chromedp.ByQuery))
	tb.shot("new-check-error")
	tb.run(chromedp.Click(`#submit`, chromedp.ByQuery),
		chromedp.WaitVisible(`#new-run .field-error[data-from="submit"]`, chromedp.ByQuery))
	var shown, invalid, describedBy, errID, focused string
	var ok bool
	tb.run(
		chromedp.Text(`#new-run [name="`+field+`"] + .field-error`, &shown, chromedp.ByQuery),
		chromedp.AttributeValue(`#new-run [name="`+field+`"]`, "aria-invalid", &invalid, &ok, chromedp.ByQuery),
		chromedp.AttributeValue(`#new-run [name="`+field+`"]`, "aria-describedby", &describedBy, &ok, chromedp.ByQuery),
		chromedp.AttributeValue(`#new-run [name="`+field+`"] + .field-error`, "id", &errID, &ok, chromedp.ByQuery),
		chromedp.Evaluate(`document.activeElement.name || ''`, &focused))
	tb.shot("new-field-error")

	// What the API says of the same spec, asked directly.
	spec := `{"target":"` + env.target + `","model":"identity","settings":{"target_qps":-5,"min_duration_ms":1000}}`
	code, b := env.api.do(t, http.MethodPost, "/v1/runs", spec)
	var eb api.ErrorBody
	if code != http.StatusBadRequest || json.Unmarshal(b, &eb) != nil || eb.Error.Field != field {
		t.Fatalf("POST /v1/runs with target_qps -5 = %d %s, want 400 naming %s", code, b, field)
	}
	if shown != eb.Error.Message {
		t.Errorf("beside %s the page shows %q, the API says %q", field, shown, eb.Error.Message)
	}
	if invalid != "true" || describedBy == "" || describedBy != errID {
		t.Errorf("the field: aria-invalid %q, aria-describedby %q (the error's id %q)", invalid, describedBy, errID)
	}
	if focused != field {
		t.Errorf("focus is on %q, want the field at fault %s", focused, field)
	}
	if runs := runsListed(t, env); len(runs) != 0 {
		t.Errorf("a refused form queued %d runs", len(runs))
	}
}

// A header with a literal value, or a client key given inline, is refused
// beside its field before anything is sent: neither leaves the page, nor
// shows in the spec it displays.
func TestConsoleFormHeaderLiteral(t *testing.T) {
	env := startConsole(t, nil)
	tb := newTab(t, 390)
	openForm(tb, env)
	const secretValue = "Bearer s3cr3t-value"
	tb.run(typeInto("target", env.target), typeInto("model", "identity"),
		chromedp.Click(`#add-header`, chromedp.ByQuery),
		sendKeys(`#header-rows [data-header="name"]`, "Authorization"),
		sendKeys(`#header-rows [data-header="value"]`, secretValue),
		typeInto("tls.client_key", "-----BEGIN PRIVATE KEY----- s3cr3t-key"),
		chromedp.Click(`#submit`, chromedp.ByQuery),
		chromedp.WaitVisible(`#header-rows [data-header="value"] + .field-error`, chromedp.ByQuery),
		chromedp.WaitVisible(`#new-run [name="tls.client_key"] + .field-error`, chromedp.ByQuery))
	var shown, invalid, specShown, keyError string
	var ok bool
	tb.run(chromedp.Text(`#header-rows [data-header="value"] + .field-error`, &shown, chromedp.ByQuery),
		chromedp.Text(`#new-run [name="tls.client_key"] + .field-error`, &keyError, chromedp.ByQuery),
		chromedp.AttributeValue(`#header-rows [data-header="value"]`, "aria-invalid", &invalid, &ok, chromedp.ByQuery),
		chromedp.Text(`#spec-json`, &specShown, chromedp.ByQuery))
	tb.shot("new-header-literal")
	if !strings.Contains(shown, "@env:") || invalid != "true" {
		t.Errorf("beside the literal header value: %q (aria-invalid %q), want the reference rule", shown, invalid)
	}
	if !strings.Contains(keyError, "@file:") {
		t.Errorf("beside a client key given inline: %q, want the @file: rule", keyError)
	}
	if strings.Contains(specShown, "s3cr3t") || strings.Contains(shown, "s3cr3t") || strings.Contains(keyError, "s3cr3t") {
		t.Errorf("the page shows a literal secret: spec %q, errors %q, %q", specShown, shown, keyError)
	}
	if runs := runsListed(t, env); len(runs) != 0 {
		t.Errorf("a refused form queued %d runs", len(runs))
	}
}

// A good form (a preset, then a field changed) is queued: the page goes
// to the run's page, which watches it reach VALID and shows result.json's
// figures, and the API has the spec the page showed.
func TestConsoleFormSubmit(t *testing.T) {
	env := startConsole(t, nil)
	tb := newTab(t, 0)
	openForm(tb, env)
	tb.run(typeInto("target", env.target), typeInto("model", "identity"),
		chromedp.SetValue(`#form-preset`, "quick", chromedp.ByQuery),
		chromedp.Click(`#apply-preset`, chromedp.ByQuery),
		chromedp.Poll(`document.querySelector('#new-run [name="settings.min_duration_ms"]').value === '3000'`, nil, chromedp.WithPollingTimeout(5*time.Second)),
		chromedp.SetValue(`#new-run [name="settings.target_qps"]`, "", chromedp.ByQuery), typeInto("settings.target_qps", "250"),
		// The shown spec follows the form (debounced): wait for the last edit.
		chromedp.Poll(`document.getElementById('spec-json').textContent.includes('"target_qps": 250')`, nil, chromedp.WithPollingTimeout(10*time.Second)))
	var shown, command string
	tb.run(chromedp.WaitVisible(`#spec-command`, chromedp.ByQuery),
		chromedp.Text(`#spec-json`, &shown, chromedp.ByQuery), chromedp.Text(`#spec-command`, &command, chromedp.ByQuery))
	tb.shot("new-filled")
	// The command line shown is the API's for the spec shown.
	code, b := env.api.do(t, http.MethodPost, "/v1/runs/check", shown)
	var chk api.RunCheck
	if code != http.StatusOK || json.Unmarshal(b, &chk) != nil {
		t.Fatalf("POST /v1/runs/check of the page's spec = %d %s", code, b)
	}
	if command != chk.Command || !strings.Contains(command, "--target-qps 250") {
		t.Errorf("the page shows the command line %q, the API %q", command, chk.Command)
	}
	// The submit navigates: RunResponse waits for the new page's load.
	ctx, cancel := context.WithTimeout(tb.ctx, stepTimeout)
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(`#submit`, chromedp.ByQuery))
	cancel()
	if err != nil {
		tb.shot("failure")
		t.Fatalf("submitting the form: %v", err)
	}
	if !strings.Contains(resp.URL, "/ui/runs/") {
		t.Fatalf("the form led to %s, want /ui/runs/{id}", resp.URL)
	}
	var loc string
	tb.run(chromedp.WaitVisible(`main[data-ready]`, chromedp.ByQuery), chromedp.Location(&loc))
	tb.shot("new-submitted")
	id := loc[strings.LastIndex(loc, "/")+1:]
	// The run page the form led to watches the run to its verdict, and
	// shows result.json's figures.
	checkVerdictAndFigures(t, tb, env, id, "new-run-ended")
	st := env.api.waitEnded(t, id, 30*time.Second)
	var fromPage api.RunSpec
	if err := json.Unmarshal([]byte(shown), &fromPage); err != nil {
		t.Fatalf("the page's spec is not JSON: %v\n%s", err, shown)
	}
	want, _ := json.Marshal(fromPage)
	got, _ := json.Marshal(st.Spec)
	if !bytes.Equal(want, got) {
		t.Errorf("run %s's spec differs from the one the page showed:\n api  %s\n page %s", id, got, want)
	}
	if st.Spec.Overrides.TargetQPS == nil || *st.Spec.Overrides.TargetQPS != 250 || st.Spec.Overrides.MinDurationMs == nil || *st.Spec.Overrides.MinDurationMs != 3000 {
		t.Errorf("run %s: settings %+v, want the preset's with target_qps 250", id, st.Spec.Overrides)
	}
	if st.State != api.StateDone {
		t.Errorf("run %s ended %s (%s)", id, st.State, st.Error)
	}
}

// The Probe button shows the endpoint's models (its repository index),
// the model's metadata and the API a run would speak, and lets the user
// pick a model.
func TestConsoleFormProbe(t *testing.T) {
	env := startConsole(t, nil)
	tb := newTab(t, 0)
	openForm(tb, env)
	tb.run(typeInto("target", env.target), typeInto("model", "identity"),
		chromedp.Click(`#probe`, chromedp.ByQuery),
		chromedp.WaitVisible(`#probe-model`, chromedp.ByQuery))
	var caption, apiFound string
	var models []string
	tb.run(chromedp.Text(`#probe-model caption`, &caption, chromedp.ByQuery),
		chromedp.Text(`#probe-api`, &apiFound, chromedp.ByQuery),
		chromedp.Evaluate(`[...document.querySelectorAll('#probe-models-list [data-model]')].map(b => b.dataset.model)`, &models))
	tb.shot("new-probed")
	if !strings.Contains(caption, "identity") || !strings.Contains(apiFound, "tensors") {
		t.Errorf("probe shows %q, %q: want the identity model's metadata and the tensor API", caption, apiFound)
	}
	// Every model the probe answer lists is offered.
	code, b := env.api.do(t, http.MethodPost, "/v1/probe", `{"target":"`+env.target+`","model":"identity"}`)
	var p struct {
		Models []struct {
			Name string `json:"name"`
		} `json:"models"`
	}
	if code != http.StatusOK || json.Unmarshal(b, &p) != nil {
		t.Fatalf("POST /v1/probe = %d %s", code, b)
	}
	want := map[string]bool{"identity": true}
	for _, m := range p.Models {
		want[m.Name] = true
	}
	have := map[string]bool{}
	for _, m := range models {
		have[m] = true
	}
	for m := range want {
		if !have[m] {
			t.Errorf("the probe lists %v, without %s", models, m)
		}
	}
	// sutproxy lists its built-in models (the model_repository extension).
	if len(p.Models) < 2 {
		t.Errorf("POST /v1/probe lists models %+v: want sutproxy's built-in models", p.Models)
	}
}

// Two ended runs picked on the compare page: both are columns of the
// figures table and series of every overlaid plot, and the URL keeps them.
func TestConsoleCompare(t *testing.T) {
	env := startConsole(t, nil)
	ids := []string{env.api.submit(t, serverSpec(env.target, 50, 2000)), env.api.submit(t, serverSpec(env.target, 80, 2000))}
	verdicts := map[string]string{}
	for _, id := range ids {
		st := env.api.waitEnded(t, id, 30*time.Second)
		if st.State != api.StateDone {
			t.Fatalf("run %s ended %s (%s)", id, st.State, st.Error)
		}
		verdicts[id] = st.Validity
	}
	tb := newTab(t, 0)
	tb.run(chromedp.Navigate(env.base+"/ui/compare"), chromedp.WaitVisible(`main[data-ready] #pick-list`, chromedp.ByQuery))
	tb.shot("compare-empty")
	// The model filter narrows the list (GET /v1/runs?model=): none for a
	// model never run, both again for identity.
	tb.run(typeIn(`#pick-model`, "resnet50"), chromedp.Click(`.pick-filters button`, chromedp.ByQuery),
		chromedp.WaitNotPresent(`#pick-list`, chromedp.ByQuery),
		chromedp.SetValue(`#pick-model`, "identity", chromedp.ByQuery), chromedp.Click(`.pick-filters button`, chromedp.ByQuery),
		chromedp.Poll(`document.querySelectorAll('#pick-list tbody tr').length === 2`, nil, chromedp.WithPollingTimeout(10*time.Second)))
	for _, id := range ids {
		tb.run(chromedp.Click(`[id="pick-`+id+`"]`, chromedp.ByQuery))
	}
	// Four plots, each drawn (uPlot's legend) for the runs picked.
	tb.run(chromedp.WaitVisible(`#compare-figures th[data-run-id="`+ids[1]+`"]`, chromedp.ByQuery),
		chromedp.Poll(`document.querySelectorAll('.compare-chart[data-runs="`+strings.Join(ids, ",")+`"] .u-legend').length === 4`, nil,
			chromedp.WithPollingTimeout(10*time.Second)))
	tb.shot("compare")
	var cols []string
	var legends [][]string
	var verdictRow map[string]string
	var search string
	tb.run(
		chromedp.Evaluate(`[...document.querySelectorAll('#compare-figures thead th[data-run-id]')].map(th => th.dataset.runId)`, &cols),
		chromedp.Evaluate(`[...document.querySelectorAll('.compare-chart')].map(c => [...c.querySelectorAll('.u-legend .u-series .u-label')].map(l => l.textContent))`, &legends),
		chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll('#compare-figures tr[data-key="result_validity"] td')].map(td => [td.dataset.runId, td.textContent]))`, &verdictRow),
		chromedp.Evaluate(`location.search`, &search))
	if strings.Join(cols, ",") != strings.Join(ids, ",") {
		t.Errorf("figures table columns %v, want %v", cols, ids)
	}
	for id, v := range verdicts {
		if verdictRow[id] != v {
			t.Errorf("run %s: the verdict row shows %q, the API says %q", id, verdictRow[id], v)
		}
	}
	if len(legends) != 4 {
		t.Fatalf("%d plots, want 4 (p99, throughput, lateness, spectrum)", len(legends))
	}
	for i, labels := range legends {
		all := strings.Join(labels, " | ")
		for _, id := range ids {
			short := id[strings.LastIndex(id, "-")+1:]
			if len(short) > 8 {
				short = short[:8]
			}
			if !strings.Contains(all, short) {
				t.Errorf("plot %d's legend %q lacks run %s", i, all, id)
			}
		}
	}
	if want := "?ids=" + strings.Join(ids, "%2C"); search != want && search != "?ids="+strings.Join(ids, ",") {
		t.Errorf("the URL's query is %q, want the picked ids (%s)", search, want)
	}
}

// The compare page given ids that are no runs says so for each, and
// draws nothing; its spectrum reader takes what a file may hold (empty,
// cut short, garbled) without throwing.
func TestConsoleCompareHostile(t *testing.T) {
	env := startConsole(t, nil)
	tb := newTab(t, 390)
	for _, id := range []string{"nope", strings.Repeat("x", 300), "<b>bold</b>"} {
		tb.allow(http.StatusNotFound, "/v1/runs/"+id)
	}
	tb.run(chromedp.Navigate(env.base+"/ui/compare?ids=nope,"+strings.Repeat("x", 300)+",%3Cb%3Ebold%3C%2Fb%3E"),
		chromedp.WaitVisible(`main[data-ready] #comparison p.error`, chromedp.ByQuery),
		chromedp.Poll(`document.querySelectorAll('#comparison p.error').length === 3`, nil, chromedp.WithPollingTimeout(10*time.Second)))
	tb.shot("compare-unknown")
	var bold, tables int
	tb.run(chromedp.Evaluate(`document.querySelectorAll('#comparison b').length`, &bold),
		chromedp.Evaluate(`document.querySelectorAll('#compare-figures, .compare-chart').length`, &tables))
	if bold != 0 || tables != 0 {
		t.Errorf("unknown ids: %d <b> elements built from the URL, %d tables and plots drawn", bold, tables)
	}
	cases := []struct {
		name, text string
		want       int
	}{
		{"empty", "", 0},
		{"no sample completed", "Latency spectrum: no sample completed (3 failed)\n", 0},
		{"cut in the header", "Detailed percentile spectrum:\n   Value(ms)", 0},
		{"cut after two rows", "Detailed percentile spectrum:\n\n 1.000 0.000000000000 1 1.00\n 2.000 0.500000000000 5 2.00\n 3.0", 2},
		{"garbled rows", "Detailed percentile spectrum:\nfoo bar baz\n 1.000 0.5 1 2.00\n#[Mean = 1]\n 9 0.9 1 10\n", 1},
		{"endless line", "Detailed percentile spectrum:\n" + strings.Repeat("9", 100000), 0},
	}
	for _, c := range cases {
		var n int
		tb.run(chromedp.Evaluate(`import('/ui/assets/rundata.js').then(m => m.parseSpectrum(`+jsString(c.text)+`).length)`, &n,
			func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
		if n != c.want {
			t.Errorf("parseSpectrum(%s) = %d rows, want %d", c.name, n, c.want)
		}
	}
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// An error naming a part the form has no field for (tls, the block as a
// whole) is said at the top of the form, focused; nothing is queued.
func TestConsoleFormTopError(t *testing.T) {
	env := startConsole(t, nil)
	tb := newTab(t, 0)
	tb.allow(http.StatusBadRequest, "/v1/runs") // the submit, refused
	openForm(tb, env)
	tb.run(typeInto("target", env.target), typeInto("model", "identity"), typeInto("tls.server_name", "example.org"),
		chromedp.Click(`#submit`, chromedp.ByQuery),
		chromedp.Poll(`document.getElementById('form-error').dataset.from === 'submit'`, nil, chromedp.WithPollingTimeout(10*time.Second)))
	var shown, focused string
	tb.run(chromedp.Text(`#form-error`, &shown, chromedp.ByQuery), chromedp.Evaluate(`document.activeElement.id`, &focused))
	tb.shot("new-top-error")
	if !strings.HasPrefix(shown, "tls: ") || !strings.Contains(shown, "https://") || focused != "form-error" {
		t.Errorf("the top of the form says %q (focus on %q), want the API's tls error, focused", shown, focused)
	}
	if runs := runsListed(t, env); len(runs) != 0 {
		t.Errorf("a refused form queued %d runs", len(runs))
	}
}

// The mode picks the spec's search block: a sweep's rates become a list,
// and the other mode's fields, hidden, are left out.
func TestConsoleFormSweep(t *testing.T) {
	env := startConsole(t, nil)
	tb := newTab(t, 0)
	openForm(tb, env)
	tb.run(typeInto("target", env.target), typeInto("model", "identity"),
		chromedp.SetValue(`#new-run [name="search.mode"]`, "find-peak", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('#new-run [name="search.mode"]').dispatchEvent(new Event('change', {bubbles: true}))`, nil),
		typeInto("search.upper_qps", "300"),
		chromedp.SetValue(`#new-run [name="search.mode"]`, "sweep", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('#new-run [name="search.mode"]').dispatchEvent(new Event('change', {bubbles: true}))`, nil),
		typeInto("search.rates", "10, 20,40"),
		chromedp.Poll(`document.getElementById('spec-command').textContent.includes('--rates')`, nil, chromedp.WithPollingTimeout(10*time.Second)))
	var shown, command string
	var upperHidden bool
	tb.run(chromedp.Text(`#spec-json`, &shown, chromedp.ByQuery), chromedp.Text(`#spec-command`, &command, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('#new-run [name="search.upper_qps"]').closest('.field').hidden`, &upperHidden))
	tb.shot("new-sweep")
	var spec api.RunSpec
	if err := json.Unmarshal([]byte(shown), &spec); err != nil {
		t.Fatalf("the page's spec: %v\n%s", err, shown)
	}
	if spec.Search == nil || spec.Search.Mode != api.SearchSweep || len(spec.Search.Rates) != 3 || spec.Search.Rates[2] != 40 || spec.Search.UpperQPS != 0 {
		t.Errorf("the page's spec has search %+v, want a sweep of 10, 20, 40 without find-peak's upper_qps", spec.Search)
	}
	if !upperHidden || !strings.Contains(command, "--rates 10,20,40") {
		t.Errorf("upper_qps hidden %v; command line %q", upperHidden, command)
	}
}

// typeIn types into the element sel (by query).
func typeIn(sel, text string) chromedp.Action {
	return sendKeys(sel, text)
}
