package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/search"
)

// reportTestdata is pkg/report's real runs (the tests run in a directory
// of their own: see TestMain).
func reportTestdata() string { return srcPath("../../pkg/report/testdata") }

// TestReportCommand: loadgend report writes one page of the runs given,
// with -o before, between or after them, each run named by its directory
// (its path where two share a name).
func TestReportCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.html")
	a, b := filepath.Join(reportTestdata(), "server500"), filepath.Join(reportTestdata(), "server1500")
	for _, args := range [][]string{
		{"report", a, b, "-o", out},
		{"report", "-o", out, a, b},
		{"report", a, "-o", out, b},
		{"report", a, "--title", "compare", "--out", out, "--", b},
	} {
		inv := mainArgs(args...)
		if inv.code != 0 || !strings.Contains(inv.stdout, "report: "+out+" (2 runs)") {
			t.Fatalf("%q: %v", args, inv)
		}
		page, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"server500", "server1500"} {
			if !strings.Contains(string(page), `<li data-run="`+name+`">`) {
				t.Errorf("%q: %s not in the legend", args, name)
			}
		}
		os.Remove(out)
	}
	// Two directories of the same name: each named by its path.
	x, y := filepath.Join(t.TempDir(), "run"), filepath.Join(t.TempDir(), "run")
	for _, d := range []string{x, y} {
		os.Mkdir(d, 0o755)
		copyFile(t, filepath.Join(a, "result.json"), filepath.Join(d, "result.json"))
	}
	if inv := mainArgs("report", x, y, "-o", out); inv.code != 0 {
		t.Fatal(inv)
	}
	page, _ := os.ReadFile(out)
	for _, d := range []string{x, y} {
		if !strings.Contains(string(page), `<li data-run="`+d+`">`) {
			t.Errorf("%s not in the legend", d)
		}
	}
}

// TestReportCommandErrors: bad input exits 2 with one line naming the
// directory and the file, and writes nothing.
func TestReportCommandErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	corrupt := filepath.Join(dir, "corrupt")
	os.Mkdir(empty, 0o755)
	os.Mkdir(corrupt, 0o755)
	os.WriteFile(filepath.Join(corrupt, "result.json"), []byte(`{"scenario":`), 0o644)
	out := filepath.Join(dir, "r.html")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "-o", out}, "no run directory given"},
		{[]string{"report", empty, "-o", out}, empty + ": not a run directory: it has no result.json or search.json"},
		{[]string{"report", corrupt, "-o", out}, corrupt + ": result.json: "},
		{[]string{"report", filepath.Join(dir, "missing"), "-o", out}, filepath.Join(dir, "missing") + ": not a run directory"},
		{[]string{"report", filepath.Join(reportTestdata(), "server500"), "-o", filepath.Join(dir, "no", "such", "r.html")}, "-o " + filepath.Join(dir, "no", "such", "r.html")},
		{[]string{"report", "--titel", "x"}, "did you mean --title?"},
	} {
		inv := mainArgs(c.args...)
		if inv.code != exitError || !strings.Contains(inv.stderr, c.want) || strings.Count(inv.stderr, "\n") != 1 {
			t.Errorf("%q: want exit 2 and one line with %q: %v", c.args, c.want, inv)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a report was written")
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSweepReport: loadgend report of a real sweep's directory (run here
// with --mode sweep against the in-process sutproxy) shows the sweep as
// one, its latency-vs-load rows equal to search.json's trials, not a
// search that found no peak.
func TestSweepReport(t *testing.T) {
	p := startProxy(t, "name=fast,fn=echo,dims=16,max_batch=0,latency=constant:100us,instances=4")
	dir := filepath.Join(t.TempDir(), "sweep")
	var out, errb bytes.Buffer
	if code := runCommand([]string{"--mode", "sweep", "--rates", "20,40", "--target", "http://" + p.HTTPAddr(), "--model", "fast",
		"--min-duration-ms", "200", "--min-query-count", "1", "--target-latency-ms", "10", "--out", dir}, &out, &errb); code != exitSweepDone {
		t.Fatalf("sweep: exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	res, err := search.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	page := reportOf(t, dir)
	if !strings.Contains(page, "<span>sweep of 2 rates</span>") || strings.Contains(page, "o peak found") {
		t.Error("the sweep is not shown as one")
	}
	for _, tr := range res.Trials {
		row := regexp.MustCompile(`<tr data-trial="` + strconv.Itoa(tr.Index) + `">.*</tr>`).FindString(page)
		for _, want := range []string{
			`<td data-value="` + strconv.FormatFloat(tr.Target, 'g', -1, 64) + `">`,
			`<td data-value="` + strconv.FormatFloat(tr.Latency.P50, 'g', -1, 64) + `">`,
			`<td data-value="` + strconv.FormatFloat(tr.Latency.P99, 'g', -1, 64) + `">`,
			`<td data-value="` + strconv.FormatInt(tr.OverBound, 10) + `">`,
		} {
			if !strings.Contains(row, want) {
				t.Errorf("trial %d: no %s in %s", tr.Index, want, row)
			}
		}
	}
}

// TestConcurrencyReport: loadgend report of a real closed loop
// (--concurrency 2) shows it N/A with its concurrency, never INVALID.
func TestConcurrencyReport(t *testing.T) {
	p := startProxy(t, "name=m,fn=echo,dims=16,max_batch=0,latency=constant:1ms,instances=4")
	dir := filepath.Join(t.TempDir(), "closed")
	var out, errb bytes.Buffer
	if code := runCommand([]string{"--target", "http://" + p.HTTPAddr(), "--model", "m", "--concurrency", "2",
		"--min-duration-ms", "200", "--min-query-count", "1", "--out", dir}, &out, &errb); code != exitValid {
		t.Fatalf("closed loop: exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	page := reportOf(t, dir)
	if !strings.Contains(page, `data-figure="result_validity" data-value="N/A">N/A (closed loop, concurrency 2)</span>`) ||
		strings.Contains(page, ">INVALID<") || strings.Contains(page, `"INVALID"`) {
		t.Errorf("the closed loop's verdict is not N/A (closed loop, concurrency 2):\n%.3000s", page)
	}
	if !strings.Contains(page, `data-figure="closed_loop.concurrency" data-value="2"`) {
		t.Error("no concurrency figure")
	}
}

// reportOf runs loadgend report on dir and returns the page.
func reportOf(t *testing.T, dir string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "r.html")
	if inv := mainArgs("report", dir, "-o", out); inv.code != 0 {
		t.Fatalf("report: %v", inv)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(page)
}
