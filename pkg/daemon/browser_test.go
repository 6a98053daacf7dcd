package daemon

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/api"
)

// wantError checks an answer's status and its JSON error code.
func wantError(t *testing.T, what string, code int, b []byte, status int, errCode string) {
	t.Helper()
	var eb api.ErrorBody
	if code != status || json.Unmarshal(b, &eb) != nil || eb.Error.Code != errCode {
		t.Errorf("%s: %d %s, want %d %s", what, code, b, status, errCode)
	}
}

// wantNoRuns checks that nothing refused was queued.
func wantNoRuns(t *testing.T, base string) {
	t.Helper()
	if _, b := do(t, "GET", base+"/v1/runs", ""); !strings.Contains(string(b), `"runs": []`) {
		t.Errorf("a refused request queued a run: %s", b)
	}
}

// A body a browser can send cross-site without a preflight (text/plain,
// a form's two encodings, or no type at all) is refused with 415 before it
// is read: a web page cannot start a run. application/json, with or without
// parameters, is what the API takes; a POST without a body needs no type.
func TestRequestBodiesMustBeJSON(t *testing.T) {
	_, base := startDaemon(t, nil)
	// A valid spec: were it read, it would queue a run.
	body := spec("http://127.0.0.1:9", "")
	for _, ct := range []string{"text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
		"multipart/form-data; boundary=x", "", "application/jsonx", "json", "application/json-seq", "text/json"} {
		for _, path := range []string{"/v1/runs", "/v1/probe", "/v1/runs/some-run/cancel"} {
			code, b := do(t, "POST", base+path, body, "Content-Type", ct)
			wantError(t, "POST "+path+" Content-Type "+ct, code, b, http.StatusUnsupportedMediaType, api.CodeUnsupportedMedia)
		}
	}
	// A browser form posting to cancel sends its type with an empty body.
	code, b := do(t, "POST", base+"/v1/runs/some-run/cancel", "", "Content-Type", "text/plain")
	wantError(t, "cancel with text/plain and no body", code, b, http.StatusUnsupportedMediaType, api.CodeUnsupportedMedia)
	wantNoRuns(t, base)

	// JSON reaches the handlers: a bad spec is the decoder's 400.
	for _, ct := range []string{"application/json", "application/json; charset=utf-8", "Application/JSON;Charset=\"UTF-8\""} {
		code, b := do(t, "POST", base+"/v1/runs", `{"target":"http://127.0.0.1:9"}`, "Content-Type", ct)
		wantError(t, "POST /v1/runs Content-Type "+ct, code, b, http.StatusBadRequest, api.CodeInvalidRequest)
	}
	// curl -X POST with no data sends neither a body nor a type.
	code, b = do(t, "POST", base+"/v1/runs/some-run/cancel", "")
	wantError(t, "cancel without a body", code, b, http.StatusNotFound, api.CodeNotFound)
}

