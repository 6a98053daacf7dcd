// Package console is loadgend's web console: static pages embedded in the
// binary (HTML, CSS, JavaScript and the vendored uPlot), served under /ui/.
// The pages use only the public API (/v1/...), with the bearer token the
// user gives them: whatever the console does, curl can do. Nothing is
// fetched from elsewhere at run time.
package console

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed static
var files embed.FS

// Prefix is where the console is served.
const Prefix = "/ui/"

// Security headers of every answer under /ui/: no inline script or style,
// no framing, nothing sniffed, no referrer sent with a link out.
const (
	CSP            = "default-src 'self'; base-uri 'none'; form-action 'none'; object-src 'none'; frame-ancestors 'none'"
	ReferrerPolicy = "no-referrer"
)

// pages are the console's page paths, each answered with the one HTML
// document (its script renders the page the path names). A run's page is
// /ui/runs/{id}, a link that can be shared.
func isPage(p string) bool {
	switch p {
	case Prefix, Prefix + "new", Prefix + "compare":
		return true
	}
	id, ok := strings.CutPrefix(p, Prefix+"runs/")
	return ok && id != "" && !strings.Contains(id, "/")
}

// Secure sets the console's security headers on every answer of next,
// before next runs: a guard in front of Handler (loadgend's Host/Origin
// check) answers its refusals under /ui/ with them too.
func Secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", ReferrerPolicy)
		h.Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r)
	})
}

// Handler serves the console: its pages, and its assets under
// /ui/assets/. GET and HEAD only. Every answer carries the security
// headers (Secure).
func Handler() http.Handler {
	static, _ := fs.Sub(files, "static")
	index, _ := fs.ReadFile(static, "index.html")
	return Secure(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", "no-cache")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "the console answers GET and HEAD only", http.StatusMethodNotAllowed)
			return
		}
		p := r.URL.Path
		if isPage(p) {
			h.Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(index)
			return
		}
		name, ok := strings.CutPrefix(p, Prefix+"assets/")
		if !ok || name == "" || name == "index.html" || path.Clean(name) != name || strings.HasPrefix(name, ".") {
			http.NotFound(w, r)
			return
		}
		b, err := fs.ReadFile(static, name)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		ct := types[path.Ext(name)]
		if ct == "" {
			ct = "text/plain; charset=utf-8"
		}
		h.Set("Content-Type", ct)
		_, _ = w.Write(b)
	}))
}

// types are the assets' Content-Types, fixed here rather than taken from
// the system's MIME tables (mime.TypeByExtension reads /etc/mime.types, and
// on Windows the registry, which can call .js text/plain): with nosniff a
// browser refuses a module script or stylesheet of the wrong type.
var types = map[string]string{
	".js":  "text/javascript; charset=utf-8",
	".css": "text/css; charset=utf-8",
	".svg": "image/svg+xml",
	".png": "image/png",
}

// Assets lists every file the console serves under /ui/assets/ with its
// size: the page weight test sums them.
func Assets() (map[string]int, error) {
	static, _ := fs.Sub(files, "static")
	out := map[string]int{}
	err := fs.WalkDir(static, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = int(info.Size())
		return nil
	})
	return out, err
}
