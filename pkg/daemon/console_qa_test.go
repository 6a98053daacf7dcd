package daemon_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/pkg/console"
	"github.com/netloadgen/netloadgen/pkg/daemon"
	"github.com/netloadgen/netloadgen/pkg/sutproxy"
)

// The console's QA: its guards as loadgend mounts it (no browser), the
// token flow, secrets never shown, accessibility and page weight (in
// headless Chromium).

// consoleRequest sends one request to loadgend without following a
// redirect; hdr may set Host, Origin and Content-Type.
func consoleRequest(t *testing.T, base, method, path, body string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func wantErrorCode(t *testing.T, what string, resp *http.Response, b []byte, status int, code string) {
	t.Helper()
	var eb api.ErrorBody
	if resp.StatusCode != status || json.Unmarshal(b, &eb) != nil || eb.Error.Code != code {
		t.Errorf("%s = %d %s, want %d %s", what, resp.StatusCode, b, status, code)
	}
}

// loadgend serves the console behind its Host/Origin guard: / leads to
// /ui/, a foreign Host (DNS rebinding) or Origin (a page elsewhere) is
// refused for pages, assets and the API alike, and the console's own
// origin may post to the API.
func TestConsoleGuards(t *testing.T) {
	_, c := e2eService(t, nil)
	u, _ := url.Parse(c.base)
	port := u.Port()
	resp, _ := consoleRequest(t, c.base, "GET", "/", "", nil)
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/ui/" {
		t.Errorf("GET / = %d Location %q, want 302 to /ui/", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, b := consoleRequest(t, c.base, "GET", "/ui/", "", nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `<main id="main"`) {
		t.Errorf("GET /ui/ = %d, want the console's page", resp.StatusCode)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("GET /ui/: Content-Security-Policy %q", csp)
	}
	foreignHost := map[string]string{"Host": "evil.example:" + port}
	for _, p := range []string{"/", "/ui/", "/ui/runs/x", "/ui/assets/app.js"} {
		resp, b := consoleRequest(t, c.base, "GET", p, "", foreignHost)
		wantErrorCode(t, "GET "+p+" with Host evil.example", resp, b, http.StatusForbidden, api.CodeHostNotAllowed)
		// A refusal under /ui/ is an answer of the console's: its headers.
		if p != "/" && (resp.Header.Get("Content-Security-Policy") != console.CSP || resp.Header.Get("X-Content-Type-Options") != "nosniff") {
			t.Errorf("GET %s with Host evil.example: CSP %q, nosniff %q: the console's headers missing", p,
				resp.Header.Get("Content-Security-Policy"), resp.Header.Get("X-Content-Type-Options"))
		}
	}
	// A module script fetched by a page elsewhere carries its Origin.
	evil := map[string]string{"Origin": "https://evil.example"}
	for _, p := range []string{"/ui/", "/ui/assets/app.js"} {
		resp, b := consoleRequest(t, c.base, "GET", p, "", evil)
		wantErrorCode(t, "GET "+p+" from Origin evil.example", resp, b, http.StatusForbidden, api.CodeOriginNotAllowed)
	}
	spec := serverSpec("http://127.0.0.1:1", 10, 100)
	resp, b = consoleRequest(t, c.base, "POST", "/v1/runs", spec, map[string]string{"Content-Type": "application/json", "Origin": "https://evil.example"})
	wantErrorCode(t, "POST /v1/runs from Origin evil.example", resp, b, http.StatusForbidden, api.CodeOriginNotAllowed)
	if _, b := c.do(t, "GET", "/v1/runs", ""); !strings.Contains(string(b), `"runs": []`) {
		t.Errorf("a refused POST queued a run: %s", b)
	}
	// The console's own requests: its origin, JSON.
	resp, b = consoleRequest(t, c.base, "POST", "/v1/runs", spec, map[string]string{"Content-Type": "application/json", "Origin": c.base})
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("POST /v1/runs from the console's origin = %d %s, want 202", resp.StatusCode, b)
	}
}

// Hostile paths sent raw to loadgend end in 404 or 405 (after at most the
// ServeMux's redirect to the cleaned path), never in a file from outside
// the console's static files.
func TestConsoleHostilePaths(t *testing.T) {
	_, c := e2eService(t, nil)
	addr := strings.TrimPrefix(c.base, "http://")
	paths := []string{
		"/ui/assets/../console.go", "/ui/assets/%2e%2e/console.go", "/ui/assets/..%2fconsole.go",
		"/ui/assets/../../../pkg/console/console.go", "/ui/assets/../../go.mod", "/ui//assets/app.js",
		"/ui/assets/", "/ui/assets/index.html", "/ui/assets/vendor", "/ui/assets/app.js%00",
		"/ui/assets/" + strings.Repeat("a/", 3000) + "x.js", "/ui/runs/a/b", "/ui/%2e%2e/v1/runs",
	}
	for _, p := range paths {
		what := fmt.Sprintf("GET %.80q", p)
		code, loc, body := rawRequest(t, addr, "GET", p)
		if code == http.StatusMovedPermanently || code == http.StatusTemporaryRedirect {
			if strings.HasPrefix(loc, "//") || strings.Contains(loc, "..") {
				t.Errorf("%s: redirected to %q", what, loc)
				continue
			}
			what += " → " + loc
			code, _, body = rawRequest(t, addr, "GET", loc)
		}
		if strings.Contains(body, "package console") || strings.Contains(body, "module github.com") {
			t.Errorf("%s: the answer holds a file from outside the console's static files", what)
		}
		if code != http.StatusNotFound && !(code == http.StatusOK && strings.HasPrefix(body, "// The console's router")) {
			t.Errorf("%s = %d, want 404", what, code)
		}
	}
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH"} {
		resp, b := consoleRequest(t, c.base, m, "/ui/", "", nil)
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s /ui/ = %d Allow %q %s, want 405 Allow GET, HEAD", m, resp.StatusCode, resp.Header.Get("Allow"), b)
		}
	}
	resp, b := consoleRequest(t, c.base, "HEAD", "/ui/assets/app.js", "", nil)
	if resp.StatusCode != http.StatusOK || len(b) != 0 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/javascript") {
		t.Errorf("HEAD /ui/assets/app.js = %d, %d bytes, %q", resp.StatusCode, len(b), resp.Header.Get("Content-Type"))
	}
}

