package main

import (
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/internal/testcert"
	"github.com/netloadgen/netloadgen/pkg/sutproxy"
	"github.com/netloadgen/netloadgen/pkg/sutproxy/sutproxytest"
)

// tlsProxy is a sutproxy serving TLS on both listeners with a certificate
// for localhost and 127.0.0.1 signed by ca; clientCA "" requires no client
// certificate.
func tlsProxy(t *testing.T, ca *testcert.CA, clientCA string) *sutproxy.Proxy {
	t.Helper()
	srv := ca.Server(t, "server", "localhost", "127.0.0.1")
	return sutproxytest.StartTLS(t, srv.CertFile, srv.KeyFile, clientCA, model2ms)
}

// tlsShortRun are the flags of a short SingleStream run.
var tlsShortRun = []string{"--model", "m", "--scenario", "SingleStream", "--min-duration-ms", "100", "--min-query-count", "10"}

// TestRunTLS: runs over https:// and grpcs:// reach a verdict in the Server
// and Offline scenarios, by IP and by name (the URL's host checked, or
// another name given with --tls-server-name), with a path prefix, and
// result.json records the TLS settings. HTTPS runs send with the HTTP
// event loop (its TLS layer) unless the pool is named; the gRPC event loop,
// which speaks plain text only, is refused by name.
func TestRunTLS(t *testing.T) {
	ca := testcert.NewCA(t, "test-ca")
	p := tlsProxy(t, ca, "")
	_, httpPort, _ := net.SplitHostPort(p.HTTPAddr())
	_, grpcPort, _ := net.SplitHostPort(p.GRPCAddr())
	server := []string{"--scenario", "Server", "--target-qps", "100", "--target-latency-ms", "100", "--min-duration-ms", "300", "--min-query-count", "20"}
	offline := []string{"--scenario", "Offline", "--target-qps", "400", "--min-duration-ms", "300", "--min-query-count", "100"}
	cases := []struct {
		name, target string
		args         []string
		serverName   string
	}{
		{"https/Server", "https://127.0.0.1:" + httpPort, server, "127.0.0.1"},
		{"https/Offline", "https://localhost:" + httpPort, offline, "localhost"},
		{"grpcs/Server", "grpcs://localhost:" + grpcPort, server, "localhost"},
		{"grpcs/Offline", "grpcs://127.0.0.1:" + grpcPort, append(offline, "--tls-server-name", "localhost"), "localhost"},
		// A Host header routes (HTTP Host, gRPC :authority) but is not the
		// name checked: the certificate is the target host's.
		{"https/Host header", "https://localhost:" + httpPort, append(server, "--header", "Host: m.default.example.com"), "localhost"},
		{"grpcs/Host header", "grpcs://localhost:" + grpcPort, append(server, "--header", "Host: m.default.example.com"), "localhost"},
		// Either HTTP client, named.
		{"https/loop", "https://127.0.0.1:" + httpPort, append(server, "--http-client", "loop"), "127.0.0.1"},
		{"https/pool", "https://127.0.0.1:" + httpPort, append(server, "--http-client", "pool"), "127.0.0.1"},
		// The simulated server serves under any prefix? No: the prefix
		// must reach it as /v2: sutproxy answers 404 under /prefix, so the
		// prefix test is in kserve/httpclient (TestTLSPrefix).
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			args := append([]string{"--target", c.target, "--model", "m", "--tls-ca", ca.File, "--out", dir, "--log-level", "info"}, c.args...)
			inv := runArgs(args...)
			res := completedRun(t, inv, dir)
			if res.SamplesFailed != 0 || res.SamplesCompleted == 0 {
				t.Errorf("%d samples completed, %d failed: %v", res.SamplesCompleted, res.SamplesFailed, res.Errors)
			}
			if res.TLS == nil || res.TLS.InsecureSkipVerify || !res.TLS.CustomCA || res.TLS.ClientCertificate || res.TLS.ServerName != c.serverName {
				t.Errorf("result.json tls %+v: want the CA, server name %s, no client certificate", res.TLS, c.serverName)
			}
			// The run's log names the client that sent: the HTTP event
			// loop over TLS, grpc-go for grpcs://.
			loop := strings.HasPrefix(c.target, "https") && !slices.Contains(c.args, "pool")
			if want := "http_loop=" + strconv.FormatBool(loop); !strings.Contains(inv.stderr, want) {
				t.Errorf("run log %q: want %s", inv.stderr, want)
			}
		})
	}
	t.Run("insecure", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "out")
		inv := runArgs(append([]string{"--target", "https://127.0.0.1:" + httpPort, "--tls-insecure", "--out", dir}, tlsShortRun...)...)
		res := completedRun(t, inv, dir)
		if res.TLS == nil || !res.TLS.InsecureSkipVerify {
			t.Errorf("result.json tls %+v: want insecure_skip_verify", res.TLS)
		}
		if !strings.Contains(inv.stderr, "not verified") || len(res.Warnings) == 0 || !strings.Contains(res.Warnings[len(res.Warnings)-1], "--tls-insecure") {
			t.Errorf("no warning: stderr %q, warnings %q", inv.stderr, res.Warnings)
		}
	})
	for _, c := range []struct{ target, flag, want string }{
		{"grpcs://127.0.0.1:" + grpcPort, "--grpc-client", "--grpc-client: \"loop\" speaks plain text only"},
	} {
		inv := runArgs(append([]string{"--target", c.target, "--tls-ca", ca.File, c.flag, "loop"}, tlsShortRun...)...)
		if inv.code != exitError || !strings.Contains(inv.stderr, c.want) {
			t.Errorf("%s %s loop: want exit 2 with %q: %v", c.target, c.flag, c.want, inv)
		}
	}
}

