package daemon_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/internal/testtool"
	"github.com/netloadgen/netloadgen/pkg/daemon"
)

// readyProbe runs in every document before its own scripts (added through
// the DevTools protocol, which the page's CSP does not govern): it notes
// when main gets data-ready, in ms since the navigation started.
const readyProbe = `new MutationObserver((_, obs) => {
  const m = document.querySelector('main[data-ready]');
  if (m && window.qaReadyAt === undefined) { window.qaReadyAt = performance.now(); obs.disconnect(); }
}).observe(document, {subtree: true, childList: true, attributes: true, attributeFilter: ['data-ready']});`

// BenchmarkConsoleRunsPage opens the runs page of a loadgend whose history
// holds 1,000 finished runs, in headless Chromium: an op is a navigation
// to /ui/ until the page's first render is done (main[data-ready], the
// table of runs drawn). ready-ms is that time as the page measured it
// (navigation start to data-ready); ns/op adds the DevTools round trips.
// The target is under 1 s. bench/console.sh runs it.
func BenchmarkConsoleRunsPage(b *testing.B) {
	const history = 1000
	base := daemon.ConsoleHistory(b, history)
	wantHistory(b, base, history)
	ctx, errs := plainBrowser(b)
	var script page.ScriptIdentifier
	if err := chromedp.Run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		var err error
		script, err = page.AddScriptToEvaluateOnNewDocument(readyProbe).Do(ctx)
		return err
	})); err != nil || script == "" {
		b.Fatalf("the ready probe: %v", err)
	}
	var readyMs float64
	var rows int
	open := func() {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		var at float64
		if err := chromedp.Run(cctx, chromedp.Navigate(base+"/ui/"),
			chromedp.WaitVisible("main[data-ready]", chromedp.ByQuery),
			chromedp.Evaluate(`window.qaReadyAt`, &at),
			chromedp.Evaluate(`document.querySelectorAll('#runs [data-run-id]').length`, &rows)); err != nil {
			b.Fatalf("the runs page: %v", err)
		}
		readyMs += at
	}
	open() // the first load compiles the scripts: not counted
	// A page that draws no run is no measure of the runs page.
	if rows == 0 {
		b.Fatalf("the runs page shows no #runs [data-run-id] rows over a history of %d runs", history)
	}
	readyMs = 0
	n := 0
	for b.Loop() {
		open()
		n++
	}
	b.ReportMetric(readyMs/float64(n), "ready-ms")
	b.ReportMetric(float64(rows), "rows")
	if rows == 0 {
		b.Fatalf("the runs page showed no #runs [data-run-id] rows in its last load")
	}
	if e := errs(); e != "" {
		b.Fatalf("the console logged an error: %s", e)
	}
}

// wantHistory checks that loadgend lists n finished runs with verdicts
// (500 a page).
func wantHistory(b *testing.B, base string, n int) {
	b.Helper()
	count, token := 0, ""
	for range n/500 + 2 {
		resp, err := http.Get(base + "/v1/runs?limit=500&page_token=" + token)
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var list api.RunList
		if err := json.Unmarshal(body, &list); err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("GET /v1/runs = %d %.200s", resp.StatusCode, body)
		}
		for _, r := range list.Runs {
			if r.State != api.StateDone || r.Validity == "" {
				b.Fatalf("run %s: %s, validity %q: want done with a verdict", r.ID, r.State, r.Validity)
			}
		}
		count += len(list.Runs)
		if token = list.NextPageToken; token == "" {
			break
		}
	}
	if count != n {
		b.Fatalf("loadgend lists %d runs, want %d", count, n)
	}
}

// plainBrowser starts headless Chromium for a benchmark or a test that
// expects the browser to log errors (the tests' newTab takes a *testing.T
// and fails on any); errs returns what the pages logged as errors.
func plainBrowser(tb testing.TB) (context.Context, func() string) {
	tb.Helper()
	ctx, errs, _ := plainBrowserLog(tb)
	return ctx, errs
}

// plainBrowserLog is plainBrowser, and a channel poked (buffered, one
// slot) each time a page logs an error: a test waits on it for an error
// it expects.
func plainBrowserLog(tb testing.TB) (context.Context, func() string, <-chan struct{}) {
	tb.Helper()
	bin := testtool.Need(tb, "chromium")
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.WindowSize(1280, 900))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	release := func() {}
	tb.Cleanup(func() { cancelB(); cancelA(); release() })
	var mu sync.Mutex
	var errs []string
	changed := make(chan struct{}, 1)
	add := func(s string) {
		mu.Lock()
		errs = append(errs, s)
		mu.Unlock()
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	chromedp.ListenTarget(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			add("uncaught: " + ev.ExceptionDetails.Error())
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError {
				add("console.error")
			}
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == cdplog.LevelError {
				add("log: " + ev.Entry.Text + " " + ev.Entry.URL)
			}
		}
	})
	release, err := startBrowser(ctx, cdplog.Enable(), runtime.Enable())
	if err != nil {
		tb.Fatalf("chromium: %v", err)
	}
	return ctx, func() string {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(errs, "; ")
	}, changed
}
