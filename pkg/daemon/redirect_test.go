package daemon_test

import (
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/internal/testtool"
	"github.com/netloadgen/netloadgen/pkg/daemon"
)

// TestRedirectDoesNotEscapeAllowedTargets: with LOADGEND_ALLOWED_TARGETS
// listing only localhost, a run (and POST /v1/probe) whose target answers
// with a 302 or 307 to 127.0.0.1 on another port, the run's Authorization
// set, fails with the redirect named; the Location, outside the allowed
// targets, hears nothing, and nothing it would have said is quoted.
func TestRedirectDoesNotEscapeAllowedTargets(t *testing.T) {
	const witnessSays = "model-only-the-witness-knows"
	wport, heard := rawHTTPPort(t, func(string) string {
		body := `{"object":"list","data":[{"id":"llm"},{"id":"` + witnessSays + `"}]}`
		return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	})
	loc := "http://127.0.0.1:" + wport + "/v1/models"
	_, c := e2eService(t, func(c *daemon.Config) { c.AllowedTargets = []string{"localhost"} })
	for _, status := range []string{"302 Found", "307 Temporary Redirect"} {
		t.Run(status, func(t *testing.T) {
			port, _ := rawHTTPPort(t, func(string) string {
				return "HTTP/1.1 " + status + "\r\nLocation: " + loc + "\r\nContent-Length: 0\r\n\r\n"
			})
			target := "http://localhost:" + port
			want := "the target redirects to " + loc + ": point --target there"
			for _, api := range []string{"openai-chat", ""} {
				spec := `{"target":"` + target + `","model":"llm","scenario":"SingleStream","headers":{"Authorization":"Bearer sk-run-secret"}`
				if api != "" {
					spec += `,"api":"` + api + `"`
				}
				st := c.waitEnded(t, c.submit(t, spec+"}"), 30*time.Second)
				if st.State != "failed" || !strings.Contains(st.Error, want) || strings.Contains(st.Error, witnessSays) {
					t.Errorf("api %q: run ended %s: %q, want failed with %q", api, st.State, st.Error, want)
				}
			}
			b, _ := json.Marshal(map[string]any{"target": target, "headers": map[string]string{"Authorization": "Bearer sk-run-secret"}})
			code, body := c.do(t, http.MethodPost, "/v1/probe", string(b))
			var out api.ProbeResponse
			if code != http.StatusOK || json.Unmarshal(body, &out) != nil || !strings.Contains(out.Error, "the target redirects to "+loc[:len(loc)-len("/v1/models")]) {
				t.Errorf("POST /v1/probe: %d %s: want the redirect named", code, body)
			}
			if n := heard.Load(); n != 0 {
				t.Errorf("the redirect's target, outside the allowed targets, got %d requests", n)
			}
		})
	}
}

// rawHTTPPort is testtool.RawHTTP's port alone: the tests name the host.
func rawHTTPPort(t *testing.T, answer func(requestLine string) string) (port string, requests *atomic.Int64) {
	addr, requests := testtool.RawHTTP(t, answer)
	_, port, _ = net.SplitHostPort(addr)
	return port, requests
}