// rawRequest sends the path byte for byte (no client cleaning or escaping
// it) and returns the status, Location and body.
func rawRequest(t *testing.T, addr, method, path string) (int, string, string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", method, path, addr)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%s %.80q: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, resp.Header.Get("Location"), string(b)
}

// evalJS evaluates a JavaScript expression in the page, awaiting it if it
// is a promise.
func evalJS(expr string, res any) chromedp.Action {
	return chromedp.Evaluate(expr, res, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) })
}

// open navigates to base+path and waits for the page's first render.
func (tb *tab) open(base, path string) {
	tb.t.Helper()
	tb.run(chromedp.Navigate(base+path), chromedp.WaitVisible("main[data-ready]", chromedp.ByQuery))
}

const tokenDialogOpen = `document.getElementById('token-dialog').open`

// With LOADGEND_API_TOKEN set, the console asks for the token, says so
// when it is refused, works with the right one, keeps it in the tab's
// session storage only (not the URL, a cookie or local storage), and asks
// again once it is gone; the API refuses a request without it.
func TestConsoleToken(t *testing.T) {
	const token = "console-qa-TOKEN-5e6f7a"
	env := startConsole(t, func(c *daemon.Config) { c.APIToken = token })
	id := env.api.submit(t, serverSpec(env.target, 200, 300))
	env.api.waitEnded(t, id, time.Minute)
	anon := e2eClient{base: env.base}
	if code, b := anon.do(t, "GET", "/v1/runs", ""); code != http.StatusUnauthorized {
		t.Errorf("GET /v1/runs without the token = %d %s, want 401", code, b)
	}
	if code, b := anon.do(t, "GET", "/ui/", ""); code != http.StatusOK || strings.Contains(string(b), token) {
		t.Errorf("GET /ui/ without the token = %d, want 200 (the pages hold no data)", code)
	}

	tb := newTab(t, 0)
	// The runs page's requests without the token, and with a wrong one,
	// are refused: the dialog is what the test is after.
	tb.allow(http.StatusUnauthorized, "/v1/runs")
	tb.askForToken(env.base)
	tb.shot("token-asked")
	tb.run(sendKeys("#token-input", "wrong-token"),
		chromedp.Click(`#token-form button[type="submit"]`, chromedp.ByQuery),
		chromedp.Poll(tokenDialogOpen+` && document.getElementById('token-error').textContent.includes('refused')`, nil))
	tb.shot("token-refused")
	tb.run(sendKeys("#token-input", token),
		chromedp.Click(`#token-form button[type="submit"]`, chromedp.ByQuery))
	// The runs page, given the token, shows the run (contract:
	// table#runs, rows with data-run-id).
	tb.run(chromedp.WaitVisible(`#runs [data-run-id="`+id+`"]`, chromedp.ByQuery))
	tb.shot("token-accepted")
	tb.wantTokenOnlyInSession(token)

	// Without it (the session storage cleared) the console asks again.
	tb.run(evalJS(`sessionStorage.clear(); true`, nil))
	tb.askForToken(env.base)
	tb.run(chromedp.Click("#token-cancel", chromedp.ByQuery), chromedp.Poll(`!`+tokenDialogOpen, nil))
}

