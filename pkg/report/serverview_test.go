package report_test

import (
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/runlog"
)

// segment is one part of a run's breakdown bar as the page (or Chromium's
// DOM) has it.
type segment struct {
	Run, Part string
	Value     float64
	Title     string
}

var segmentRE = regexp.MustCompile(`<rect class="seg" data-run="([^"]*)" data-part="([^"]*)" data-value="([^"]*)"[^>]*>(?:</rect>)?<title>([^<]*)</title>`)

func segments(t *testing.T, page string) []segment {
	t.Helper()
	var out []segment
	for _, m := range segmentRE.FindAllStringSubmatch(page, -1) {
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			t.Errorf("segment data-value %q", m[3])
		}
		out = append(out, segment{html.UnescapeString(m[1]), html.UnescapeString(m[2]), v, html.UnescapeString(m[4])})
	}
	return out
}

func num(t *testing.T, m map[string]any, path ...string) float64 {
	t.Helper()
	var cur any = m
	for _, p := range path {
		cur = cur.(map[string]any)[p]
	}
	v, err := cur.(json.Number).Float64()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// checkServerView holds the page of the serverview fixture (beside runs
// without a server view) to its result.json: the breakdown bar's segments
// are the statistics' means (compute the sum of its three phases), each
// titled with its figure; the breakdown sentence is runlog.Breakdown's;
// the server's charts are there.
func checkServerView(t *testing.T, page, dir string) {
	t.Helper()
	res := readJSON(t, filepath.Join(dir, "result.json"))
	st := []string{"server", "statistics"}
	stat := func(k string) float64 { return num(t, res, append(st, k)...) }
	mean := num(t, res, "sample_latency", "mean_ns")
	want := map[string]float64{
		"network and client": stat("client_overhead_ns"),
		"server queue":       stat("queue_ns"),
		"compute":            stat("compute_input_ns") + stat("compute_infer_ns") + stat("compute_output_ns"),
	}
	segs := segments(t, page)
	if len(segs) != len(want) {
		t.Fatalf("%d segments %+v, want %d", len(segs), segs, len(want))
	}
	for _, s := range segs {
		w, ok := want[s.Part]
		if s.Run != "serverview" || !ok || s.Value != w {
			t.Errorf("segment %+v, want %s %v", s, s.Part, w)
			continue
		}
		if t0 := "serverview: " + s.Part + " " + strconv.FormatFloat(w/1e6, 'f', 3, 64) + " ms (" + strconv.FormatFloat(100*w/mean, 'f', 1, 64) +
			"% of " + strconv.FormatFloat(mean/1e6, 'f', 3, 64) + " ms mean latency)"; s.Title != t0 {
			t.Errorf("segment title %q, want %q", s.Title, t0)
		}
	}
	r, err := runlog.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	bd := runlog.Breakdown(r)
	if !strings.HasPrefix(bd, "server queue ") {
		t.Fatalf("the fixture's breakdown %q", bd)
	}
	m := regexp.MustCompile(`<p class="breakdown" data-breakdown="([^"]*)">`).FindAllStringSubmatch(page, -1)
	if len(m) != 1 || html.UnescapeString(m[0][1]) != bd {
		t.Errorf("breakdown in the page %q, want one, %q", m, bd)
	}
	for _, id := range []string{"breakdown", "server-queue", "server-batch", "server-gpu", "server-requests"} {
		if !strings.Contains(page, `data-chart="`+id+`"`) {
			t.Errorf("no chart %s", id)
		}
	}
}

// TestServerView: the page of a run with the server's statistics and
// metrics, beside one without, shows the breakdown bar, the sentence, the
// statistics' figures, the server's series and the scrape errors; the run
// without them shows none of it.
func TestServerView(t *testing.T) {
	dir, plain := copyRun(t, "serverview"), copyRun(t, "server500")
	page := render(t, dir, plain)
	checkServerView(t, page, dir)
	res := readJSON(t, filepath.Join(dir, "result.json"))
	checkFigures(t, page, "serverview", res, "server.statistics.queue_ns", "server.statistics.compute_infer_ns",
		"server.statistics.client_overhead_ns", "server.statistics.requests", "server.statistics.mean_batch_size")
	for kind, n := range map[string]string{"timeout": "2", "too_large": "1"} {
		if !strings.Contains(page, `<tr data-error="`+kind+`"><td class="l">`+kind+`</td><td data-value="`+n+`">`) {
			t.Errorf("scrape error %s %s not shown", kind, n)
		}
	}
	// The queue depth's peak is the fixture's: 6 requests at 3.05 s.
	if !strings.Contains(page, "serverview sutproxy_queue_depth{model=&#34;m&#34;} at http://127.0.0.1:18700/metrics: 3.05s: 6</title>") {
		t.Error("the queue depth's peak is not drawn")
	}
	for _, f := range shownFigures(page) {
		if f.Run == "server500" && strings.HasPrefix(f.Key, "server.") {
			t.Errorf("server500 shows %s", f.Key)
		}
	}

	alone := render(t, plain)
	for _, absent := range []string{`data-chart="breakdown"`, `data-chart="server-`, `class="breakdown"`, "server-over-time", `class="server-metrics"`} {
		if strings.Contains(alone, absent) {
			t.Errorf("a run without the server's view has %s", absent)
		}
	}
	if !strings.Contains(alone, "No run has the server's statistics") {
		t.Error("no note for the missing statistics")
	}
}

// TestServerViewNotOffered: an endpoint without the statistics extension
// gets its one line, and no bar.
func TestServerViewNotOffered(t *testing.T) {
	dir := copyRun(t, "server500")
	editResult(t, dir, func(m map[string]any) {
		m["server"] = map[string]any{"statistics": map[string]any{"offered": false, "note": "not offered", "requests": 0, "request_ns": 0,
			"queue_ns": 0, "compute_input_ns": 0, "compute_infer_ns": 0, "compute_output_ns": 0, "mean_batch_size": 0, "client_overhead_ns": 0, "delta": nil}}
	})
	page := render(t, dir)
	if !strings.Contains(page, "<p class=\"note\" data-statistics-note>server statistics: not offered</p>") {
		t.Error("no 'not offered' line")
	}
	if strings.Contains(page, `data-chart="breakdown"`) || strings.Contains(page, `class="breakdown"`) {
		t.Error("a breakdown without statistics")
	}
}

// TestServerViewCompared: two runs' bars share one scale, so a part twice
// as long in one run is drawn twice as wide, and each run's segments
// carry its own figures.
func TestServerViewCompared(t *testing.T) {
	a := copyRun(t, "serverview")
	b := filepath.Join(t.TempDir(), "slower")
	copyDir(t, a, b)
	editResult(t, b, func(m map[string]any) {
		st := m["server"].(map[string]any)["statistics"].(map[string]any)
		q, _ := st["queue_ns"].(json.Number).Float64()
		st["queue_ns"] = 2 * q
	})
	page := render(t, a, b)
	widths := map[string]float64{}
	values := map[string]float64{}
	re := regexp.MustCompile(`<rect class="seg" data-run="([^"]*)" data-part="server queue" data-value="([^"]*)" x="[^"]*" y="[^"]*" width="([^"]*)"`)
	for _, m := range re.FindAllStringSubmatch(page, -1) {
		values[m[1]], _ = strconv.ParseFloat(m[2], 64)
		widths[m[1]], _ = strconv.ParseFloat(m[3], 64)
	}
	if len(widths) != 2 || values["slower"] != 2*values["serverview"] {
		t.Fatalf("queue segments %v %v", values, widths)
	}
	if r := widths["slower"] / widths["serverview"]; r < 1.97 || r > 2.03 { // widths are rounded to 0.1
		t.Errorf("the slower run's queue is %.3f times as wide, want 2", r)
	}
}

// copyDir copies the files of src into a new directory dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
