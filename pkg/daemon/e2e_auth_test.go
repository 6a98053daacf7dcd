package daemon_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/daemon"
)

// With LOADGEND_API_TOKEN set, every /v1 request without the right bearer
// token gets 401, whatever the route, method or path; with it, none does;
// /healthz, /readyz and /metrics stay open.
func TestE2EAuth(t *testing.T) {
	const token = "e2e-Secret-token-0123456789"
	target := e2eSUT(t)
	_, c := e2eService(t, func(cfg *daemon.Config) { cfg.APIToken = token })

	// A finished run, so the {id} routes reach their handlers.
	id := c.submit(t, serverSpec(target, 200, 300))
	if st := c.waitEnded(t, id, 30*time.Second); st.State != api.StateDone {
		t.Fatalf("run ended %s", st.State)
	}

	type call struct{ method, path, body string }
	var calls []call
	for _, r := range api.Routes {
		if !strings.HasPrefix(r.Path, "/v1/") {
			continue
		}
		path := strings.NewReplacer("{id}", id, "{name}", "result.json").Replace(r.Path)
		calls = append(calls, call{r.Method, path, "{}"})
	}
	// Paths and methods no route serves are refused before they are told
	// apart, so a caller without the token learns nothing of the API.
	calls = append(calls,
		call{http.MethodDelete, "/v1/runs/" + id, ""},
		call{http.MethodGet, "/v1/nothing-here", ""},
		call{http.MethodGet, "/v1/runs/no-such-run", ""},
		call{http.MethodGet, "/v1/runs/" + id + "/files/run.json", ""},
	)

	basic := base64.StdEncoding.EncodeToString([]byte("loadgend:" + token))
	refused := []struct {
		name   string
		header map[string]string
		query  string
	}{
		{"no header", nil, ""},
		{"wrong token", map[string]string{"Authorization": "Bearer wrong"}, ""},
		{"token with a suffix", map[string]string{"Authorization": "Bearer " + token + "x"}, ""},
		{"token prefix", map[string]string{"Authorization": "Bearer " + token[:len(token)-1]}, ""},
		{"token in other case", map[string]string{"Authorization": "Bearer " + strings.ToUpper(token)}, ""},
		{"empty bearer", map[string]string{"Authorization": "Bearer "}, ""},
		{"scheme only", map[string]string{"Authorization": "Bearer"}, ""},
		{"no scheme", map[string]string{"Authorization": token}, ""},
		{"basic scheme", map[string]string{"Authorization": "Basic " + basic}, ""},
		{"other header", map[string]string{"X-Api-Token": token}, ""},
		{"query parameter", nil, "access_token=" + token},
	}
	for _, rc := range refused {
		t.Run(rc.name, func(t *testing.T) {
			for _, cl := range calls {
				resp, body := rawCall(t, c.base, cl.method, cl.path, cl.body, rc.query, rc.header)
				if resp.StatusCode != http.StatusUnauthorized {
					t.Errorf("%s %s: %d %s, want 401", cl.method, cl.path, resp.StatusCode, body)
					continue
				}
				if !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") || !strings.Contains(body, api.CodeUnauthorized) {
					t.Errorf("%s %s: 401 with WWW-Authenticate %q and body %s", cl.method, cl.path, resp.Header.Get("WWW-Authenticate"), body)
				}
			}
		})
	}

	// The scheme name is case-insensitive (RFC 9110 §11.1); the token is not.
	for _, auth := range []string{"Bearer " + token, "bearer " + token, "BEARER " + token} {
		t.Run(auth[:6], func(t *testing.T) {
			for _, cl := range calls {
				resp, body := rawCall(t, c.base, cl.method, cl.path, cl.body, "", map[string]string{"Authorization": auth})
				if resp.StatusCode == http.StatusUnauthorized {
					t.Errorf("%s %s with the token: 401 %s", cl.method, cl.path, body)
				}
			}
		})
	}

	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		if resp, body := rawCall(t, c.base, http.MethodGet, path, "", "", nil); resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s without a token: %d %s, want 200", path, resp.StatusCode, body)
		}
	}
}

// rawCall sends one request with exactly the given headers.
func rawCall(t *testing.T, base, method, path, body, query string, header map[string]string) (*http.Response, string) {
	t.Helper()
	u := base + path
	if query != "" {
		u += "?" + query
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var sb strings.Builder
	buf := make([]byte, 4096)
	// The events route streams until the run's end (already past), so
	// reading to EOF is bounded.
	for {
		n, err := resp.Body.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp, sb.String()
}

// loadgend refuses to serve a non-loopback address without a token: exit
// status 2 and a message naming LOADGEND_LISTEN, before it listens.
func TestE2ERefusesOpenListenWithoutToken(t *testing.T) {
	bin := loadgendBinary(t)
	for _, listen := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.10:0", "sut.example:0"} {
		t.Run(listen, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin)
			cmd.Env = childEnv([]string{"LOADGEND_LISTEN=" + listen, "LOADGEND_DATA_DIR=" + t.TempDir(), "LOADGEND_API_TOKEN="})
			out, err := cmd.CombinedOutput()
			ee, ok := errors.AsType[*exec.ExitError](err)
			if !ok || ee.ExitCode() != 2 {
				t.Fatalf("loadgend with LOADGEND_LISTEN=%s and no token: %v, want exit status 2\n%s", listen, err, out)
			}
			if !strings.Contains(string(out), "LOADGEND_LISTEN") || !strings.Contains(string(out), "LOADGEND_API_TOKEN") {
				t.Errorf("message does not name LOADGEND_LISTEN and the way out: %s", out)
			}

			// In process too; and a token or LOADGEND_INSECURE lifts the
			// refusal (checked without listening anywhere but loopback).
			cfg := daemon.Config{Listen: listen, DataDir: t.TempDir(), MaxQPS: 1, MaxDuration: time.Minute, MaxInflight: 1, LogLevel: "info"}
			if _, err := daemon.New(cfg, nil); !errors.Is(err, daemon.ErrConfig) || !strings.Contains(err.Error(), "LOADGEND_LISTEN") {
				t.Errorf("daemon.New: %v, want ErrConfig naming LOADGEND_LISTEN", err)
			}
			withToken, insecure := cfg, cfg
			withToken.APIToken = "t"
			insecure.Insecure = true
			for _, ok := range []daemon.Config{withToken, insecure} {
				if err := ok.Validate(); err != nil {
					t.Errorf("token %q insecure %v: %v", ok.APIToken, ok.Insecure, err)
				}
			}
		})
	}
}