// askForToken opens the runs page and wants it to ask for the token
// itself (its own request refused, the dialog open), not to show a page
// without one.
func (tb *tab) askForToken(base string) {
	tb.t.Helper()
	tb.run(chromedp.Navigate(base+"/ui/"), chromedp.Poll(tokenDialogOpen+` || !!document.querySelector('main[data-ready]')`, nil))
	var open bool
	tb.run(evalJS(tokenDialogOpen, &open))
	if !open {
		tb.shot("token-not-asked")
		tb.t.Fatal("the runs page, without the token, did not ask for it")
	}
}

// wantTokenOnlyInSession checks where the token is: in session storage,
// and nowhere else the page or the browser keeps or sends in the clear.
func (tb *tab) wantTokenOnlyInSession(token string) {
	tb.t.Helper()
	var where struct {
		Session string   `json:"session"`
		Local   string   `json:"local"`
		Cookie  string   `json:"cookie"`
		Href    string   `json:"href"`
		History int      `json:"history"`
		URLs    []string `json:"urls"`
	}
	tb.run(evalJS(`({session: sessionStorage.getItem('loadgend-token'), local: JSON.stringify(Object.assign({}, localStorage)),
		cookie: document.cookie, href: location.href, history: history.length,
		urls: performance.getEntriesByType('resource').concat(performance.getEntriesByType('navigation')).map((e) => e.name)})`, &where))
	if where.Session != token {
		tb.t.Errorf("sessionStorage loadgend-token = %q, want the token", where.Session)
	}
	if where.Local != "{}" {
		tb.t.Errorf("localStorage = %s, want nothing", where.Local)
	}
	if strings.Contains(where.Cookie, token) || strings.Contains(where.Href, token) {
		tb.t.Errorf("the token is in a cookie (%q) or the URL (%q)", where.Cookie, where.Href)
	}
	for _, u := range where.URLs {
		if strings.Contains(u, token) {
			tb.t.Errorf("the token is in a requested URL: %s", u)
		}
	}
	var cookies []*network.Cookie
	tb.run(chromedp.ActionFunc(func(ctx context.Context) error {
		var err error
		cookies, err = network.GetCookies().Do(ctx)
		return err
	}))
	for _, c := range cookies {
		tb.t.Errorf("the browser holds a cookie %s=%q: the console sets none", c.Name, c.Value)
	}
}

