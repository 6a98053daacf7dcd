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
