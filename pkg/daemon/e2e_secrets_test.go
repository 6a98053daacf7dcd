package daemon_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/pkg/daemon"
	"github.com/netloadgen/netloadgen/pkg/sutproxy"
)

// The secrets of these tests: each must reach the endpoint and nothing else.
const (
	secretLiteral = "Bearer lit-SECRET-a1b2"
	secretEnv     = "env-SECRET-c3d4"
	secretFile    = "file-SECRET-e5f6"
	secretEnvVar  = "NETLOADGEN_TEST_SECRET"
)

// secretFront starts sutproxy's built-in models behind a front that wants
// all three secrets on every request (401 otherwise).
func secretFront(t *testing.T) string {
	t.Helper()
	p, err := sutproxy.Start(t.Context(), sutproxy.Config{HTTPAddr: "127.0.0.1:0", GRPCAddr: "off", RequireHeaders: []kserve.Header{
		{Name: "Authorization", Value: secretLiteral}, {Name: "X-Env-Key", Value: secretEnv}, {Name: "X-File-Key", Value: secretFile}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return "http://" + p.HTTPAddr()
}

// secretsDir is a LOADGEND_SECRETS_DIR holding the file secret as "key".
func secretsDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "key"), []byte(secretFile+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// headerSpec is a short Server run of identity with headers.
func headerSpec(t *testing.T, target string, headers map[string]string) string {
	t.Helper()
	var s api.RunSpec
	if err := json.Unmarshal([]byte(serverSpec(target, 200, 300)), &s); err != nil {
		t.Fatal(err)
	}
	s.Headers = headers
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestE2ESecretsNeverTouchDiskOrLogs is issue 19's acceptance test: a run
// whose headers carry secrets (a literal, an @env: and an @file: value)
// reaches an endpoint that wants all three, and then no file under the
// daemon's data directory (run.json, result.json, the LoadGen logs, ...),
// no API answer, no slog line and no metric holds any of them.
func TestE2ESecretsNeverTouchDiskOrLogs(t *testing.T) {
	target := secretFront(t)
	t.Setenv(secretEnvVar, secretEnv)
	data := t.TempDir()
	logs := &logLines{}
	cfg := daemon.Config{Listen: "127.0.0.1:0", DataDir: data, MaxQPS: 10000, MaxDuration: time.Hour, MaxInflight: 1024,
		LogLevel: "debug", DrainTimeout: 5 * time.Second, SecretEnv: []string{secretEnvVar}, SecretsDir: secretsDir(t)}
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
	var answers []string
	get := func(path string) {
		code, b := c.do(t, http.MethodGet, path, "")
		if code != http.StatusOK {
			t.Errorf("GET %s = %d %s", path, code, b)
		}
		answers = append(answers, string(b))
	}

	spec := headerSpec(t, target, map[string]string{"Authorization": secretLiteral, "X-Env-Key": "@env:" + secretEnvVar, "X-File-Key": "@file:key"})
	code, b := c.do(t, http.MethodPost, "/v1/runs", spec)
	answers = append(answers, string(b))
	var created api.RunCreated
	if code != http.StatusAccepted || json.Unmarshal(b, &created) != nil {
		t.Fatalf("POST /v1/runs = %d %s", code, b)
	}
	id := created.ID
	get("/v1/runs/" + id) // while queued or running
	st := c.waitEnded(t, id, 30*time.Second)
	if st.State != api.StateDone {
		t.Fatalf("run ended %s: %s %s", st.State, st.EndReason, st.Error)
	}
	get("/v1/runs/" + id)
	get("/v1/runs")
	probeBody, _ := json.Marshal(api.ProbeRequest{Target: target, Model: "identity", Headers: map[string]string{
		"Authorization": secretLiteral, "X-Env-Key": "@env:" + secretEnvVar, "X-File-Key": "@file:key"}})
	code, b = c.do(t, http.MethodPost, "/v1/probe", string(probeBody))
	if code != http.StatusOK || !strings.Contains(string(b), `"model_ready": true`) {
		t.Errorf("POST /v1/probe = %d %s", code, b)
	}
	answers = append(answers, string(b))
	get("/v1/runs/" + id + "/result")
	get("/metrics")
	for _, f := range st.Files {
		get("/v1/runs/" + id + "/files/" + f)
	}
	var res struct {
		SamplesCompleted int64    `json:"samples_completed"`
		SamplesFailed    int64    `json:"samples_failed"`
		Headers          []string `json:"headers"`
	}
	if err := json.Unmarshal([]byte(answers[len(answers)-2-len(st.Files)]), &res); err != nil {
		t.Fatal(err)
	}
	// The front answered every request: the secrets reached it.
	if res.SamplesCompleted == 0 || res.SamplesFailed != 0 {
		t.Fatalf("%d samples completed, %d failed", res.SamplesCompleted, res.SamplesFailed)
	}
	want := "Authorization: <redacted>|X-Env-Key: @env:" + secretEnvVar + "|X-File-Key: @file:key"
	if got := strings.Join(res.Headers, "|"); got != want {
		t.Errorf("result headers %q, want %q", got, want)
	}

	seen := map[string]string{"slog": logs.String()}
	for i, a := range answers {
		seen["API answer "+string(rune('0'+i))] = a
	}
	files := 0
	err = filepath.WalkDir(data, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		seen[path] = string(b)
		files++
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 6 {
		t.Errorf("walked %d files under the data directory", files)
	}
	for where, body := range seen {
		for _, s := range []string{secretLiteral, "lit-SECRET", secretEnv, secretFile} {
			if strings.Contains(body, s) {
				t.Errorf("%s holds the secret %q", where, s)
			}
		}
	}
	run := seen[filepath.Join(data, "runs", id, "run.json")]
	if !strings.Contains(run, `\u003credacted\u003e`) && !strings.Contains(run, "<redacted>") || !strings.Contains(run, "@env:"+secretEnvVar) {
		t.Errorf("run.json does not show the headers as shown:\n%s", run)
	}
}

// TestSecretReferencesRefused: a spec may read only the variables
// LOADGEND_SECRET_ENV names and only files under LOADGEND_SECRETS_DIR; each
// refusal is a 400 naming the field and what to set.
func TestSecretReferencesRefused(t *testing.T) {
	t.Setenv(secretEnvVar, secretEnv)
	t.Setenv("NETLOADGEN_TEST_OTHER", "other-SECRET")
	dir := secretsDir(t)
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.WriteFile(outside, []byte("outside-SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		edit      func(*daemon.Config)
		value     string
		wantField string
		want      []string
	}{
		{"env not listed", func(c *daemon.Config) { c.SecretEnv = []string{secretEnvVar} }, "@env:NETLOADGEN_TEST_OTHER", "headers",
			[]string{"X-Key", "@env:NETLOADGEN_TEST_OTHER", "LOADGEND_SECRET_ENV"}},
		{"env, none listed", nil, "@env:" + secretEnvVar, "headers", []string{"LOADGEND_SECRET_ENV"}},
		{"env listed, unset", func(c *daemon.Config) { c.SecretEnv = []string{"NETLOADGEN_TEST_UNSET"} }, "@env:NETLOADGEN_TEST_UNSET", "headers",
			[]string{"LOADGEND_SECRET_ENV", "not set"}},
		{"file, no dir", nil, "@file:" + filepath.Join(dir, "key"), "headers", []string{"LOADGEND_SECRETS_DIR", "not set"}},
		{"file outside", func(c *daemon.Config) { c.SecretsDir = dir }, "@file:" + outside, "headers", []string{"outside LOADGEND_SECRETS_DIR"}},
		{"file dot-dot", func(c *daemon.Config) { c.SecretsDir = dir }, "@file:../outside", "headers", []string{"outside LOADGEND_SECRETS_DIR"}},
		{"reserved name", nil, "x", "headers", nil},
	}
	target := e2eSUT(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, c := e2eService(t, tc.edit)
			name := "X-Key"
			if tc.name == "reserved name" {
				name = "Content-Length"
			}
			code, b := c.do(t, http.MethodPost, "/v1/runs", headerSpec(t, target, map[string]string{name: tc.value}))
			var eb api.ErrorBody
			if code != http.StatusBadRequest || json.Unmarshal(b, &eb) != nil || eb.Error.Field != tc.wantField {
				t.Fatalf("POST = %d %s, want 400 naming %s", code, b, tc.wantField)
			}
			for _, w := range tc.want {
				if !strings.Contains(eb.Error.Message, w) {
					t.Errorf("message %q does not say %q", eb.Error.Message, w)
				}
			}
			for _, v := range []string{"other-SECRET", "outside-SECRET", secretEnv, secretFile} {
				if strings.Contains(string(b), v) {
					t.Errorf("the answer shows a value: %s", b)
				}
			}
		})
	}
}

// TestLiteralHeaderLostAtRestart: a header value given literally lives only
// in the daemon's memory, so a run queued with one when loadgend restarts
// fails saying why and what to do; one given by reference runs.
func TestLiteralHeaderLostAtRestart(t *testing.T) {
	target := secretFront(t)
	t.Setenv(secretEnvVar, secretEnv)
	t.Setenv("NETLOADGEN_TEST_LITERAL", secretLiteral)
	data, dir := t.TempDir(), secretsDir(t)
	edit := func(c *daemon.Config) {
		c.DataDir, c.SecretsDir, c.SecretEnv = data, dir, []string{secretEnvVar, "NETLOADGEN_TEST_LITERAL"}
	}
	first, c := e2eService(t, edit)
	long := c.submit(t, serverSpec(e2eSUT(t), 100, 60000))
	literal := c.submit(t, headerSpec(t, target, map[string]string{"Authorization": secretLiteral, "X-Env-Key": "@env:" + secretEnvVar, "X-File-Key": "@file:key"}))
	byRef := c.submit(t, headerSpec(t, target, map[string]string{"Authorization": "@env:NETLOADGEN_TEST_LITERAL", "X-Env-Key": "@env:" + secretEnvVar, "X-File-Key": "@file:key"}))
	c.waitProgress(t, long, 30*time.Second, func(p api.Progress) bool { return p.Issued > 0 })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := first.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	_, c = e2eService(t, edit)
	st := c.waitEnded(t, literal, 30*time.Second)
	if st.State != api.StateFailed || !strings.Contains(st.Error, "Authorization was given literally") || !strings.Contains(st.Error, "@env:VAR") {
		t.Errorf("the run queued with a literal value ended %s: %q", st.State, st.Error)
	}
	if st := c.waitEnded(t, byRef, 30*time.Second); st.State != api.StateDone {
		t.Errorf("the run queued with references ended %s: %s", st.State, st.Error)
	}
}

// TestProbeWithHeaders: POST /v1/probe sends its headers on every request,
// resolved under the same rules as a run's; without them the refusal is
// named.
func TestProbeWithHeaders(t *testing.T) {
	target := secretFront(t)
	t.Setenv(secretEnvVar, secretEnv)
	t.Setenv("NETLOADGEN_TEST_LITERAL", secretLiteral)
	dir := secretsDir(t)
	_, c := e2eService(t, func(c *daemon.Config) { c.SecretsDir, c.SecretEnv = dir, []string{secretEnvVar} })
	model := "identity"
	probe := func(headers map[string]string) (int, api.ProbeResponse, string) {
		b, err := json.Marshal(api.ProbeRequest{Target: target, Model: model, Headers: headers})
		if err != nil {
			t.Fatal(err)
		}
		code, body := c.do(t, http.MethodPost, "/v1/probe", string(b))
		var out api.ProbeResponse
		_ = json.Unmarshal(body, &out)
		return code, out, string(body)
	}
	code, out, body := probe(map[string]string{"Authorization": secretLiteral, "X-Env-Key": "@env:" + secretEnvVar, "X-File-Key": "@file:key"})
	if code != http.StatusOK || out.Error != "" || !out.ModelReady || out.Inference == nil || !out.Inference.OK {
		t.Errorf("with the headers: %d %s", code, body)
	}
	if code, out, body = probe(nil); code != http.StatusOK || !strings.Contains(out.Error, "the endpoint refused the credentials: HTTP 401") {
		t.Errorf("without: %d %s", code, body)
	}
	model = "" // the server only
	if code, out, body = probe(nil); code != http.StatusOK || !strings.Contains(out.Error, "the endpoint refused the credentials: HTTP 401") {
		t.Errorf("without, no model: %d %s", code, body)
	}
	if code, _, body = probe(map[string]string{"Authorization": "@env:NETLOADGEN_TEST_LITERAL"}); code != http.StatusBadRequest ||
		!strings.Contains(body, "LOADGEND_SECRET_ENV") || strings.Contains(body, "lit-SECRET") {
		t.Errorf("a variable not listed: %d %s", code, body)
	}
}