// No page shows a header's literal value or a secret an @env: reference
// names, in its DOM, its fields' values, or any answer it fetched. The
// run's endpoint wants both, so the run ending done shows they were used.
func TestConsoleNeverShowsSecrets(t *testing.T) {
	const (
		envVar  = "NETLOADGEN_CONSOLE_QA_SECRET"
		secret  = "console-env-SECRET-3c4d"
		literal = "Bearer console-literal-SECRET-1a2b"
	)
	t.Setenv(envVar, secret)
	p, err := sutproxy.Start(t.Context(), sutproxy.Config{HTTPAddr: "127.0.0.1:0", GRPCAddr: "off", RequireHeaders: []kserve.Header{
		{Name: "Authorization", Value: literal}, {Name: "X-Api-Key", Value: secret}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	_, c := e2eService(t, func(cfg *daemon.Config) { cfg.SecretEnv = []string{envVar} })
	id := c.submit(t, headerSpec(t, "http://"+p.HTTPAddr(), map[string]string{"x-api-key": "@env:" + envVar, "Authorization": literal}))
	if st := c.waitEnded(t, id, time.Minute); st.State != api.StateDone {
		t.Fatalf("the run ended %s (%s): the endpoint did not get its headers", st.State, st.Error)
	}
	// A second, for the compare page (c-form's: ?ids=a,b).
	id2 := c.submit(t, headerSpec(t, "http://"+p.HTTPAddr(), map[string]string{"x-api-key": "@env:" + envVar, "Authorization": literal}))
	c.waitEnded(t, id2, time.Minute)
	secrets := []string{secret, "console-literal-SECRET"}
	tb := newTab(t, 0)
	fetched := 0
	for _, page := range []string{"/ui/", "/ui/runs/" + id, "/ui/compare", "/ui/compare?ids=" + id + "," + id2, "/ui/new"} {
		tb.open(c.base, page)
		tb.shot("secrets-" + strings.NewReplacer("/", "_", "?", "_", "=", "_").Replace(strings.Trim(page, "/")))
		var shown struct {
			HTML   string   `json:"html"`
			Values []string `json:"values"`
			URLs   []string `json:"urls"`
		}
		tb.run(evalJS(`({html: document.documentElement.outerHTML,
			values: [...document.querySelectorAll('input, textarea, select')].map((e) => e.value),
			urls: performance.getEntriesByType('resource').map((e) => e.name)})`, &shown))
		for _, s := range secrets {
			if strings.Contains(shown.HTML, s) || strings.Contains(strings.Join(shown.Values, "\n"), s) {
				t.Errorf("%s shows a secret (%q)", page, s)
			}
		}
		// Every answer the page fetched, fetched again the same way.
		for _, u := range shown.URLs {
			pu, err := url.Parse(u)
			if err != nil || pu.Host != strings.TrimPrefix(c.base, "http://") {
				t.Errorf("%s fetched %s: not the console's origin", page, u)
				continue
			}
			_, b := c.do(t, "GET", pu.RequestURI(), "")
			fetched++
			for _, s := range secrets {
				if strings.Contains(string(b), s) {
					t.Errorf("%s fetched %s, which holds a secret (%q)", page, pu.RequestURI(), s)
				}
			}
		}
	}
	t.Logf("checked %d fetched answers", fetched)
}

// The console's pages, each checked for accessibility at a desktop
// width and at 390 px (a phone): an ended run's page among them.
func TestConsoleA11y(t *testing.T) {
	env := startConsole(t, nil)
	id := env.api.submit(t, serverSpec(env.target, 200, 500))
	env.api.waitEnded(t, id, time.Minute)
	id2 := env.api.submit(t, serverSpec(env.target, 200, 300))
	env.api.waitEnded(t, id2, time.Minute)
	pages := []string{"/ui/", "/ui/runs/" + id, "/ui/new", "/ui/compare", "/ui/compare?ids=" + id + "," + id2}
	for _, width := range []int{1280, 390} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			tb := newTab(t, width)
			for _, p := range pages {
				tb.open(env.base, p)
				checkA11y(t, tb, fmt.Sprintf("%s at %d px", p, width))
				tb.shot(fmt.Sprintf("a11y-%d-%s", width, pageName(p, id)))
			}
		})
	}
}

func pageName(p, id string) string {
	switch p {
	case "/ui/":
		return "runs"
	case "/ui/runs/" + id:
		return "run"
	}
	if strings.HasPrefix(p, "/ui/compare?") {
		return "compare-picked"
	}
	return strings.TrimPrefix(p, "/ui/")
}

// checkA11y checks the page the tab shows: labels on every field, text
// contrast ≥ 4.5:1, no sideways scroll of the document, and Tab (real key
// events) visiting every control in document order, each with a visible
// focus. Each failure names the element.
func checkA11y(t *testing.T, tb *tab, page string) {
	t.Helper()
	for _, p := range a11yProblems(tb) {
		t.Errorf("%s: %s", page, p)
	}
}

