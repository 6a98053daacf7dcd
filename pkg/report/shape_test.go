package report_test

import (
	"context"
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/shape"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// virtual is a clock whose sleeps jump to their due time: a shaped run of
// seconds takes none.
type virtual struct {
	base time.Time
	now  atomic.Int64
}

func (c *virtual) Now() time.Time { return c.base.Add(time.Duration(c.now.Load())) }
func (c *virtual) SleepUntil(ctx context.Context, t time.Time) {
	if d := int64(t.Sub(c.base)); ctx.Err() == nil && d > c.now.Load() {
		c.now.Store(d)
	}
}

// answerSUT answers each query inline, model 1's three times slower.
type answerSUT struct{}

func (answerSUT) Name() string { return "shaped (Network SUT)" }
func (answerSUT) IssueQuery(_ context.Context, q loadgen.Query, done func(loadgen.Completion)) {
	c := q.Done(nil)
	c.At = q.Scheduled.Add(time.Duration(1+2*q.Model) * time.Millisecond)
	done(c)
}

type qsl struct{}

func (qsl) TotalSampleCount() int             { return 64 }
func (qsl) PerformanceSampleCount() int       { return 64 }
func (qsl) Load(context.Context, []int) error { return nil }

// threeStages: 2 s at 20/s, 2 s at 40/s, 2 s at 10/s; query i's model i%2.
type threeStages struct{}

func (threeStages) arrivals() []trace.Arrival {
	var a []trace.Arrival
	start := time.Duration(0)
	for k, rate := range []int{20, 40, 10} {
		for i := range 2 * rate {
			a = append(a, trace.Arrival{At: start + time.Duration(i)*time.Second/time.Duration(rate), Stage: k, Model: len(a) % 2})
		}
		start += 2 * time.Second
	}
	return a
}
func (s threeStages) Arrivals() (trace.Arrivals, error) { return &arrivals{a: s.arrivals()}, nil }
func (threeStages) End() time.Duration                  { return 6 * time.Second }
func (threeStages) Stages() []shape.Stage {
	return []shape.Stage{{Duration: 2 * time.Second, From: 20, To: 20}, {Duration: 2 * time.Second, From: 40, To: 40}, {Duration: 2 * time.Second, From: 10, To: 10}}
}
func (threeStages) Models() []string { return []string{"identity", "resnet50"} }

type arrivals struct {
	a []trace.Arrival
	i int
}

func (p *arrivals) Next() (trace.Arrival, bool) {
	if p.i >= len(p.a) {
		return trace.Arrival{}, false
	}
	p.i++
	return p.a[p.i-1], true
}
func (p *arrivals) Err() error   { return nil }
func (p *arrivals) Close() error { return nil }

// shapedRunDir runs the three stages on a virtual clock and writes the
// run's directory, named shaped.
func shapedRunDir(t *testing.T, slo string) string {
	t.Helper()
	s := loadgen.DefaultSettings(loadgen.RulesetLoadGen6)
	s.Scenario, s.Shape = trace.Server, threeStages{}
	if slo != "" {
		s.Engine.SLO, _ = genai.ParseSLO(slo)
	}
	run, err := loadgen.NewRun(s, answerSUT{}, qsl{}, loadgen.WithClock(&virtual{base: time.Unix(1_700_000_000, 0)}))
	if err != nil {
		t.Fatal(err)
	}
	res, err := run.Execute(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "shaped")
	if err := runlog.Write(dir, run, res, runlog.Options{}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// checkShapedPage: the verdict says N/A or the SLO's, each chart over time
// marks the three stage starts, and the stages and models tables hold
// result.json's counts.
func checkShapedPage(t *testing.T, page, dir, wantVerdict string) {
	t.Helper()
	if v, text, ok := verdictShown(page, "shaped"); !ok || text != html.EscapeString(wantVerdict) {
		t.Errorf("verdict shown %q %q (%v), want %q", v, text, ok, wantVerdict)
	}
	for _, id := range []string{"throughput", "latency-over-time"} {
		svg := regexp.MustCompile(`(?s)<svg class="chart" data-chart="` + id + `".*?</svg>`).FindString(page)
		for k := range 3 {
			if !strings.Contains(svg, `class="stage-mark" data-stage="`+strconv.Itoa(k)+`"`) {
				t.Errorf("chart %s: no mark for stage %d", id, k)
			}
		}
	}
	res := readJSON(t, filepath.Join(dir, runlog.ResultFile))
	for _, part := range []string{"stages", "models"} {
		list, _ := res[part].([]any)
		if len(list) == 0 {
			t.Fatalf("result.json has no %s", part)
		}
		for i, p := range list {
			m := p.(map[string]any)
			row := regexp.MustCompile(`<tr data-part="` + part + `\.` + strconv.Itoa(i) + `"[^>]*>(.*?)</tr>`).FindStringSubmatch(page)
			if row == nil {
				t.Errorf("no row for %s.%d", part, i)
				continue
			}
			for _, k := range []string{"samples_issued", "samples_completed", "samples_failed"} {
				want := `data-value="` + m[k].(interface{ String() string }).String() + `"`
				if !strings.Contains(row[1], want) {
					t.Errorf("%s.%d: %s %v not in the row %s", part, i, k, m[k], row[1])
				}
			}
			if part == "models" && !strings.Contains(row[0], `data-model="`+m["model"].(string)+`"`) {
				t.Errorf("models.%d: %s not named in %s", i, m["model"], row[0])
			}
		}
	}
}

// The report of a shaped run marks its stages on the charts over time and
// shows its stages and models side by side.
func TestReportShapedRun(t *testing.T) {
	dir := shapedRunDir(t, "")
	checkShapedPage(t, render(t, dir), dir, loadgen.NAReason)
	dir = shapedRunDir(t, "latency=2ms@p90")
	page := render(t, dir)
	checkShapedPage(t, page, dir, "INVALID (SLO latency=2ms@p90)")
	if !strings.Contains(page, "goodput/s") {
		t.Error("no goodput column with an SLO")
	}
}

// The same page opens in headless Chromium with no console message or
// script error, its charts laid out, and the marks and tables in the DOM
// Chromium built.
func TestChromiumShaped(t *testing.T) {
	dir := shapedRunDir(t, "latency=5ms@p99")
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
	if n, _ := strconv.Atoi(m[1]); n != charts {
		t.Errorf("%s of %d charts laid out with a size", m[1], charts)
	}
	checkShapedPage(t, dom, dir, "VALID (SLO latency=5ms@p99)")
}

// A run with sessions shows their counts and a row per turn index, with
// TTFT per turn where a prefix cache's gain shows. The sessions object is
// written into a shaped run's result.json as the engine writes it.
func TestReportSessions(t *testing.T) {
	dir := shapedRunDir(t, "")
	path := filepath.Join(dir, "result.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var res map[string]any
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	turn := func(k, issued int, ttft50, ttft99 int64) loadgen.TurnResult {
		return loadgen.TurnResult{Turn: k, Issued: int64(issued), Completed: int64(issued - 1), Failed: 1,
			TTFT: loadgen.TokenStats{Count: int64(issued - 1), P50: ttft50, P99: ttft99}, E2E: loadgen.TokenStats{Count: 1, P99: 9e6}}
	}
	res["sessions"] = loadgen.SessionsResult{Sessions: 50, Completed: 48, Failed: 2, TurnsPlanned: 150, TurnsIssued: 149, TurnsNotIssued: 1,
		DurationNs: loadgen.TokenStats{Count: 48, P50: 1.5e9, P99: 2.25e9},
		Turns:      []loadgen.TurnResult{turn(1, 50, 20.6e6, 31e6), turn(2, 50, 12.1e6, 18.5e6), turn(3, 49, 99.07e6, 120e6)}}
	if b, err = json.Marshal(res); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(render(t, dir))
	for _, want := range []string{
		"50 sessions: 48 completed, 2 failed, 0 unfinished; 149 of 150 turns issued; a completed session's duration p50 1500.0 ms, p99 2250.0 ms",
		`<tr data-turn="2"><td>2</td><td data-value="50">50</td><td data-value="49">49</td><td data-value="1">1</td><td>12.100</td><td data-value="18500000">18.500</td><td>-</td><td>9.000</td></tr>`,
		`<tr data-turn="3"><td>3</td><td data-value="49">49</td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Count(page, "<tr data-turn=") != 3 {
		t.Errorf("%d turn rows, want 3", strings.Count(page, "<tr data-turn="))
	}
	if plain := render(t, shapedRunDir(t, "")); strings.Contains(plain, `class="sessions"`) {
		t.Error("a run without sessions shows a sessions table")
	}
}
