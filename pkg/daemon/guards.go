package daemon

import (
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/netloadgen/netloadgen/api"
)

// jsonBody refuses a request body that is not application/json (parameters
// such as charset allowed) with 415, before the handler reads it. A web
// page can send text/plain, a form's encodings or an untyped body to any
// address without a CORS preflight; it cannot send application/json so.
// A request without a body and without a type (curl -X POST) passes.
func jsonBody(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ct := r.Header.Get("Content-Type")
		if ct == "" && r.ContentLength == 0 {
			h.ServeHTTP(w, r)
			return
		}
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			writeError(w, http.StatusUnsupportedMediaType, api.CodeUnsupportedMedia,
				"the request body must be Content-Type: application/json", "")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// hostGuard tells this daemon's own names from a web page's: what keeps
// a browser from driving a daemon it can reach (loopback, a private
// network). A page elsewhere sends its Origin; a page that rebound its DNS
// name to the daemon's address is same-origin to it, but sends its own name
// in Host. Names are compared, never resolved.
type hostGuard struct {
	port   string     // the port the API listens on
	listed *Allowlist // LOADGEND_ALLOWED_HOSTS
	// check is false when listening beyond loopback with no list: the
	// daemon does not know the names it is reached by, any Host goes and an
	// Origin must be the Host's own.
	check bool
}

func newHostGuard(listenHost, port string, listed *Allowlist) hostGuard {
	return hostGuard{port: port, listed: listed, check: isLoopbackHost(listenHost) || !listed.Empty()}
}

// names: a loopback name or IP at the listen port, or a listed host at any
// port.
func (g hostGuard) names(host, port string) bool {
	return isLoopbackHost(host) && port == g.port || g.listed.Lists(host)
}

// allowsHost checks a request's Host header.
func (g hostGuard) allowsHost(hostHeader string) bool {
	if !g.check {
		return true
	}
	host, port, ok := splitAuthority(hostHeader, "80")
	return ok && g.names(host, port)
}

// allowsOrigin checks an Origin header ("null" and anything but
// scheme://host[:port] are foreign).
func (g hostGuard) allowsOrigin(origin, hostHeader string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" {
		return false
	}
	def := map[string]string{"http": "80", "https": "443"}[u.Scheme]
	host, port, ok := splitAuthority(u.Host, def)
	if !ok || def == "" {
		return false
	}
	if g.check {
		return g.names(host, port)
	}
	selfHost, selfPort, ok := splitAuthority(hostHeader, def)
	return ok && host == selfHost && port == selfPort
}

// splitAuthority splits host[:port], lower-casing the host and taking
// defPort when there is no port.
func splitAuthority(a, defPort string) (host, port string, ok bool) {
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		host, port = a, defPort
		if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
			host = host[1 : len(host)-1]
		} else if strings.Contains(host, ":") {
			return "", "", false
		}
	}
	if host == "" || port == "" {
		return "", "", false
	}
	return strings.ToLower(host), port, true
}

// sameOrigin refuses, with 403, a request whose Host names another host,
// one sent by a web page elsewhere (its Origin), and CORS preflights:
// loadgend allows no cross-origin request, so it never sends an
// Access-Control-Allow-* header. Requests without an Origin (curl, scripts,
// Prometheus) pass when their Host does.
func sameOrigin(g hostGuard, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.allowsHost(r.Host) {
			writeError(w, http.StatusForbidden, api.CodeHostNotAllowed,
				fmt.Sprintf("Host %q is not a name of this loadgend (a loopback name at its port, or LOADGEND_ALLOWED_HOSTS)", r.Host), "")
			return
		}
		for _, o := range r.Header.Values("Origin") {
			if !g.allowsOrigin(o, r.Host) {
				writeError(w, http.StatusForbidden, api.CodeOriginNotAllowed,
					fmt.Sprintf("requests from web pages elsewhere (Origin %q) are refused", o), "")
				return
			}
		}
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			writeError(w, http.StatusForbidden, api.CodeOriginNotAllowed, "loadgend allows no cross-origin request: CORS preflights are refused", "")
			return
		}
		h.ServeHTTP(w, r)
	})
}