// TestRunTLSErrors: each TLS mistake exits 2 with one line saying what it
// is and what to do: an unknown authority, a certificate for another name,
// a handshake with a plain-text port, plain text to a TLS port, a client
// certificate missing where the server requires one, or refused.
func TestRunTLSErrors(t *testing.T) {
	ca := testcert.NewCA(t, "test-ca")
	other := testcert.NewCA(t, "other-ca")
	p := tlsProxy(t, ca, "")
	plain := sutproxytest.Start(t, model2ms)
	mtls := tlsProxy(t, ca, ca.File)
	client := ca.Client(t, "client", "loadgen")
	stranger := other.Client(t, "stranger", "loadgen")
	https := "https://" + p.HTTPAddr()
	grpcs := "grpcs://" + p.GRPCAddr()
	cases := []struct {
		name, target string
		args         []string
		want         string
	}{
		{"https/unknown-authority", https, nil, "certificate signed by an unknown authority (issuer test-ca): give --tls-ca FILE, or --tls-insecure"},
		{"grpcs/unknown-authority", grpcs, nil, "certificate signed by an unknown authority (issuer test-ca): give --tls-ca FILE, or --tls-insecure"},
		{"https/wrong-ca", https, []string{"--tls-ca", other.File}, "certificate signed by an unknown authority"},
		{"https/wrong-name", https, []string{"--tls-ca", ca.File, "--tls-server-name", "gw.example.com"}, "the server's certificate is for localhost, 127.0.0.1, not gw.example.com: give --tls-server-name NAME"},
		{"grpcs/wrong-name", grpcs, []string{"--tls-ca", ca.File, "--tls-server-name", "gw.example.com"}, "the server's certificate is for localhost, 127.0.0.1, not gw.example.com: give --tls-server-name NAME"},
		{"https-to-plain-port", "https://" + plain.HTTPAddr(), []string{"--tls-ca", ca.File}, "the port does not speak TLS (it answered the TLS handshake in plain text or closed): use http://" + plain.HTTPAddr()},
		{"grpcs-to-plain-port", "grpcs://" + plain.GRPCAddr(), []string{"--tls-ca", ca.File}, "the port does not speak TLS (it answered the TLS handshake in plain text or closed): use grpc://" + plain.GRPCAddr()},
		{"http-to-tls-port", "http://" + p.HTTPAddr(), nil, "the port speaks TLS: use https://" + p.HTTPAddr()},
		{"grpc-to-tls-port", "grpc://" + p.GRPCAddr(), nil, "the port speaks TLS: use grpcs://" + p.GRPCAddr()},
		{"https/no-client-cert", "https://" + mtls.HTTPAddr(), []string{"--tls-ca", ca.File}, "the server requires a client certificate: give --tls-cert and --tls-key"},
		{"grpcs/no-client-cert", "grpcs://" + mtls.GRPCAddr(), []string{"--tls-ca", ca.File}, "the server requires a client certificate: give --tls-cert and --tls-key"},
		{"https/refused-client-cert", "https://" + mtls.HTTPAddr(), []string{"--tls-ca", ca.File, "--tls-cert", stranger.CertFile, "--tls-key", stranger.KeyFile}, "the server refused the client certificate (--tls-cert)"},
		{"cert-without-key", "https://" + mtls.HTTPAddr(), []string{"--tls-cert", client.CertFile}, "--tls-cert and --tls-key go together"},
		{"key-without-cert", "https://" + mtls.HTTPAddr(), []string{"--tls-key", client.KeyFile}, "--tls-cert and --tls-key go together"},
		{"missing-ca-file", https, []string{"--tls-ca", filepath.Join(t.TempDir(), "nosuch.pem")}, "--tls-ca: open "},
		{"ca-not-pem", https, []string{"--tls-ca", client.KeyFile}, "--tls-ca: no CA certificate: no PEM certificate found"},
		{"key-not-the-certs", "https://" + mtls.HTTPAddr(), []string{"--tls-cert", client.CertFile, "--tls-key", stranger.KeyFile}, "--tls-cert: client certificate: tls: private key does not match public key"},
		{"tls-flags-plain-target", "http://" + plain.HTTPAddr(), []string{"--tls-insecure"}, "tls: the target is not https:// or grpcs://"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			inv := runArgs(append(append([]string{"--target", c.target, "--out", dir}, tlsShortRun...), c.args...)...)
			if inv.code != exitError {
				t.Fatalf("want exit 2: %v", inv)
			}
			line := strings.TrimSuffix(inv.stderr, "\n")
			t.Log(line)
			if strings.Contains(line, "\n") || !strings.HasPrefix(line, "loadgend run: ") || !strings.Contains(line, c.want) {
				t.Errorf("stderr %q: want one line containing %q", inv.stderr, c.want)
			}
			if strings.Contains(line, "PRIVATE KEY") {
				t.Errorf("stderr %q quotes a key", line)
			}
		})
	}
}

// TestRunMutualTLS: with a client certificate the CA signed, runs over
// https:// and grpcs:// to a server that requires one reach their verdict,
// and result.json says a client certificate was given.
func TestRunMutualTLS(t *testing.T) {
	ca := testcert.NewCA(t, "test-ca")
	p := tlsProxy(t, ca, ca.File)
	client := ca.Client(t, "client", "loadgen")
	for _, target := range []string{"https://" + p.HTTPAddr(), "grpcs://" + p.GRPCAddr()} {
		t.Run(target[:strings.Index(target, ":")], func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			inv := runArgs(append([]string{"--target", target, "--tls-ca", ca.File, "--tls-cert", client.CertFile, "--tls-key", client.KeyFile, "--out", dir}, tlsShortRun...)...)
			res := completedRun(t, inv, dir)
			if res.SamplesFailed != 0 || res.TLS == nil || !res.TLS.ClientCertificate {
				t.Errorf("%d failed samples, tls %+v: want none failed, a client certificate", res.SamplesFailed, res.TLS)
			}
		})
	}
}
