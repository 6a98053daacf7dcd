package tlsconf

import (
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/internal/testcert"
)

// TestNew: the configuration is TLS 1.2 at least, trusts the CA given on
// top of the system's roots, carries the client pair, and refuses what is
// not PEM or not a pair, saying which, without quoting a key.
func TestNew(t *testing.T) {
	ca := testcert.NewCA(t, "test-ca")
	cl := ca.Client(t, "client", "loadgen")
	other := ca.Client(t, "other", "loadgen")
	cfg, err := New(Options{CAPEM: ca.CertPEM, ServerName: "gw", CertPEM: cl.CertPEM, KeyPEM: cl.KeyPEM})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MinVersion != tls.VersionTLS12 || cfg.ServerName != "gw" || cfg.RootCAs == nil || len(cfg.Certificates) != 1 || cfg.InsecureSkipVerify {
		t.Errorf("config %+v", cfg)
	}
	if s := Summarize(cfg, "host"); *s != (Summary{ServerName: "gw", CustomCA: true, ClientCertificate: true}) {
		t.Errorf("summary %+v", s)
	}
	if d, err := New(Options{}); err != nil || d.RootCAs != nil || Summarize(d, "host").ServerName != "host" {
		t.Errorf("defaults: %+v, %v", d, err)
	}
	for _, c := range []struct {
		opts Options
		want error
	}{
		{Options{CAPEM: []byte("not pem")}, ErrCA},
		{Options{CAPEM: cl.KeyPEM}, ErrCA},
		{Options{CertPEM: cl.CertPEM}, ErrClientPair},
		{Options{KeyPEM: cl.KeyPEM}, ErrClientPair},
		{Options{CertPEM: cl.CertPEM, KeyPEM: other.KeyPEM}, ErrClientPair},
	} {
		_, err := New(c.opts)
		if !errors.Is(err, c.want) {
			t.Errorf("%v, want %v", err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "PRIVATE KEY") {
			t.Errorf("%v quotes a key", err)
		}
	}
}

// TestExplain: TLS failures as the clients report them, typed or as
// grpc-go's text, get their advice; other errors none.
func TestExplain(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("wrapped: %w", tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}), NotTLS},
		{fmt.Errorf("wrapped: %w", tls.AlertError(116)), ClientCertRequired},
		{errors.New(`rpc error: code = Unavailable desc = connection error: desc = "transport: authentication handshake failed: tls: failed to verify certificate: x509: certificate signed by unknown authority"`), "give --tls-ca FILE, or --tls-insecure"},
		{errors.New(`desc = "transport: authentication handshake failed: tls: failed to verify certificate: x509: certificate is valid for localhost, not gw"`), "certificate is valid for localhost, not gw): give --tls-server-name NAME"},
		{errors.New("error reading server preface: remote error: tls: certificate required"), ClientCertRequired},
		{errors.New("connection refused"), ""},
		{nil, ""},
	} {
		if got := Explain(c.err); (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("Explain(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
