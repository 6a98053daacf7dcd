package console_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/console"
)

// wantSecurityHeaders checks the headers every answer under /ui/ carries,
// whatever its status: the CSP allows only the console's own origin and
// no framing, nothing is sniffed, no referrer leaves with a link.
func wantSecurityHeaders(t *testing.T, what string, h http.Header) {
	t.Helper()
	csp := map[string]string{}
	for _, d := range strings.Split(h.Get("Content-Security-Policy"), ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
		csp[name] = strings.TrimSpace(value)
	}
	if csp["default-src"] != "'self'" || csp["frame-ancestors"] != "'none'" {
		t.Errorf("%s: Content-Security-Policy %q, want default-src 'self' and frame-ancestors 'none'", what, h.Get("Content-Security-Policy"))
	}
	// A directive of its own for scripts or styles would override
	// default-src: none may exist, so inline code stays refused.
	for _, d := range []string{"script-src", "style-src", "script-src-elem", "style-src-attr", "connect-src", "img-src"} {
		if _, ok := csp[d]; ok {
			t.Errorf("%s: Content-Security-Policy has %s (%q): default-src 'self' must govern it", what, d, csp[d])
		}
	}
	if strings.Contains(h.Get("Content-Security-Policy"), "unsafe-") {
		t.Errorf("%s: Content-Security-Policy allows %q", what, h.Get("Content-Security-Policy"))
	}
	if got := h.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("%s: X-Content-Type-Options %q, want nosniff", what, got)
	}
	if got := h.Get("Referrer-Policy"); got != "no-referrer" {
		t.Errorf("%s: Referrer-Policy %q, want no-referrer", what, got)
	}
}

// serve runs one request through the handler itself, with the path set
// as given (no ServeMux cleaning it first: the handler must hold alone).
func serve(method, rawPath string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, "/ui/", nil)
	r.URL.Path = rawPath
	r.URL.RawPath = ""
	w := httptest.NewRecorder()
	console.Handler().ServeHTTP(w, r)
	return w
}

// Every answer, pages, assets, 404s and 405s alike, carries the headers.
func TestSecurityHeadersOnEveryAnswer(t *testing.T) {
	cases := []struct {
		method, path string
		status       int
	}{
		{"GET", "/ui/", 200},
		{"GET", "/ui/new", 200},
		{"GET", "/ui/compare", 200},
		{"GET", "/ui/runs/20260101T000000.000000Z-0123abcd", 200},
		{"GET", "/ui/assets/app.js", 200},
		{"GET", "/ui/assets/console.css", 200},
		{"GET", "/ui/assets/vendor/uPlot.iife.min.js", 200},
		{"HEAD", "/ui/", 200},
		{"HEAD", "/ui/assets/lib.js", 200},
		{"GET", "/ui/nope", 404},
		{"GET", "/ui/assets/nope.js", 404},
		{"GET", "/ui/runs/", 404},
		{"POST", "/ui/", 405},
		{"PUT", "/ui/assets/app.js", 405},
		{"DELETE", "/ui/runs/x", 405},
		{"OPTIONS", "/ui/", 405},
	}
	for _, c := range cases {
		w := serve(c.method, c.path)
		what := c.method + " " + c.path
		if w.Code != c.status {
			t.Errorf("%s = %d, want %d", what, w.Code, c.status)
		}
		wantSecurityHeaders(t, what, w.Header())
		if c.status == 405 && w.Header().Get("Allow") != "GET, HEAD" {
			t.Errorf("%s: Allow %q, want \"GET, HEAD\"", what, w.Header().Get("Allow"))
		}
	}
}

// Each asset is answered with its own type, which the browser enforces
// (nosniff): a module script must come as JavaScript, a stylesheet as CSS,
// whatever the system's MIME tables say.
func TestAssetTypes(t *testing.T) {
	for name, want := range map[string]string{
		"app.js": "text/javascript", "vendor/uPlot.iife.min.js": "text/javascript",
		"console.css": "text/css", "vendor/uPlot.min.css": "text/css", "vendor/uPlot.LICENSE": "text/plain",
	} {
		w := serve("GET", "/ui/assets/"+name)
		if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, want) {
			t.Errorf("%s: Content-Type %q, want %s", name, ct, want)
		}
	}
	w := serve("GET", "/ui/")
	if ct := w.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("/ui/: Content-Type %q, want text/html; charset=utf-8", ct)
	}
}

