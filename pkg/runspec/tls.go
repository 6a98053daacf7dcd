package runspec

import (
	"crypto/tls"
	"errors"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/secret"
	"github.com/netloadgen/netloadgen/pkg/sut"
	"github.com/netloadgen/netloadgen/pkg/target"
	"github.com/netloadgen/netloadgen/pkg/tlsconf"
)

// buildTLS is the run's TLS client configuration, built once here for
// both clients and the probe: nil for a plain-text target, the defaults
// for a TLS target without a tls block. The client certificate and key are
// read from their @file: references now, into memory only.
func buildTLS(s api.RunSpec, env Env) (*tls.Config, error) {
	t, err := target.Parse(s.Target)
	if err != nil || !t.TLS() {
		return nil, nil // CheckFields refused a bad target, and tls with a plain one
	}
	if err := checkTLSClients(t, s); err != nil {
		return nil, err
	}
	var opts tlsconf.Options
	if c := s.TLS; c != nil {
		opts = tlsconf.Options{CAPEM: []byte(c.CAPEM), ServerName: c.ServerName, InsecureSkipVerify: c.InsecureSkipVerify}
		if c.ClientCert != "" {
			if opts.CertPEM, err = readSecret("tls.client_cert", c.ClientCert, env); err != nil {
				return nil, err
			}
			if opts.KeyPEM, err = readSecret("tls.client_key", c.ClientKey, env); err != nil {
				return nil, err
			}
		}
	}
	cfg, err := tlsconf.New(opts)
	switch {
	case errors.Is(err, tlsconf.ErrCA):
		return nil, fieldErr("tls.ca_pem", "%v", err)
	case errors.Is(err, tlsconf.ErrClientPair):
		return nil, fieldErr("tls.client_cert", "%v", err)
	case err != nil:
		return nil, fieldErr("tls", "%v", err)
	}
	return cfg, nil
}

// readSecret reads a client certificate or key from its @file:
// reference: under the daemon's LOADGEND_SECRETS_DIR, or any file (the
// CLI).
func readSecret(field, ref string, env Env) ([]byte, error) {
	if env.NoSecretFiles {
		return nil, fieldErr(field, "this daemon reads no client certificates: it has no LOADGEND_SECRETS_DIR (set it to the directory of the certificates and keys)")
	}
	v, err := secret.Resolve(ref, env.Secrets)
	if err != nil {
		return nil, fieldErr(field, "%v", err)
	}
	return []byte(v), nil
}

// checkTLSClients refuses the gRPC event-loop client named for a grpcs://
// target: it speaks plain text only. (The HTTP loop speaks TLS.)
func checkTLSClients(t target.Target, s api.RunSpec) error {
	if t.GRPC() && sut.CheckTLS(true, "", s.GRPCClient) != nil {
		return fieldErr("grpc_client", "%q speaks plain text only: a grpcs:// target uses %q (leave it out)", s.GRPCClient, sut.GRPCClientGRPC)
	}
	return nil
}
