package report_test

import (
	"bytes"
	"encoding/json"
	"html"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/report"
)

// render loads dirs (named by their base names) and writes their page.
func render(t *testing.T, dirs ...string) string {
	t.Helper()
	var runs []*report.Run
	for _, d := range dirs {
		r, err := report.Load(filepath.Base(d), report.Dir(d))
		if err != nil {
			t.Fatalf("Load %s: %v", d, err)
		}
		runs = append(runs, r)
	}
	var b bytes.Buffer
	if err := report.Write(&b, runs, report.Options{Now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// copyRun copies testdata/name into a new temporary directory named name
// and returns its path.
func copyRun(t *testing.T, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join("testdata", name)
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
	return dst
}

// editResult rewrites dir/result.json through edit, as generic JSON.
func editResult(t *testing.T, dir string, edit func(m map[string]any)) {
	t.Helper()
	p := filepath.Join(dir, "result.json")
	m := readJSON(t, p)
	edit(m)
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// shownFigure is one figure cell of a page: run, key, data-value and text.
type shownFigure struct {
	Run, Key, Value, Text string
}

// figureCell matches what the page (and Chromium's serialisation of it)
// writes for a figure: attributes in this order, text up to the next tag.
var figureCell = regexp.MustCompile(`<td data-run="([^"]*)" data-figure="([^"]*)" data-value="([^"]*)">([^<]*)</td>`)

func shownFigures(page string) []shownFigure {
	var out []shownFigure
	for _, m := range figureCell.FindAllStringSubmatch(page, -1) {
		out = append(out, shownFigure{html.UnescapeString(m[1]), m[2], html.UnescapeString(m[3]), strings.TrimSpace(html.UnescapeString(m[4]))})
	}
	return out
}

// lookup finds a figure's key in result.json: a dotted path, where
// "sample_latency.p99" is the entry of sample_latency.percentiles with p
// 0.99.
func lookup(m map[string]any, key string) (json.Number, bool) {
	var cur any = m
	segs := strings.Split(key, ".")
	for i, seg := range segs {
		obj, ok := cur.(map[string]any)
		if !ok {
			return "", false
		}
		if v, ok := obj[seg]; ok {
			cur = v
			continue
		}
		// "p99.9": the rest of the key is the percentile.
		ps, ok := obj["percentiles"].([]any)
		p, err := strconv.ParseFloat(strings.TrimPrefix(strings.Join(segs[i:], "."), "p"), 64)
		if !ok || err != nil {
			return "", false
		}
		found := false
		for _, e := range ps {
			q := e.(map[string]any)
			if f, _ := q["p"].(json.Number).Float64(); math.Abs(f*100-p) < 1e-9 {
				cur, found = q["latency_ns"], true
			}
		}
		if !found {
			return "", false
		}
		break
	}
	n, ok := cur.(json.Number)
	return n, ok
}

// checkFigures holds every figure of run in page to result: data-value
// equal to result.json's number, the text equal to it within the text's
// rounding (ms for ns keys); and the keys want are all shown. It returns
// how many figures it checked.
func checkFigures(t *testing.T, page, run string, result map[string]any, want ...string) int {
	t.Helper()
	seen := map[string]bool{}
	n := 0
	for _, f := range shownFigures(page) {
		if f.Run != run {
			continue
		}
		n++
		seen[f.Key] = true
		jv, ok := lookup(result, f.Key)
		if !ok {
			t.Errorf("%s %s: not a number in result.json", run, f.Key)
			continue
		}
		exact, _ := jv.Float64()
		got, err := strconv.ParseFloat(f.Value, 64)
		if err != nil || got != exact {
			t.Errorf("%s %s: data-value %q, result.json %s", run, f.Key, f.Value, jv)
		}
		if f.Text == "failed" {
			if jv.String() != strconv.FormatInt(math.MaxInt64, 10) {
				t.Errorf("%s %s: shown failed, result.json %s", run, f.Key, jv)
			}
			continue
		}
		text, err := strconv.ParseFloat(f.Text, 64)
		if err != nil {
			t.Errorf("%s %s: text %q is not a number", run, f.Key, f.Text)
			continue
		}
		scale := 1.0
		if strings.HasSuffix(f.Key, "_ns") || strings.Contains(f.Key, "latency.") || strings.Contains(f.Key, "lateness.") {
			scale = 1e6 // shown in ms
		}
		if f.Key == "duration_ns" {
			scale = 1e9 // shown in s
		}
		dec := 0
		if i := strings.IndexByte(f.Text, '.'); i >= 0 {
			dec = len(f.Text) - i - 1
		}
		if tol := 0.5 * math.Pow(10, -float64(dec)) * scale; math.Abs(text*scale-exact) > tol*(1+1e-9) {
			t.Errorf("%s %s: shown %q, result.json %s", run, f.Key, f.Text, jv)
		}
	}
	for _, k := range want {
		if !seen[k] {
			t.Errorf("%s: figure %s not shown", run, k)
		}
	}
	return n
}

// verdictShown is the run's verdict span: data-value and text.
func verdictShown(page, run string) (value, text string, ok bool) {
	sec := regexp.MustCompile(`(?s)<section class="run" data-run="` + regexp.QuoteMeta(html.EscapeString(run)) + `">(.*?)</section>`).FindStringSubmatch(page)
	if sec == nil {
		return "", "", false
	}
	m := regexp.MustCompile(`data-figure="result_validity" data-value="([^"]*)">([^<]*)<`).FindStringSubmatch(sec[1])
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}