// a11yProblems are checkA11y's findings.
func a11yProblems(tb *tab) []string {
	tb.t.Helper()
	var problems []string
	for _, c := range []struct{ what, js string }{
		{"label", `(` + a11yLabelsJS + `)()`},
		{"contrast", `(` + a11yContrastJS + `)(4.5)`},
		{"width", `(` + a11yOverflowJS + `)()`},
	} {
		var out []string
		tb.run(evalJS(c.js, &out))
		for _, p := range out {
			problems = append(problems, c.what+": "+p)
		}
	}
	return append(problems, tabOrder(tb)...)
}

// The checks find what they look for: a page given one fault of each kind
// is reported for each, by the element's name.
func TestConsoleA11yChecksFindFaults(t *testing.T) {
	env := startConsole(t, nil)
	tb := newTab(t, 390)
	tb.open(env.base, "/ui/")
	// Through the DevTools protocol, which the CSP does not govern;
	// element.style is CSSOM, which it allows anyway.
	tb.run(evalJS(`(() => {
		const m = document.getElementById('main');
		const add = (tag, id, text, style, attrs) => { const e = document.createElement(tag); e.id = id; e.textContent = text;
			Object.assign(e.style, style); for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v); m.append(e); };
		add('input', 'qa-nolabel', '', {}, {type: 'text'});
		add('p', 'qa-faint', 'faint text', {color: '#aaaaaa'});
		add('div', 'qa-wide', 'wide', {width: '2000px'});
		add('button', 'qa-nofocus', 'No focus ring', {outline: 'none', boxShadow: 'none'});
		add('a', 'qa-jump', 'Jumps the queue', {}, {href: '#x', tabindex: '3'});
		add('button', 'qa-empty', '', {});
		return true;
	})()`, nil))
	got := strings.Join(a11yProblems(tb), "\n")
	for _, want := range []string{
		"label: input#qa-nolabel[type=\"text\"]: no label",
		"contrast: p#qa-faint \"faint text\": contrast 2.32:1",
		"width: the document scrolls sideways",
		"width: div#qa-wide \"wide\": right edge at",
		"focus not visible on button#qa-nofocus \"No focus ring\"",
		"a#qa-jump \"Jumps the queue\" has a positive tabindex",
		"label: button#qa-empty: a control with no text or aria-label",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the checks missed %q; they found:\n%s", want, got)
		}
	}
	tb.shot("a11y-faults")
}

// tabOrder presses Tab from the top of the page once per control (and
// once more) and checks that focus visits the controls in document order,
// each with a visible focus indicator.
func tabOrder(tb *tab) []string {
	tb.t.Helper()
	var want []string
	tb.run(evalJS(`document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0); (`+a11yFocusablesJS+`)()`, &want))
	var problems []string
	for _, w := range want {
		if strings.HasPrefix(w, "POSITIVE-TABINDEX ") {
			problems = append(problems, "focus order: "+strings.TrimPrefix(w, "POSITIVE-TABINDEX ")+" has a positive tabindex (it jumps the document order)")
		}
	}
	if len(want) == 0 {
		return append(problems, "focus order: nothing on the page takes focus")
	}
	const most = 150 // a long table's links: the first 150 are enough to see the order
	n := min(len(want), most)
	type focused struct {
		Name    string `json:"name"`
		Visible bool   `json:"visible"`
		Style   string `json:"style"`
	}
	var got []string
	for range n + 1 {
		var f focused
		tb.run(chromedp.KeyEvent(kb.Tab), evalJS(`(`+a11yFocusedJS+`)()`, &f))
		if f.Name == "body" {
			continue // past the last control, before wrapping to the first
		}
		if !f.Visible {
			problems = append(problems, "focus not visible on "+f.Name+" ("+f.Style+")")
		}
		got = append(got, f.Name)
	}
	for i := 0; i < n && i < len(got); i++ {
		if got[i] != want[i] {
			return append(problems, fmt.Sprintf("focus order: Tab %d went to %s, want %s (document order: %s)", i+1, got[i], want[i], strings.Join(want[:n], ", ")))
		}
	}
	if len(got) < n {
		problems = append(problems, fmt.Sprintf("focus order: %d Tabs reached %d controls of %d: %s", n+1, len(got), n, strings.Join(got, ", ")))
	}
	return problems
}