// hostilePaths try to leave static/, name a directory or the page as an
// asset, or overwhelm the handler.
var hostilePaths = []string{
	"/ui/assets/../console.go",
	"/ui/assets/../../console.go",
	"/ui/assets/..%2fconsole.go",
	"/ui/assets/%2e%2e/console.go",
	"/ui/assets/%2e%2e%2fconsole.go",
	"/ui/assets/vendor/../../console.go",
	"/ui/assets/vendor/../app.js",
	"/ui/assets/..\\console.go",
	"/ui/assets//app.js",
	"/ui//assets/app.js",
	"/ui/assets/./app.js",
	"/ui/assets/",
	"/ui/assets",
	"/ui/assets/vendor",
	"/ui/assets/vendor/",
	"/ui/assets/index.html",
	"/ui/assets/.",
	"/ui/assets/..",
	"/ui/assets/app.js%00.png",
	"/ui/assets/app.js/",
	"/ui/assets/static/app.js",
	"/ui/runs//x",
	"/ui/runs/a/b",
	"/ui/assets/" + strings.Repeat("a/", 4000) + "app.js",
	"/ui/" + strings.Repeat("x", 60000),
}

// The handler alone (no ServeMux cleaning the path first) answers every
// hostile path 404, and never with a file from outside static/.
func TestHostilePathsDirect(t *testing.T) {
	for _, p := range hostilePaths {
		decoded, err := url.PathUnescape(p)
		if err != nil {
			t.Fatal(err)
		}
		w := serve("GET", decoded)
		if w.Code != http.StatusNotFound {
			t.Errorf("GET %.80q = %d, want 404", decoded, w.Code)
		}
		wantNothingOutside(t, decoded, w.Body.String())
		wantSecurityHeaders(t, "GET "+p[:min(len(p), 80)], w.Header())
	}
}

// wantNothingOutside fails if body holds this package's source (the one
// file next to static/ a traversal would reach first).
func wantNothingOutside(t *testing.T, what, body string) {
	t.Helper()
	if strings.Contains(body, "package console") || strings.Contains(body, "go:embed") {
		t.Errorf("%.80q: the answer holds console.go", what)
	}
}

// The same paths sent raw over a socket to a ServeMux mounting the
// console as loadgend does: the answer is 404, or a redirect (ServeMux
// cleaning the path) to a path that is itself 404 or one of the
// console's own pages or assets; never a file from outside static/.
func TestHostilePathsOverTheWire(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle(console.Prefix, console.Handler())
	mux.Handle("/", http.NotFoundHandler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	for _, p := range append(hostilePaths, "/ui/assets/app.js\x00", "/ui/\x00") {
		code, loc, body := rawGet(t, srv.Listener.Addr().String(), p)
		what := fmt.Sprintf("GET %.80q", p)
		wantNothingOutside(t, what, body)
		switch {
		case code == http.StatusNotFound, code == http.StatusBadRequest:
		case code == http.StatusMovedPermanently || code == http.StatusTemporaryRedirect:
			if strings.Contains(loc, "..") || !strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, "//") {
				t.Errorf("%s: redirected to %q", what, loc)
			}
			code2, _, body2 := rawGet(t, srv.Listener.Addr().String(), loc)
			wantNothingOutside(t, what+" → "+loc, body2)
			if code2 != http.StatusOK && code2 != http.StatusNotFound {
				t.Errorf("%s → %q = %d", what, loc, code2)
			}
		default:
			t.Errorf("%s = %d, want 404 (or a redirect to a clean path)", what, code)
		}
	}
}

// rawGet sends the path byte for byte (no client cleaning or escaping it)
// and returns the status, Location and body.
func rawGet(t *testing.T, addr, path string) (int, string, string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, addr)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("GET %.80q: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, resp.Header.Get("Location"), string(b)
}

