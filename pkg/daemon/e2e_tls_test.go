package daemon_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/internal/testcert"
	"github.com/netloadgen/netloadgen/pkg/daemon"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/sutproxy"
)

// tlsSpec is a short Server run of the identity model with a tls block.
func tlsSpec(target string, tls map[string]any) string {
	b, _ := json.Marshal(tls)
	return fmt.Sprintf(`{"target":%q,"model":"identity","scenario":"Server","tls":%s,"settings":{"target_qps":100,"min_duration_ms":300,"min_query_count":1,"target_latency_ms":100,"latency_percentile":0.99}}`, target, b)
}

// TestDaemonTLSRuns: runs with a tls block reach a server that requires
// client certificates over https:// and grpcs://, the certificate and key
// read from LOADGEND_SECRETS_DIR by reference; the stored spec keeps the
// references, result.json records the settings, and no file the API
// serves holds the key. Without the client certificate the run fails
// saying what to give; a reference leaving the directory is refused at
// submission naming the field, and so is any without a secrets directory.
func TestDaemonTLSRuns(t *testing.T) {
	ca := testcert.NewCA(t, "test-ca")
	srv := ca.Server(t, "server", "localhost")
	client := ca.Client(t, "client", "loadgen")
	secrets := t.TempDir()
	certName, keyName := client.WriteIn(t, secrets, "client")
	p, err := sutproxy.Start(t.Context(), sutproxy.Config{HTTPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0",
		TLSCert: srv.CertFile, TLSKey: srv.KeyFile, TLSClientCA: ca.File})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	_, httpPort, _ := net.SplitHostPort(p.HTTPAddr())
	_, grpcPort, _ := net.SplitHostPort(p.GRPCAddr())
	var dataDir string
	_, c := e2eService(t, func(cfg *daemon.Config) { cfg.SecretsDir, dataDir = secrets, cfg.DataDir })
	full := map[string]any{"ca_pem": string(ca.CertPEM), "client_cert": "@file:" + certName, "client_key": "@file:" + keyName}
	for _, target := range []string{"https://localhost:" + httpPort, "grpcs://localhost:" + grpcPort} {
		t.Run(target[:strings.Index(target, ":")], func(t *testing.T) {
			id := c.submit(t, tlsSpec(target, full))
			st := c.waitEnded(t, id, 30*time.Second)
			if st.State != api.StateDone {
				t.Fatalf("run %s: %s (%s)", id, st.State, st.Error)
			}
			code, b := c.do(t, http.MethodGet, "/v1/runs/"+id+"/files/result.json", "")
			var res loadgen.Result
			if code != http.StatusOK || json.Unmarshal(b, &res) != nil {
				t.Fatalf("result.json: %d %s", code, b)
			}
			if res.TLS == nil || !res.TLS.ClientCertificate || !res.TLS.CustomCA || res.TLS.ServerName != "localhost" || res.SamplesFailed != 0 {
				t.Errorf("result.json tls %+v, %d failed samples", res.TLS, res.SamplesFailed)
			}
			spec, err := os.ReadFile(filepath.Join(dataDir, "runs", id, "run.json"))
			if err != nil || !strings.Contains(string(spec), `"@file:client.key"`) {
				t.Errorf("run.json does not keep the reference (%v): %s", err, spec)
			}
			// Every file of the run, and the API's answer about it.
			files, _ := filepath.Glob(filepath.Join(dataDir, "runs", id, "*"))
			_, status := c.do(t, http.MethodGet, "/v1/runs/"+id, "")
			for _, f := range append(files, "status") {
				b := status
				if f != "status" {
					b, _ = os.ReadFile(f)
				}
				if strings.Contains(string(b), "PRIVATE KEY") || strings.Contains(string(b), string(client.KeyPEM[40:80])) {
					t.Errorf("%s holds the client key", f)
				}
			}
			if len(files) < 5 {
				t.Errorf("run files %q", files)
			}
		})
	}
	t.Run("no-client-cert", func(t *testing.T) {
		id := c.submit(t, tlsSpec("grpcs://localhost:"+grpcPort, map[string]any{"ca_pem": string(ca.CertPEM)}))
		st := c.waitEnded(t, id, 30*time.Second)
		if st.State != api.StateFailed || !strings.Contains(st.Error, "the server requires a client certificate: give --tls-cert and --tls-key") {
			t.Errorf("run %s: %s, %q: want failed, a client certificate required", id, st.State, st.Error)
		}
	})
	for _, ref := range []string{"@file:../" + certName, "@file:" + client.CertFile, "@file:nosuch.crt"} {
		spec := tlsSpec("https://localhost:"+httpPort, map[string]any{"client_cert": ref, "client_key": "@file:" + keyName})
		code, b := c.do(t, http.MethodPost, "/v1/runs", spec)
		if code != http.StatusBadRequest || errField(b) != "tls.client_cert" {
			t.Errorf("client_cert %s: %d %s, want 400 naming tls.client_cert", ref, code, b)
		}
	}
	// The probe takes the same tls block: the private CA and the client
	// certificate, which the server requires.
	t.Run("probe", func(t *testing.T) {
		for _, target := range []string{"https://localhost:" + httpPort, "grpcs://localhost:" + grpcPort} {
			body, _ := json.Marshal(map[string]any{"target": target, "model": "simple", "tls": full})
			code, b := c.do(t, http.MethodPost, "/v1/probe", string(body))
			var pr api.ProbeResponse
			if code != http.StatusOK || json.Unmarshal(b, &pr) != nil || pr.Error != "" || !pr.ModelReady {
				t.Errorf("probe %s with tls: %d %s", target, code, b)
			}
			body, _ = json.Marshal(map[string]any{"target": target, "model": "simple"})
			if _, b := c.do(t, http.MethodPost, "/v1/probe", string(body)); !strings.Contains(string(b), "--tls-ca") {
				t.Errorf("probe %s without tls: %s, want the unknown-authority advice", target, b)
			}
		}
	})
	_, bare := e2eService(t, nil)
	code, b := bare.do(t, http.MethodPost, "/v1/runs", tlsSpec("https://localhost:"+httpPort, full))
	if code != http.StatusBadRequest || !strings.Contains(string(b), "LOADGEND_SECRETS_DIR") || errField(b) != "tls.client_cert" {
		t.Errorf("without LOADGEND_SECRETS_DIR: %d %s, want 400 naming tls.client_cert and the variable", code, b)
	}
}

// errField is the field an error body names.
func errField(b []byte) string {
	var e api.ErrorBody
	_ = json.Unmarshal(b, &e)
	return e.Error.Field
}