// The page weight: every asset a page fetched (uncompressed, the resource
// timing's decodedBodySize) plus the document is ≤ 300 KB per page. API
// answers (data, not assets) are reported apart.
func TestConsolePageWeight(t *testing.T) {
	env := startConsole(t, nil)
	id := env.api.submit(t, serverSpec(env.target, 200, 500))
	env.api.waitEnded(t, id, time.Minute)
	const budget = 300_000
	tb := newTab(t, 0)
	for _, p := range []string{"/ui/", "/ui/runs/" + id, "/ui/new", "/ui/compare"} {
		tb.open(env.base, p)
		var w struct {
			Assets int      `json:"assets"`
			Data   int      `json:"data"`
			Names  []string `json:"names"`
		}
		tb.run(evalJS(`(() => {
			const nav = performance.getEntriesByType('navigation')[0];
			let assets = nav.decodedBodySize, data = 0; const names = [];
			for (const e of performance.getEntriesByType('resource')) {
				const path = new URL(e.name).pathname;
				if (path.startsWith('/ui/')) { assets += e.decodedBodySize; names.push(path + ' ' + e.decodedBodySize); } else data += e.decodedBodySize;
			}
			return {assets, data, names};
		})()`, &w))
		t.Logf("%s: %d bytes of assets (%d files: %s), %d bytes of API answers", pageName(p, id), w.Assets, len(w.Names), strings.Join(w.Names, ", "), w.Data)
		// The document and the router, at least, were counted: a page
		// whose entries were not (a cached load) would pass any budget.
		if len(w.Names) < 3 || w.Assets < 50_000 {
			t.Errorf("%s: counted %d bytes in %d assets: the resource timing missed the page's assets", p, w.Assets, len(w.Names))
		}
		if w.Assets > budget {
			t.Errorf("%s: %d bytes of assets, over the %d-byte budget", p, w.Assets, budget)
		}
	}
}

// A page elsewhere (another origin on the same machine) cannot drive
// loadgend through the browser: its JSON POST dies at the CORS preflight,
// its "simple" text/plain POST is refused (nothing queued), it cannot
// read the API, and it cannot frame the console (frame-ancestors 'none').
func TestConsoleForeignPageRefused(t *testing.T) {
	_, c := e2eService(t, nil)
	spec := serverSpec("http://127.0.0.1:1", 10, 100)
	foreign := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>start</title><iframe id="f" src="%[1]s/ui/"></iframe><script>
const api = %[1]q, spec = %[2]q;
const how = (r) => r.status === 'fulfilled' ? r.value.type + ' ' + r.value.status : 'refused';
Promise.allSettled([
  fetch(api + '/v1/runs', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: spec}),
  fetch(api + '/v1/runs', {method: 'POST', mode: 'no-cors', headers: {'Content-Type': 'text/plain'}, body: spec}),
  fetch(api + '/v1/runs'),
]).then((rs) => { document.title = 'done: ' + rs.map(how).join(', '); });
</script>`, c.base, spec)
	}))
	t.Cleanup(foreign.Close)
	ctx, logged, changed := plainBrowserLog(t)
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var title string
	if err := chromedp.Run(cctx, chromedp.Navigate(foreign.URL),
		chromedp.Poll(`document.title.startsWith('done')`, nil), chromedp.Title(&title)); err != nil {
		t.Fatalf("the foreign page: %v", err)
	}
	// JSON POST: preflight refused; text/plain POST: sent, its answer
	// opaque (loadgend refused it: see below); GET: unreadable.
	if title != "done: refused, opaque 0, refused" {
		t.Errorf("the foreign page's requests: %q, want \"done: refused, opaque 0, refused\"", title)
	}
	if _, b := c.do(t, "GET", "/v1/runs", ""); !strings.Contains(string(b), `"runs": []`) {
		t.Errorf("a page elsewhere queued a run: %s", b)
	}
	// The browser logs its refusal to frame the console.
	for !strings.Contains(logged(), "frame-ancestors") {
		select {
		case <-changed:
		case <-cctx.Done():
			t.Fatalf("the browser did not refuse to frame the console (no frame-ancestors error); it logged: %s", logged())
		}
	}
}
