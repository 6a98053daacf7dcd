package daemon

import (
	"mime"
	"net/http"

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