// Every 200 answer is index.html (a page) or the embedded asset it names,
// byte for byte.
func TestAnswersAreEmbeddedFiles(t *testing.T) {
	assets, err := console.Assets()
	if err != nil {
		t.Fatal(err)
	}
	index, err := os.ReadFile(filepath.Join("static", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for name, size := range assets {
		w := serve("GET", "/ui/assets/"+name)
		if name == "index.html" {
			if w.Code != http.StatusNotFound {
				t.Errorf("index.html as an asset = %d, want 404 (it is served as the pages)", w.Code)
			}
			continue
		}
		want, err := os.ReadFile(filepath.Join("static", filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		if w.Code != http.StatusOK || w.Body.String() != string(want) || size != len(want) {
			t.Errorf("/ui/assets/%s = %d, %d bytes; want 200 and the %d bytes of static/%s", name, w.Code, w.Body.Len(), len(want), name)
		}
	}
	for _, p := range []string{"/ui/", "/ui/new", "/ui/compare", "/ui/runs/x"} {
		if w := serve("GET", p); w.Body.String() != string(index) {
			t.Errorf("%s: not index.html", p)
		}
	}
}

// The embedded files hold no inline script or style, no javascript: URL,
// no URL of another origin and no HTML built from strings: what the CSP
// would refuse in the browser, or what would need it relaxed, is found
// here first, with the file and line.
func TestEmbeddedFilesAreCSPClean(t *testing.T) {
	assets, err := console.Assets()
	if err != nil {
		t.Fatal(err)
	}
	common := []rule{
		{regexp.MustCompile(`(?i)javascript:`), "a javascript: URL"},
		{regexp.MustCompile(`(?i)\b(?:https?:)?//[a-z0-9-]+(?:\.[a-z0-9-]+)+`), "a URL of another origin (nothing is fetched from elsewhere)"},
	}
	html := []rule{
		{regexp.MustCompile(`(?i)<script\b[^>]*>`), ""}, // checked below: each needs src
		{regexp.MustCompile(`(?i)<style\b`), "a <style> element"},
		{regexp.MustCompile(`(?i)\sstyle\s*=`), "a style= attribute"},
		{regexp.MustCompile(`(?i)\son[a-z]+\s*=`), "an inline event handler (on...=)"},
	}
	js := []rule{
		{regexp.MustCompile(`\.(?:inner|outer)HTML\s*[+]?=`), "HTML built from a string (innerHTML/outerHTML)"},
		{regexp.MustCompile(`insertAdjacentHTML|document\.write|createContextualFragment`), "HTML built from a string"},
		{regexp.MustCompile(`\beval\s*\(|new\s+Function\s*\(`), "code built from a string (eval, new Function)"},
		{regexp.MustCompile(`setAttribute\(\s*['"]style['"]|['"]?\bstyle['"]?\s*:\s*['"]`), "a style attribute set from script (CSP refuses it: use el.style.x)"},
		{regexp.MustCompile(`setTimeout\(\s*['"]|setInterval\(\s*['"]`), "a timer given a string of code"},
	}
	css := []rule{
		{regexp.MustCompile(`(?i)@import|url\(\s*['"]?(?:https?:)?//`), "a stylesheet fetching from elsewhere"},
		{regexp.MustCompile(`(?i)expression\(`), "a CSS expression"},
	}
	checked := 0
	for name := range assets {
		b, err := os.ReadFile(filepath.Join("static", filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		rules := common
		switch filepath.Ext(name) {
		case ".html":
			rules = append(rules, html...)
			for _, tag := range html[0].re.FindAllString(src, -1) {
				if !strings.Contains(tag, " src=") {
					t.Errorf("%s: %s: an inline <script> (only <script src>)", name, tag)
				}
			}
		case ".js":
			rules = append(rules, js...)
		case ".css":
			rules = append(rules, css...)
		default:
			continue // the licence text
		}
		checked++
		for _, r := range rules {
			if r.what == "" {
				continue
			}
			for _, loc := range r.re.FindAllStringIndex(src, -1) {
				hit := src[loc[0]:loc[1]]
				if allowed(name, hit) {
					continue
				}
				line := strings.Count(src[:loc[0]], "\n") + 1
				t.Errorf("%s:%d: %s: %q", name, line, r.what, hit)
			}
		}
	}
	if checked < 8 {
		t.Errorf("checked %d files, want the console's HTML, CSS and JavaScript (at least 8)", checked)
	}
}

type rule struct {
	re   *regexp.Regexp
	what string
}

// allowed: uPlot's licence banner names its home page in a comment; it
// is not fetched.
func allowed(name, hit string) bool {
	return name == "vendor/uPlot.iife.min.js" && hit == "https://github.com"
}