// What a web page can make a browser send to the default daemon (loopback,
// no token) is refused, and none of it queues a run: a cross-site form or
// fetch POST (its Origin foreign), the same after DNS rebinding (the page's
// own name in Host, so its Origin matches it), reads after rebinding, and
// CORS preflights, which are answered 403 without any Access-Control-Allow-*
// header. curl's requests (no Origin, Host the address it dialled) pass.
func TestCrossSiteRequestsRefused(t *testing.T) {
	_, base := startDaemon(t, nil)
	port := base[strings.LastIndex(base, ":")+1:]
	self := "127.0.0.1:" + port
	runSpec := spec("http://127.0.0.1:9", "")

	refused := []struct {
		name, method, path, body string
		header                   map[string]string
		code                     string
	}{
		{"form POST, enctype text/plain", "POST", "/v1/runs", runSpec, map[string]string{
			"Content-Type": "text/plain", "Origin": "https://evil.example",
			"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document",
		}, api.CodeOriginNotAllowed},
		{"fetch POST, no-cors string body", "POST", "/v1/runs", runSpec, map[string]string{
			"Content-Type": "text/plain;charset=UTF-8", "Origin": "https://evil.example",
			"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors",
		}, api.CodeOriginNotAllowed},
		{"fetch POST, untyped Blob body", "POST", "/v1/probe", `{"target":"http://127.0.0.1:9"}`, map[string]string{
			"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors",
		}, api.CodeOriginNotAllowed},
		{"form POST to cancel", "POST", "/v1/runs/r1/cancel", "", map[string]string{
			"Content-Type": "application/x-www-form-urlencoded", "Origin": "null",
		}, api.CodeOriginNotAllowed},
		{"a local web app on another port", "POST", "/v1/runs", runSpec, map[string]string{
			"Content-Type": "text/plain", "Origin": "http://localhost:3000", "Sec-Fetch-Site": "same-site",
		}, api.CodeOriginNotAllowed},
		{"EventSource from elsewhere", "GET", "/v1/runs/r1/events", "", map[string]string{
			"Accept": "text/event-stream", "Origin": "https://evil.example", "Sec-Fetch-Mode": "cors",
		}, api.CodeOriginNotAllowed},
		{"an origin whose name starts as ours", "GET", "/v1/runs", "", map[string]string{
			"Origin": "http://127.0.0.1." + port + ".evil.example:" + port,
		}, api.CodeOriginNotAllowed},
		{"rebound POST, same-origin JSON", "POST", "/v1/runs", runSpec, map[string]string{
			"Host": "evil.example:" + port, "Content-Type": "application/json", "Origin": "http://evil.example:" + port,
			"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors",
		}, api.CodeHostNotAllowed},
		{"rebound GET of the runs", "GET", "/v1/runs", "", map[string]string{
			"Host": "evil.example:" + port, "Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors",
		}, api.CodeHostNotAllowed},
		{"rebound GET of the metrics", "GET", "/metrics", "", map[string]string{"Host": "evil.example:" + port}, api.CodeHostNotAllowed},
		{"rebound GET of the version", "GET", "/v1/version", "", map[string]string{"Host": "evil.example:" + port}, api.CodeHostNotAllowed},
		{"rebound GET of no route", "GET", "/nothing", "", map[string]string{"Host": "evil.example:" + port}, api.CodeHostNotAllowed},
		{"rebinding a name to 127.0.0.1", "GET", "/v1/runs", "", map[string]string{"Host": "127.0.0.1.nip.io:" + port}, api.CodeHostNotAllowed},
		{"loopback name at another port", "GET", "/v1/runs", "", map[string]string{"Host": "localhost:1"}, api.CodeHostNotAllowed},
		{"loopback name without the port", "GET", "/v1/runs", "", map[string]string{"Host": "localhost"}, api.CodeHostNotAllowed},
		{"preflight of a JSON POST", "OPTIONS", "/v1/runs", "", map[string]string{
			"Origin": "https://evil.example", "Access-Control-Request-Method": "POST",
			"Access-Control-Request-Headers": "content-type", "Sec-Fetch-Mode": "cors",
		}, api.CodeOriginNotAllowed},
		{"preflight from our own other name", "OPTIONS", "/v1/runs", "", map[string]string{
			"Origin": "http://localhost:" + port, "Access-Control-Request-Method": "POST",
			"Access-Control-Request-Headers": "content-type,authorization",
		}, api.CodeOriginNotAllowed},
		{"preflight of a DELETE", "OPTIONS", "/v1/runs/r1", "", map[string]string{
			"Origin": "https://evil.example", "Access-Control-Request-Method": "DELETE",
		}, api.CodeOriginNotAllowed},
		{"preflight on an open path", "OPTIONS", "/healthz", "", map[string]string{
			"Origin": "https://evil.example", "Access-Control-Request-Method": "GET",
			"Access-Control-Request-Headers": "x-requested-with",
		}, api.CodeOriginNotAllowed},
	}
	for _, rc := range refused {
		t.Run(rc.name, func(t *testing.T) {
			resp, b := send(t, rc.method, base+rc.path, rc.body, rc.header)
			wantError(t, rc.method+" "+rc.path, resp.StatusCode, b, http.StatusForbidden, rc.code)
			for k := range resp.Header {
				if strings.HasPrefix(strings.ToLower(k), "access-control-") {
					t.Errorf("answer carries %s: %q", k, resp.Header.Get(k))
				}
			}
		})
	}
	wantNoRuns(t, base)

	allowed := []map[string]string{
		nil, // curl: Host as dialled, no Origin
		{"Host": "localhost:" + port},
		{"Host": "LocalHost:" + port},
		{"Host": "[::1]:" + port},
		{"Host": "127.0.0.2:" + port},
		{"Origin": "http://" + self},
		{"Origin": "http://localhost:" + port},
		{"Origin": "http://localhost:" + port, "Host": "localhost:" + port, "Sec-Fetch-Site": "same-origin"},
	}
	for _, h := range allowed {
		if resp, b := send(t, "GET", base+"/v1/runs", "", h); resp.StatusCode != http.StatusOK {
			t.Errorf("GET /v1/runs with %v: %d %s", h, resp.StatusCode, b)
		}
	}
	code, b := do(t, "POST", base+"/v1/runs", `{"target":"http://127.0.0.1:9"}`, "Origin", "http://"+self)
	wantError(t, "a same-origin JSON POST reaches the decoder", code, b, http.StatusBadRequest, api.CodeInvalidRequest)

	// The probes of an orchestrator (the kubelet sends the pod's IP, or
	// any name) tell nothing: they answer whatever the Host.
	for _, path := range []string{"/healthz", "/readyz"} {
		if resp, b := send(t, "GET", base+path, "", map[string]string{"Host": "evil.example:" + port}); resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s with a foreign Host: %d %s", path, resp.StatusCode, b)
		}
	}
}

