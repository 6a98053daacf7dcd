package report_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/internal/testtool"
)

// probeScript goes in before the page's Content-Security-Policy (a policy
// set by a meta element governs what follows it), so it runs where the
// page's own scripts could not: it records script errors, and once the page
// has loaded how many charts were laid out with a size.
const probeScript = `<script>
window.addEventListener('error', function (e) {
  var d = document.documentElement;
  d.setAttribute('data-errors', (d.getAttribute('data-errors') || '') + e.message + ';');
});
window.addEventListener('load', function () {
  var n = 0;
  document.querySelectorAll('svg.chart').forEach(function (s) {
    var r = s.getBoundingClientRect();
    if (r.width > 100 && r.height > 50) n++;
  });
  document.documentElement.setAttribute('data-charts-laid-out', String(n));
});
</script>`

// browse opens page in headless Chromium with the probe and returns the
// DOM it ends with and the console messages it logged.
func browse(t *testing.T, page string) (dom string, console []string) {
	t.Helper()
	bin := testtool.Need(t, "chromium")
	dir := t.TempDir()
	file := filepath.Join(dir, "report.html")
	probed := strings.Replace(page, "<head>", "<head>"+probeScript, 1)
	if probed == page {
		t.Fatal("no <head> to put the probe in")
	}
	if err := os.WriteFile(file, []byte(probed), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--window-size=1200,900", "--dump-dom", "file://"+file)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	for l := range strings.Lines(stderr.String()) {
		if strings.Contains(l, ":CONSOLE") {
			console = append(console, strings.TrimSpace(l))
		}
	}
	return string(out), console
}

// TestChromium: the report of two real runs, a search, a sweep and a
// closed loop opens in headless Chromium with no console message and no
// script error, its charts are laid out, and the figures in the DOM
// Chromium built equal result.json's.
func TestChromium(t *testing.T) {
	dirs := []string{copyRun(t, "server500"), copyRun(t, "server1500"), copyRun(t, "closed8"), copyRun(t, "peak"), copyRun(t, "sweep"), scoutRun(t)}
	editResult(t, dirs[0], func(m map[string]any) {
		m["failures"] = []map[string]any{{"outcome": "error", "status": "HTTP 500", "count": 0, "example": "<b>x</b>"}}
	})
	page := render(t, dirs...)
	dom, console := browse(t, page)
	if len(console) > 0 {
		t.Errorf("console messages:\n%s", strings.Join(console, "\n"))
	}
	if m := regexp.MustCompile(`<html[^>]*\sdata-errors="([^"]*)"`).FindStringSubmatch(dom); m != nil {
		t.Errorf("script errors: %s", m[1])
	}
	charts := strings.Count(page, `<svg class="chart"`)
	m := regexp.MustCompile(`<html[^>]*\sdata-charts-laid-out="(\d+)"`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the probe did not run:\n%.2000s", dom)
	}
	if n, _ := strconv.Atoi(m[1]); n != charts || charts < 6 {
		t.Errorf("%s of %d charts laid out with a size (want all, at least 6)", m[1], charts)
	}
	// The scout search's stages survive Chromium's parse: its squares in
	// the trials charts, and the legend's key to them.
	for id, scouts := range map[string]int{"trials-achieved": 5, "trials-tail": 4} { // trial 2's tail is a failed sample
		svg := regexp.MustCompile(`(?s)<svg class="chart" data-chart="` + id + `".*?</svg>`).FindString(dom)
		if n := strings.Count(svg, `data-trial-stage="verify"`); n != 1 || strings.Count(svg, `data-trial-stage="scout"`) != scouts {
			t.Errorf("%s in the DOM: %d verify marks (want 1), %d scout (want %d)", id, n, strings.Count(svg, `data-trial-stage="scout"`), scouts)
		}
	}
	if !strings.Contains(dom, `<li data-trial-stage="verify">`) {
		t.Error("no legend entry for the verify trials in the DOM")
	}
	for _, d := range dirs[:3] {
		name := filepath.Base(d)
		res := readJSON(t, filepath.Join(d, "result.json"))
		least, wantText := 15, res["result_validity"]
		if name == "closed8" { // no issue lateness, no bound
			least, wantText = 12, "N/A (closed loop, concurrency 8)"
		}
		if n := checkFigures(t, dom, name, res, "metric.value", "sample_latency.p99", "samples_completed"); n < least {
			t.Errorf("%s: %d figures in the DOM", name, n)
		}
		if v, text, ok := verdictShown(dom, name); !ok || v != res["result_validity"] || text != wantText {
			t.Errorf("%s: verdict in the DOM %q %q (%v), result.json %v", name, v, text, ok, res["result_validity"])
		}
	}
}

// TestChromiumSeesErrors: the checks above catch what they look for: a
// page with a malformed SVG path, a blocked inline script and a blocked
// fetch logs console messages, and a script error lands in data-errors.
func TestChromiumSeesErrors(t *testing.T) {
	bad := `<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none'"></head><body>` +
		`<svg><path d="M NaN 0 L 1 1"/></svg><script>x()</script><img src="http://192.0.2.1/x.png"></body></html>`
	_, console := browse(t, bad)
	for _, want := range []string{"attribute d: Expected number", "Content Security Policy", "Loading the image"} {
		found := false
		for _, l := range console {
			found = found || strings.Contains(l, want)
		}
		if !found {
			t.Errorf("no console message with %q in %q", want, console)
		}
	}
	dom, _ := browse(t, `<!DOCTYPE html><html><head></head><body><script>undefinedFn()</script></body></html>`)
	if !regexp.MustCompile(`<html[^>]*\sdata-errors="[^"]*undefinedFn`).MatchString(dom) {
		t.Errorf("a script error is not in data-errors: %s", dom)
	}
}

// TestChromiumServerView: the report of a run with the server's
// statistics and metrics, beside one without, opens in headless Chromium
// with no console message or script error, every chart laid out (the
// breakdown bar and the server's series among them), and in the DOM
// Chromium built the bar's segments carry the fixture's figures, in their
// data-value and in their titles, and the breakdown sentence is
// runlog.Breakdown's.
func TestChromiumServerView(t *testing.T) {
	dir := copyRun(t, "serverview")
	page := render(t, dir, copyRun(t, "server500"))
	dom, console := browse(t, page)
	if len(console) > 0 {
		t.Errorf("console messages:\n%s", strings.Join(console, "\n"))
	}
	if m := regexp.MustCompile(`<html[^>]*\sdata-errors="([^"]*)"`).FindStringSubmatch(dom); m != nil {
		t.Errorf("script errors: %s", m[1])
	}
	charts := strings.Count(page, `<svg class="chart"`)
	m := regexp.MustCompile(`<html[^>]*\sdata-charts-laid-out="(\d+)"`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the probe did not run:\n%.2000s", dom)
	}
	if n, _ := strconv.Atoi(m[1]); n != charts || charts < 9 {
		t.Errorf("%s of %d charts laid out with a size (want all, at least 9)", m[1], charts)
	}
	checkServerView(t, dom, dir)
}
