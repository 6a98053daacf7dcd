package dashboards

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// dashboard is the part of Grafana's dashboard model these tests read.
type dashboard struct {
	Title         string  `json:"title"`
	UID           string  `json:"uid"`
	SchemaVersion int     `json:"schemaVersion"`
	Panels        []panel `json:"panels"`
	Time          *struct {
		From string `json:"from"`
		To   string `json:"to"`
	} `json:"time"`
	Templating struct {
		List []variable `json:"list"`
	} `json:"templating"`
}

type panel struct {
	ID         *int   `json:"id"`
	Type       string `json:"type"`
	Title      string `json:"title"`
	Datasource *struct {
		Type string `json:"type"`
		UID  string `json:"uid"`
	} `json:"datasource"`
	GridPos *struct {
		X, Y, W, H int
	} `json:"gridPos"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // a collapsed row's
}

type variable struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	Query      json.RawMessage `json:"query"`
	Definition string          `json:"definition"`
}

// query is one PromQL expression of the dashboard and where it is.
type query struct {
	where, expr string
}

func loadDashboard(t *testing.T, name string) dashboard {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return d
}

// flatPanels lists the panels, those inside collapsed rows included.
func flatPanels(ps []panel) []panel {
	var out []panel
	for _, p := range ps {
		out = append(out, p)
		out = append(out, flatPanels(p.Panels)...)
	}
	return out
}

// queries lists every panel target's expression and every query
// variable's, the latter as the PromQL Grafana runs for label_values.
func queries(d dashboard) ([]query, error) {
	var qs []query
	for _, p := range flatPanels(d.Panels) {
		for _, tg := range p.Targets {
			qs = append(qs, query{fmt.Sprintf("panel %q target %s", p.Title, tg.RefID), tg.Expr})
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, err := labelValuesQuery(v.Definition)
		if err != nil {
			return nil, fmt.Errorf("variable %s: %w", v.Name, err)
		}
		qs = append(qs, query{"variable " + v.Name, q})
	}
	return qs, nil
}

var labelValuesRE = regexp.MustCompile(`^label_values\((.+),\s*([a-zA-Z_][a-zA-Z0-9_]*)\)$`)

// labelValuesQuery turns Grafana's label_values(selector, label) into the
// PromQL whose result holds those values.
func labelValuesQuery(def string) (string, error) {
	m := labelValuesRE.FindStringSubmatch(strings.TrimSpace(def))
	if m == nil {
		return "", fmt.Errorf("%q is not label_values(selector, label)", def)
	}
	return fmt.Sprintf("group by (%s) (%s)", m[2], m[1]), nil
}

// dashboardProblems returns what makes d an invalid or unfit dashboard.
func dashboardProblems(d dashboard) []string {
	var p []string
	bad := func(format string, a ...any) { p = append(p, fmt.Sprintf(format, a...)) }
	if d.Title == "" || d.UID == "" || d.SchemaVersion < 30 || d.Time == nil || len(d.Panels) == 0 {
		bad("title %q uid %q schemaVersion %d time %v panels %d: a dashboard needs them all (schemaVersion >= 30)",
			d.Title, d.UID, d.SchemaVersion, d.Time, len(d.Panels))
	}
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v.Type
	}
	for name, typ := range map[string]string{"datasource": "datasource", "job": "query", "instance": "query"} {
		if vars[name] != typ {
			bad("template variable %s: type %q, want %q", name, vars[name], typ)
		}
	}
	ids := map[int]string{}
	type rect struct {
		title      string
		x, y, w, h int
	}
	var rects []rect
	for _, pn := range flatPanels(d.Panels) {
		if pn.ID == nil {
			bad("panel %q has no id", pn.Title)
		} else if other, dup := ids[*pn.ID]; dup {
			bad("panels %q and %q share id %d", other, pn.Title, *pn.ID)
		} else {
			ids[*pn.ID] = pn.Title
		}
		if pn.Type == "" || pn.Title == "" || pn.GridPos == nil || pn.GridPos.W <= 0 || pn.GridPos.H <= 0 || pn.GridPos.X < 0 || pn.GridPos.X+pn.GridPos.W > 24 {
			bad("panel %q: type %q, gridPos %v: want a type, a title and a place on the 24-column grid", pn.Title, pn.Type, pn.GridPos)
			continue
		}
		g := pn.GridPos
		for _, r := range rects {
			if g.X < r.x+r.w && r.x < g.X+g.W && g.Y < r.y+r.h && r.y < g.Y+g.H {
				bad("panels %q and %q overlap", r.title, pn.Title)
			}
		}
		rects = append(rects, rect{pn.Title, g.X, g.Y, g.W, g.H})
		if pn.Type == "row" {
			continue
		}
		if pn.Datasource == nil || pn.Datasource.Type != "prometheus" || pn.Datasource.UID != "${datasource}" {
			bad("panel %q: datasource %v, want prometheus ${datasource}", pn.Title, pn.Datasource)
		}
		if len(pn.Targets) == 0 {
			bad("panel %q has no query", pn.Title)
		}
		refs := map[string]bool{}
		for _, tg := range pn.Targets {
			if tg.RefID == "" || refs[tg.RefID] || strings.TrimSpace(tg.Expr) == "" {
				bad("panel %q: target %q: want a unique refId and an expression", pn.Title, tg.RefID)
			}
			refs[tg.RefID] = true
		}
	}
	qs, err := queries(d)
	if err != nil {
		bad("%v", err)
	}
	for _, q := range qs {
		p = append(p, selectorProblems(q)...)
	}
	return p
}

// metricRE finds the metric names of an expression: loadgend's, and the
// process and Go runtime series its registry adds.
var metricRE = regexp.MustCompile(`\b(loadgend|process|go)_[a-z_]+\b(\{[^}]*\})?`)

// selectorProblems: every series a panel reads is narrowed to the chosen
// job and instance, and every rate window is Grafana's $__rate_interval
// (at least four scrapes, whatever the scrape interval).
func selectorProblems(q query) []string {
	var p []string
	for _, m := range metricRE.FindAllStringSubmatch(q.expr, -1) {
		sel := m[2]
		wantJob := !strings.HasPrefix(q.where, "variable ")
		if wantJob && (!strings.Contains(sel, `job=~"$job"`) || !strings.Contains(sel, `instance=~"$instance"`)) {
			p = append(p, fmt.Sprintf("%s: %s is not narrowed to $job and $instance", q.where, m[0]))
		}
	}
	for _, w := range regexp.MustCompile(`\[([^\]]*)\]`).FindAllStringSubmatch(q.expr, -1) {
		if w[1] != "$__rate_interval" && w[1] != "$__range" {
			p = append(p, fmt.Sprintf("%s: window [%s], want [$__rate_interval] (or [$__range])", q.where, w[1]))
		}
	}
	return p
}

func TestDashboardIsValid(t *testing.T) {
	d := loadDashboard(t, "loadgend.json")
	for _, p := range dashboardProblems(d) {
		t.Error(p)
	}
	qs, _ := queries(d)
	// What the issue asks the dashboard to show, by the metric that shows it.
	for what, metric := range map[string]string{
		"achieved rate": "loadgend_samples_completed_total", "target rate": "loadgend_target_samples_per_second",
		"latency percentiles (native)":  "histogram_quantile(0.99, sum by (instance) (rate(loadgend_sample_latency_seconds{",
		"latency percentiles (classic)": "loadgend_sample_latency_seconds_bucket", "issue lateness": "loadgend_issue_lateness_seconds",
		"errors by outcome": "sum by (outcome) (rate(loadgend_samples_failed_total", "in flight": "loadgend_queries_in_flight",
		"search trial": "loadgend_search_trial", "search bounds": "loadgend_search_lower_bound_samples_per_second",
		"TTFT percentiles": "histogram_quantile(0.99, sum by (instance) (rate(loadgend_ttft_seconds{",
		"TPOT percentiles": "loadgend_tpot_seconds_bucket", "ITL percentiles": "loadgend_itl_seconds",
		"output tokens/s": "rate(loadgend_output_tokens_total", "input tokens/s": "rate(loadgend_input_tokens_total",
	} {
		found := false
		for _, q := range qs {
			found = found || strings.Contains(q.expr, metric)
		}
		if !found {
			t.Errorf("no query shows the %s (%s)", what, metric)
		}
	}
}

// TestDashboardProblemsFound shows that the checks can fail.
func TestDashboardProblemsFound(t *testing.T) {
	b, err := os.ReadFile("loadgend.json")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, old, new string }{
		{"duplicate id", `"id": 2,`, `"id": 1,`},
		{"no uid", `"uid": "netloadgen-loadgend"`, `"uid": ""`},
		{"selector without instance", `loadgend_queries_in_flight{job=~\"$job\",instance=~\"$instance\"}`, `loadgend_queries_in_flight{job=~\"$job\"}`},
		{"fixed window", `rate(loadgend_queries_issued_total{job=~\"$job\",instance=~\"$instance\"}[$__rate_interval])`, `rate(loadgend_queries_issued_total{job=~\"$job\",instance=~\"$instance\"}[1m])`},
		{"off the grid", `"x": 16,`, `"x": 20,`},
		{"no job variable", `"name": "job"`, `"name": "jobs"`},
		{"not label_values", `"definition": "label_values(loadgend_run_state, job)"`, `"definition": "query_result(up)"`},
		{"empty expression", `"expr": "go_goroutines{job=~\"$job\",instance=~\"$instance\"}"`, `"expr": " "`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(string(b), c.old) {
				t.Fatalf("loadgend.json no longer contains %s", c.old)
			}
			var d dashboard
			if err := json.Unmarshal([]byte(strings.Replace(string(b), c.old, c.new, 1)), &d); err != nil {
				t.Fatal(err)
			}
			if p := dashboardProblems(d); len(p) == 0 {
				t.Error("no problem found")
			}
		})
	}
}