// LOADGEND_ALLOWED_HOSTS adds names (exact or *.suffix), IPs and CIDRs at
// any port to the loopback names, and Origins naming them pass too; it
// resolves nothing, so a name pointing at an allowed address is still
// refused.
func TestAllowedHosts(t *testing.T) {
	_, base := startDaemon(t, func(c *Config) {
		c.AllowedHosts = []string{"loadgend.example", "*.lab.example", "10.0.0.0/8", "2001:db8::/32"}
	})
	port := base[strings.LastIndex(base, ":")+1:]
	for host, want := range map[string]int{
		"loadgend.example":         http.StatusOK,
		"LOADGEND.example:8443":    http.StatusOK,
		"gen.lab.example:80":       http.StatusOK,
		"10.1.2.3:" + port:         http.StatusOK,
		"[2001:db8::7]:80":         http.StatusOK,
		"localhost:" + port:        http.StatusOK,
		"lab.example":              http.StatusForbidden,
		"loadgend.example.evil.io": http.StatusForbidden,
		"11.0.0.1:" + port:         http.StatusForbidden,
		"localhost:1":              http.StatusForbidden,
		"evil.example:" + port:     http.StatusForbidden,
	} {
		if resp, b := send(t, "GET", base+"/v1/runs", "", map[string]string{"Host": host}); resp.StatusCode != want {
			t.Errorf("Host %s: %d %s, want %d", host, resp.StatusCode, b, want)
		}
	}
	for origin, want := range map[string]int{
		"https://loadgend.example":      http.StatusOK,
		"http://gen.lab.example:3000":   http.StatusOK,
		"http://localhost:" + port:      http.StatusOK,
		"https://evil.example":          http.StatusForbidden,
		"http://loadgend.example.evil":  http.StatusForbidden,
		"ftp://loadgend.example":        http.StatusForbidden,
		"http://loadgend.example/x":     http.StatusForbidden,
		"http://user@loadgend.example/": http.StatusForbidden,
	} {
		if resp, b := send(t, "GET", base+"/v1/runs", "", map[string]string{"Origin": origin}); resp.StatusCode != want {
			t.Errorf("Origin %s: %d %s, want %d", origin, resp.StatusCode, b, want)
		}
	}
}

