package daemon_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/netloadgen/netloadgen/internal/testtool"
	"github.com/netloadgen/netloadgen/pkg/daemon"
)

// The console's tests drive headless Chromium through the DevTools
// protocol (chromedp) against a real loadgend (in process) and sutproxy.

// consoleEnv is a loadgend serving the console, a sutproxy to point runs
// at, and the API client the tests check the pages against.
type consoleEnv struct {
	base   string // http://127.0.0.1:port
	target string // sutproxy's HTTP target
	api    e2eClient
	svc    *daemon.Service
}

// startConsole starts sutproxy and loadgend (edit changes its config).
func startConsole(t *testing.T, edit func(*daemon.Config)) consoleEnv {
	t.Helper()
	target := e2eSUT(t)
	svc, c := e2eService(t, edit)
	return consoleEnv{base: c.base, target: target, api: c, svc: svc}
}

// tab is one browser tab: its context (every chromedp action runs on it)
// and what the page logged as errors. Its screenshots go to the test's
// artifact directory (go test -artifacts keeps them; not committed).
type tab struct {
	t       *testing.T
	ctx     context.Context
	mu      sync.Mutex
	errors  []string
	allowed map[allowedFailure]bool
}

// allowedFailure is an answer a test provokes on purpose: its status and
// its URL's path (the query left out).
type allowedFailure struct {
	status int
	path   string
}

// newTab starts headless Chromium (one browser per test) at 1280×900, or
// at width×900 when width > 0. The test fails if a page logs a
// JavaScript error or throws one uncaught.
func newTab(t *testing.T, width int) *tab {
	t.Helper()
	bin := testtool.Need(t, "chromium")
	if width <= 0 {
		width = 1280
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		// No UserDataDir: chromedp makes a temporary profile and removes
		// it once Chromium has exited. A t.TempDir profile failed tests at
		// cleanup ("directory not empty"): Chromium's helper processes
		// still write there after the browser is gone.
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.WindowSize(width, 900))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	// A test's browser work is bounded: a page that never settles fails
	// the test rather than hanging it (each step has stepTimeout).
	ctx, cancelT := context.WithTimeout(ctx, 5*time.Minute)
	tb := &tab{t: t, ctx: ctx}
	chromedp.ListenTarget(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			tb.addError("uncaught: " + ev.ExceptionDetails.Error())
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, string(a.Value))
				}
				tb.addError("console.error: " + strings.Join(parts, " "))
			}
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.LevelError && !tb.expected(ev.Entry.Text, ev.Entry.URL) {
				tb.addError("log: " + ev.Entry.Text + " " + ev.Entry.URL)
			}
		}
	})
	release, err := startBrowser(ctx, log.Enable(), runtime.Enable())
	if err != nil {
		cancelT()
		cancelB()
		cancelA()
		release()
		t.Fatalf("chromium: %v", err)
	}
	t.Cleanup(func() {
		cancelT()
		cancelB()
		cancelA()
		release()
		tb.mu.Lock()
		defer tb.mu.Unlock()
		for _, e := range tb.errors {
			t.Errorf("the console logged an error: %s", e)
		}
	})
	return tb
}

// startBrowser runs a new chromedp context's first actions, which start
// Chromium, on an OS thread locked until release. chromedp starts the
// browser with Pdeathsig: the kernel kills it when the thread that
// started it exits, and a Go thread exits when a goroutine that locked it
// ends locked (pkg/scrape's lowPriority does, for a scrape of a run's
// server metrics): a browser started on such a thread died mid-test
// (about 30% of runs that scraped).
func startBrowser(ctx context.Context, actions ...chromedp.Action) (release func(), err error) {
	started, done := make(chan error), make(chan struct{})
	go func() {
		goruntime.LockOSThread()
		started <- chromedp.Run(ctx, actions...)
		<-done // then the goroutine ends locked: its thread exits after Chromium
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done) }) }, <-started
}

// allow declares an answer the test provokes on purpose: Chromium logs
// every 4xx or 5xx a page receives as an error, and those the test asked
// for are the API's answers, not the console's faults. Any other logged
// failure fails the test, naming its URL. path is the URL's path, without
// its query.
func (tb *tab) allow(status int, path string) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if tb.allowed == nil {
		tb.allowed = make(map[allowedFailure]bool)
	}
	tb.allowed[allowedFailure{status, path}] = true
}

// expected reports whether a logged error is a failed answer the test
// allowed (allow): Chromium's text is "Failed to load resource: the
// server responded with a status of 404 (Not Found)", with the URL beside.
func (tb *tab) expected(text, rawURL string) bool {
	status, ok := loggedStatus(text)
	if !ok {
		return false
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.allowed[allowedFailure{status, u.Path}]
}

// loggedStatus is the HTTP status in Chromium's log of a failed answer.
func loggedStatus(text string) (int, bool) {
	const marker = "the server responded with a status of "
	i := strings.Index(text, marker)
	if i < 0 {
		return 0, false
	}
	rest := text[i+len(marker):]
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	status, err := strconv.Atoi(rest[:n])
	return status, err == nil
}

func (tb *tab) addError(s string) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.errors = append(tb.errors, s)
}

// awaitPromise makes chromedp.Evaluate wait for the promise it returns.
func awaitPromise(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }

// stepTimeout bounds one run of actions: a page that never shows what a
// test waits for fails it in this long, with a screenshot.
const stepTimeout = 30 * time.Second

// run runs chromedp actions on the tab, failing the test on an error.
func (tb *tab) run(actions ...chromedp.Action) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		tb.shot("failure")
		tb.t.Fatalf("browser: %v", err)
	}
}

// shot saves a full-page screenshot as NAME.png in the artifact directory.
func (tb *tab) shot(name string) {
	tb.t.Helper()
	var png []byte
	if err := chromedp.Run(tb.ctx, chromedp.FullScreenshot(&png, 90)); err != nil {
		tb.t.Logf("screenshot %s: %v", name, err)
		return
	}
	dir := tb.t.ArtifactDir()
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		tb.t.Logf("screenshot %s: %v", name, err)
	}
}

// The console loads from / (a redirect to /ui/) with no script error.
func TestConsoleLoads(t *testing.T) {
	env := startConsole(t, nil)
	tb := newTab(t, 0)
	var title string
	tb.run(chromedp.Navigate(env.base+"/"), chromedp.WaitVisible("main[data-ready] h1", chromedp.ByQuery), chromedp.Title(&title),
		chromedp.Location(&title))
	if !strings.HasSuffix(title, "/ui/") {
		t.Errorf("/ led to %s, want /ui/", title)
	}
	tb.shot("runs")
}

// sendKeys types text into the element sel finds (a CSS selector), as
// chromedp.SendKeys does, without its data race: v0.14.2's SendKeys reads
// the node's attributes before taking the node's lock, while the event
// goroutine updates them (the race detector saw it in one run of four).
// The element must be visible, as SendKeys requires.
func sendKeys(sel, text string) chromedp.Action {
	return chromedp.Tasks{
		chromedp.WaitVisible(sel, chromedp.ByQuery),
		chromedp.Focus(sel, chromedp.ByQuery),
		chromedp.KeyEvent(text),
	}
}
