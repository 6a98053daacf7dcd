package daemon_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/daemon"
	"github.com/netloadgen/netloadgen/pkg/version"
)

// TestWorkerRoutes drives the worker routes as a worker would, and as a
// hostile one.
func TestWorkerRoutes(t *testing.T) {
	svc, c := e2eService(t, func(cfg *daemon.Config) { cfg.APIToken = "worker-routes-token" })
	// No token: 401 before anything.
	anon := c
	anon.token = ""
	if code, _ := anon.do(t, "GET", "/v1/workers", ""); code != http.StatusUnauthorized {
		t.Errorf("list without the token: %d", code)
	}
	code, body := c.do(t, "POST", "/v1/workers", `{"name":"w-1","version":"`+version.String()+`","address":"127.0.0.1:9"}`)
	var reg api.WorkerRegistered
	if code != http.StatusCreated || json.Unmarshal(body, &reg) != nil || reg.Session == "" || reg.HeartbeatIntervalMs != 750 {
		t.Fatalf("register: %d %s", code, body)
	}
	for _, tc := range []struct {
		name, body string
		code       int
		want       string
	}{
		{"version", `{"name":"w-2","version":"v0.0.1"}`, 409, `"code": "version_mismatch"`},
		{"taken", `{"name":"w-1","version":"` + version.String() + `"}`, 409, `"code": "name_taken"`},
		{"unknown field", `{"name":"w-2","version":"x","role":"admin"}`, 400, `"field": "role"`},
		{"bad name", `{"name":"../etc","version":"x"}`, 400, `"field": "name"`},
		{"upper case", `{"name":"W","version":"x"}`, 400, `"field": "name"`},
		{"empty", ``, 400, `empty body`},
		{"not an object", `["w"]`, 400, `JSON object`},
		{"oversized", `{"name":"w-2","version":"` + strings.Repeat("x", 2<<20) + `"}`, 413, `body_too_large`},
	} {
		code, body := c.do(t, "POST", "/v1/workers", tc.body)
		if code != tc.code || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s: %d %s, want %d with %s", tc.name, code, body, tc.code, tc.want)
		}
	}
	// The version refusal names both versions.
	_, body = c.do(t, "POST", "/v1/workers", `{"name":"w-2","version":"v0.0.1"}`)
	if !strings.Contains(string(body), "v0.0.1") || !strings.Contains(string(body), version.String()) {
		t.Errorf("version refusal: %s", body)
	}
	beat := func(name, session, body string) (int, struct{}) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), "POST", c.base+"/v1/workers/"+name+"/heartbeat", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+c.token)
		req.Header.Set(api.WorkerSessionHeader, session)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, struct{}{}
	}
	if code, _ := beat("w-1", reg.Session, ""); code != http.StatusOK {
		t.Errorf("heartbeat: %d", code)
	}
	if code, _ := beat("w-1", reg.Session, `{"run_id":"r","bogus":1}`); code != http.StatusBadRequest {
		t.Errorf("heartbeat with an unknown field: %d", code)
	}
	if code, _ := beat("nobody", reg.Session, ""); code != http.StatusNotFound {
		t.Errorf("heartbeat of an unknown worker: %d", code)
	}
	if code, _ := beat("w-1", "stale-session", ""); code != http.StatusNotFound {
		t.Errorf("heartbeat of another session: %d", code)
	}
	// An unknown worker is told to register again.
	code, body = c.do(t, "GET", "/v1/workers/ghost/work?wait_ms=0", "")
	if code != http.StatusNotFound || !strings.Contains(string(body), "register again") {
		t.Errorf("poll of an unknown worker: %d %s", code, body)
	}
	code, body = c.do(t, "GET", "/v1/workers/w-1/work?wait_ms=-1", "")
	if code != http.StatusBadRequest || !strings.Contains(string(body), "wait_ms") {
		t.Errorf("negative wait: %d %s", code, body)
	}
	// The list shows it.
	code, body = c.do(t, "GET", "/v1/workers", "")
	var list api.WorkerList
	if code != 200 || json.Unmarshal(body, &list) != nil || len(list.Workers) != 1 {
		t.Fatalf("list: %d %s", code, body)
	}
	if w := list.Workers[0]; w.Name != "w-1" || w.State != api.WorkerIdle || w.Address != "127.0.0.1:9" || w.Version != version.String() || w.ClockOffsetNs != nil {
		t.Errorf("listed %+v", w)
	}
	if strings.Contains(string(body), reg.Session) {
		t.Error("the list shows a worker's session")
	}
	// A long poll answers 204 by its wait, and a pick's assignment reaches
	// it.
	poll := func() (int, []byte) {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", c.base+"/v1/workers/w-1/work?wait_ms=20000", nil)
		req.Header.Set("Authorization", "Bearer "+c.token)
		req.Header.Set(api.WorkerSessionHeader, reg.Session)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var a api.WorkerAssignment
		_ = json.NewDecoder(resp.Body).Decode(&a)
		b, _ := json.Marshal(a)
		return resp.StatusCode, b
	}
	crew, err := svc.Workers().Pick(context.Background(), daemon.PickRequest{RunID: "r-1", N: 1, Wait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := crew.Assign("w-1", api.WorkerAssignment{RunID: "r-1", Spec: json.RawMessage(`{"target":"http://x"}`), Shards: 1, StartNs: 7}); err != nil {
		t.Fatal(err)
	}
	if code, b := poll(); code != 200 || !strings.Contains(string(b), `"run_id":"r-1"`) || !strings.Contains(string(b), `"start_ns":7`) {
		t.Errorf("poll: %d %s", code, b)
	}
	code, body = c.do(t, "GET", "/v1/workers", "")
	if code != 200 || !strings.Contains(string(body), `"state": "busy"`) || !strings.Contains(string(body), `"run_id": "r-1"`) {
		t.Errorf("list while busy: %s", body)
	}
	crew.Release()
}