// Listening beyond loopback (a token, or LOADGEND_INSECURE) with no
// LOADGEND_ALLOWED_HOSTS, loadgend cannot know its names: any Host goes,
// and an Origin must be the Host's own. Checked without listening there.
func TestHostGuardBeyondLoopback(t *testing.T) {
	none, _ := NewAllowlist(nil)
	g := newHostGuard("0.0.0.0", "8080", none)
	for _, host := range []string{"loadgend.netloadgen.svc:8080", "10.2.3.4:8080", "loadgend", "evil.example:8080"} {
		if !g.allowsHost(host) {
			t.Errorf("Host %s refused", host)
		}
	}
	for _, c := range []struct {
		origin, host string
		want         bool
	}{
		{"http://loadgend:8080", "loadgend:8080", true},
		{"http://loadgend.example", "loadgend.example", true},
		{"https://loadgend.example", "loadgend.example", true},
		{"https://loadgend.example", "loadgend.example:443", true},
		{"https://evil.example", "loadgend:8080", false},
		{"http://loadgend:3000", "loadgend:8080", false},
		{"null", "loadgend:8080", false},
	} {
		if got := g.allowsOrigin(c.origin, c.host); got != c.want {
			t.Errorf("Origin %s with Host %s: %v, want %v", c.origin, c.host, got, c.want)
		}
	}
	listed, _ := NewAllowlist([]string{"loadgend.example"})
	g = newHostGuard("0.0.0.0", "8080", listed)
	if g.allowsHost("evil.example:8080") || !g.allowsHost("loadgend.example:8080") || !g.allowsHost("127.0.0.1:8080") {
		t.Error("with LOADGEND_ALLOWED_HOSTS set, the Host check is not the list's and loopback's")
	}
}

// A method no route of a known path serves is 405 with an Allow header
// listing those that do (HEAD with GET, as the mux serves it) and the JSON
// error body; an unknown path is 404, JSON too.
func TestWrongMethod(t *testing.T) {
	_, base := startDaemon(t, nil)
	for _, c := range []struct{ method, path, allow string }{
		{"DELETE", "/v1/runs/r1", "GET, HEAD"},
		{"PUT", "/v1/runs", "GET, HEAD, POST"},
		{"PATCH", "/v1/runs", "GET, HEAD, POST"},
		{"GET", "/v1/probe", "POST"},
		{"GET", "/v1/runs/r1/cancel", "POST"},
		{"POST", "/v1/runs/r1/files/result.json", "GET, HEAD"},
		{"DELETE", "/v1/runs/r1/trials/1/files/result.json", "GET, HEAD"},
		{"POST", "/healthz", "GET, HEAD"},
		{"POST", "/metrics", "GET, HEAD"},
		{"OPTIONS", "/v1/version", "GET, HEAD"},
	} {
		resp, b := send(t, c.method, base+c.path, "", nil)
		wantError(t, c.method+" "+c.path, resp.StatusCode, b, http.StatusMethodNotAllowed, api.CodeMethodNotAllowed)
		if got := resp.Header.Get("Allow"); got != c.allow {
			t.Errorf("%s %s: Allow %q, want %q", c.method, c.path, got, c.allow)
		}
	}
	for _, p := range []string{"/v1/nothing", "/v1/runs/r1/other", "/nothing", "/v1/runs/r1/files"} {
		resp, b := send(t, "GET", base+p, "", nil)
		wantError(t, "GET "+p, resp.StatusCode, b, http.StatusNotFound, api.CodeNotFound)
	}
}
