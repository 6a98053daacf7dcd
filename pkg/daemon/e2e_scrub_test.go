package daemon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/internal/testtool"
	"github.com/netloadgen/netloadgen/pkg/daemon"
	"github.com/netloadgen/netloadgen/pkg/secret"
)

// The credentials of the scrubbing test: bytes JSON encoders escape
// (/ + < > &) and base64 forms that differ by alphabet and padding.
const (
	scrubAuth   = "Bearer tok/3+9<x>Z&q=7"
	scrubKey    = "key+1/2<3>_Q-w9"
	scrubEnvVar = "NETLOADGEN_TEST_SCRUB_AUTH"
)

// TestE2EScrubsEchoedCredentials is issue 26 #2 against the real daemon: a
// run's headers given by @env: and @file:, a server whose 500s (to every
// inference) and 401s (to everything, the probe's requests too) repeat
// them verbatim, in base64 and JSON-escaped. No form of either value is in
// GET /v1/runs/{id}, GET /v1/runs, the event stream, POST /v1/probe's
// answer, any file served or under the data directory, or a slog line; the
// server's text is kept with the marker in their place.
func TestE2EScrubsEchoedCredentials(t *testing.T) {
	t.Setenv(scrubEnvVar, scrubAuth)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "key"), []byte(scrubKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	logs := &logLines{}
	cfg := daemon.Config{Listen: "127.0.0.1:0", DataDir: data, MaxQPS: 10000, MaxDuration: time.Hour, MaxInflight: 1024,
		LogLevel: "debug", DrainTimeout: 5 * time.Second, SecretEnv: []string{scrubEnvVar}, SecretsDir: dir}
	svc, err := daemon.New(cfg, slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		svc.Shutdown(ctx)
	})
	c := e2eClient{base: "http://" + svc.Addr()}
	headers := map[string]string{"Authorization": "@env:" + scrubEnvVar, "X-Api-Key": "@file:key"}
	seen := map[string]string{}
	get := func(path string) string {
		code, b := c.do(t, http.MethodGet, path, "")
		if code != http.StatusOK {
			t.Errorf("GET %s = %d %s", path, code, b)
		}
		seen["GET "+path] = string(b)
		return string(b)
	}
	// run submits a run against srv and follows its events to its end.
	run := func(srv *testtool.EchoServer) api.RunStatus {
		var spec api.RunSpec
		if err := json.Unmarshal([]byte(serverSpec("http://"+srv.Addr, 200, 300)), &spec); err != nil {
			t.Fatal(err)
		}
		spec.Model, spec.Headers = "m", headers
		b, err := json.Marshal(spec)
		if err != nil {
			t.Fatal(err)
		}
		id := c.submit(t, string(b))
		var events strings.Builder
		err = c.watch(t, id, 30*time.Second, func(event string, data []byte) bool {
			fmt.Fprintf(&events, "%s %s\n", event, data)
			var ev api.StateEvent
			return event == api.EventState && json.Unmarshal(data, &ev) == nil && ev.State.Terminal()
		})
		if err != nil {
			t.Fatal(err)
		}
		seen["events of "+id] = events.String()
		var st api.RunStatus
		if err := json.Unmarshal([]byte(get("/v1/runs/"+id)), &st); err != nil {
			t.Fatal(err)
		}
		return st
	}

	failing := run(testtool.StartEchoServer(t, 500, false, "Authorization", "X-Api-Key"))
	if failing.State != api.StateDone {
		t.Fatalf("the run against 500s ended %s: %s", failing.State, failing.Error)
	}
	res := get("/v1/runs/" + failing.ID + "/result")
	if !strings.Contains(res, "credentials rejected") || !strings.Contains(res, secret.Redacted) && !strings.Contains(res, `\u003credacted\u003e`) {
		t.Errorf("result: want the server's text with the marker:\n%s", res)
	}
	for _, f := range failing.Files {
		get("/v1/runs/" + failing.ID + "/files/" + f)
	}

	refusing := testtool.StartEchoServer(t, 401, true, "Authorization", "X-Api-Key")
	refused := run(refusing)
	if refused.State != api.StateFailed || !strings.Contains(refused.Error, "refused the credentials") || !strings.Contains(refused.Error, secret.Redacted) {
		t.Errorf("the run against 401s ended %s: %q: want failed, the server's text with the marker", refused.State, refused.Error)
	}
	get("/v1/runs")
	probe, _ := json.Marshal(api.ProbeRequest{Target: "http://" + refusing.Addr, Model: "m", Headers: headers})
	code, b := c.do(t, http.MethodPost, "/v1/probe", string(probe))
	var pr api.ProbeResponse
	if code != http.StatusOK || json.Unmarshal(b, &pr) != nil || !strings.Contains(pr.Error, "refused the credentials") || !strings.Contains(pr.Error, secret.Redacted) {
		t.Errorf("POST /v1/probe = %d %s: want the refusal, the server's text with the marker", code, b)
	}
	seen["POST /v1/probe"] = string(b)

	err = filepath.WalkDir(data, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		seen[path] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	seen["slog"] = logs.String()
	for where, text := range seen {
		for _, f := range append(testtool.SecretForms(scrubAuth), testtool.SecretForms(scrubKey)...) {
			if strings.Contains(text, f) {
				t.Errorf("%s holds %q", where, f)
				break
			}
		}
	}
}
