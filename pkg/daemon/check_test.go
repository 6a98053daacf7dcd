package daemon

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
)

// POST /v1/runs/check answers the spec as POST /v1/runs would store it
// and its command line; it queues nothing and connects to nothing.
func TestCheckRun(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	t.Setenv("NETLOADGEN_TEST_CHECKREF", "env-s3cr3t")
	_, base := startDaemon(t, func(c *Config) { c.SecretEnv = []string{"NETLOADGEN_TEST_CHECKREF"} })
	body := `{"target": "http://` + ln.Addr().String() + `", "model": "identity",
	  "headers": {"Authorization": "Bearer s3cr3t-value", "X-Ref": "@env:NETLOADGEN_TEST_CHECKREF"},
	  "settings": {"target_qps": 100, "min_duration_ms": 2000, "server_target_latency_ns": 50000000}}`
	code, b := do(t, "POST", base+"/v1/runs/check", body)
	var c api.RunCheck
	if code != http.StatusOK || json.Unmarshal(b, &c) != nil {
		t.Fatalf("POST /v1/runs/check = %d %s", code, b)
	}
	if strings.Contains(string(b), "s3cr3t") {
		t.Errorf("the answer holds a header's literal value: %s", b)
	}
	if c.Spec.Scenario != api.DefaultScenario || c.Spec.Headers["Authorization"] != "<redacted>" || c.Spec.Headers["X-Ref"] != "@env:NETLOADGEN_TEST_CHECKREF" {
		t.Errorf("spec %+v, want the default scenario written in and the headers as shown", c.Spec)
	}
	want := []string{"loadgend", "run", "--target", "http://" + ln.Addr().String(), "--model", "identity", "--scenario", "Server",
		"--target-qps", "100", "--min-duration-ms", "2000", "--header", "X-Ref: @env:NETLOADGEN_TEST_CHECKREF"}
	if !slices.Equal(c.CommandLine, want) {
		t.Errorf("command_line %q, want %q", c.CommandLine, want)
	}
	if c.Command != "loadgend run --target http://"+ln.Addr().String()+" --model identity --scenario Server --target-qps 100 --min-duration-ms 2000 --header 'X-Ref: @env:NETLOADGEN_TEST_CHECKREF'" {
		t.Errorf("command %s", c.Command)
	}
	if !slices.Equal(c.NotExpressible, []string{"headers.Authorization", "settings.server_target_latency_ns"}) {
		t.Errorf("not_expressible %v", c.NotExpressible)
	}
	wantNoRuns(t, base)
	// Whatever the handler dialled would wait in the backlog: nothing does.
	if err := ln.(*net.TCPListener).SetDeadline(time.Now()); err != nil {
		t.Fatal(err)
	}
	if conn, err := ln.Accept(); !errors.Is(err, os.ErrDeadlineExceeded) {
		if conn != nil {
			conn.Close()
		}
		t.Errorf("the check connected to the target (accept: %v)", err)
	}
	// An exact spec says so with an empty list, not null.
	code, b = do(t, "POST", base+"/v1/runs/check", spec("http://127.0.0.1:9", ""))
	if code != http.StatusOK || !strings.Contains(string(b), `"not_expressible": []`) {
		t.Errorf("an exact spec: %d %s", code, b)
	}
}

// Every refusal of POST /v1/runs is POST /v1/runs/check's, answer for
// answer (one code path): bad fields, hostile bodies, the data root, the
// secrets, the allowlist, the media type, a foreign origin; and neither
// queues anything.
func TestCheckRefusesAsCreate(t *testing.T) {
	root := t.TempDir()
	_, base := startDaemon(t, func(c *Config) {
		c.AllowedTargets = []string{"127.0.0.1"}
		c.DataRoot = root
	})
	good := spec("http://127.0.0.1:9", "")
	cases := []struct {
		name, body string
		header     []string
		status     int
		field      string
	}{
		{"a bad setting", spec("http://127.0.0.1:9", `,"max_duration_ms":-1`), nil, 400, ""},
		{"a negative rate", `{"target":"http://127.0.0.1:9","model":"m","settings":{"target_qps":-5}}`, nil, 400, "settings.target_qps"},
		{"no target", `{"model":"m"}`, nil, 400, "target"},
		{"an unknown field", `{"target":"http://127.0.0.1:9","model":"m","colour":"red"}`, nil, 400, "colour"},
		{"a wrong type", `{"target":"http://127.0.0.1:9","model":7}`, nil, 400, "model"},
		{"empty", ``, nil, 400, ""},
		{"truncated", good[:len(good)/2], nil, 400, ""},
		{"two objects", good + good, nil, 400, ""},
		{"not an object", `[1,2,3]`, nil, 400, ""},
		{"oversized", `{"target":"http://127.0.0.1:9","model":"` + strings.Repeat("m", 2<<20) + `"}`, nil, 413, ""},
		{"data outside the root", `{"target":"http://127.0.0.1:9","model":"m","data":"/etc/passwd"}`, nil, 400, "data"},
		{"a secret not allowed", `{"target":"http://127.0.0.1:9","model":"m","headers":{"X-Key":"@env:HOME"}}`, nil, 400, "headers"},
		{"a target outside the allowlist", `{"target":"http://10.9.8.7:1","model":"m"}`, nil, 403, "target"},
		{"text/plain", good, []string{"Content-Type", "text/plain"}, 415, ""},
		{"no type", good, []string{"Content-Type", ""}, 415, ""},
		{"a foreign origin", good, []string{"Origin", "https://evil.example"}, 403, ""},
	}
	for _, c := range cases {
		createCode, createBody := do(t, "POST", base+"/v1/runs", c.body, c.header...)
		code, b := do(t, "POST", base+"/v1/runs/check", c.body, c.header...)
		var eb api.ErrorBody
		if code != c.status || json.Unmarshal(b, &eb) != nil || (c.field != "" && eb.Error.Field != c.field) {
			t.Errorf("%s: check %d %.300s, want %d on %q", c.name, code, b, c.status, c.field)
		}
		if code != createCode || string(b) != string(createBody) {
			t.Errorf("%s: check %d %.300s; POST /v1/runs %d %.300s", c.name, code, b, createCode, createBody)
		}
	}
	wantNoRuns(t, base)
}

// With a token, the check is the API's: refused without it.
func TestCheckNeedsTheToken(t *testing.T) {
	_, base := startDaemon(t, func(c *Config) { c.APIToken = "tok-" + strings.Repeat("x", 32) })
	code, b := do(t, "POST", base+"/v1/runs/check", spec("http://127.0.0.1:9", ""))
	wantError(t, "check without the token", code, b, http.StatusUnauthorized, api.CodeUnauthorized)
	code, b = do(t, "POST", base+"/v1/runs/check", spec("http://127.0.0.1:9", ""), "Authorization", "Bearer tok-"+strings.Repeat("x", 32))
	if code != http.StatusOK {
		t.Errorf("check with the token: %d %s", code, b)
	}
}
