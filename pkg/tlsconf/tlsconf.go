// Package tlsconf builds a run's TLS client configuration from what the user
// gave (a CA, a server name, a client certificate, no verification), once
// per run, and explains TLS failures in words a user can act on. Both
// clients (kserve/httpclient, kserve/grpcclient) and the runner's probe use
// the one configuration it builds.
package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Options are the TLS settings of a run. The PEM contents are held in
// memory only: they are read from the files (or references) at run start
// and never stored.
type Options struct {
	// CAPEM are certificates trusted in addition to the system's roots.
	CAPEM []byte
	// ServerName is sent in SNI and checked against the certificate,
	// whatever the target's host ("": the target's host).
	ServerName string
	// InsecureSkipVerify checks nothing of the server's certificate.
	InsecureSkipVerify bool
	// CertPEM and KeyPEM are the client certificate and its key (mutual
	// TLS), both or neither.
	CertPEM, KeyPEM []byte
}

// Field errors name these, so the CLI and the API can each say which of
// their inputs was wrong.
var (
	ErrCA         = errors.New("no CA certificate")
	ErrClientPair = errors.New("client certificate")
)

// New is the client configuration of opts: TLS 1.2 or 1.3, the system's
// roots plus opts.CAPEM. No session cache: a client that offers no
// resumption gets no session tickets, so an idle pooled connection holds
// no bytes it did not ask for (kserve/httpclient looks at the socket
// before reusing it).
func New(opts Options) (*tls.Config, error) {
	cfg := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         opts.ServerName,
		InsecureSkipVerify: opts.InsecureSkipVerify,
	}
	if len(opts.CAPEM) > 0 {
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(opts.CAPEM) {
			return nil, fmt.Errorf("%w: no PEM certificate found", ErrCA)
		}
		cfg.RootCAs = pool
	}
	if (len(opts.CertPEM) > 0) != (len(opts.KeyPEM) > 0) {
		return nil, fmt.Errorf("%w: a certificate and its key go together", ErrClientPair)
	}
	if len(opts.CertPEM) > 0 {
		pair, err := tls.X509KeyPair(opts.CertPEM, opts.KeyPEM)
		if err != nil {
			// The error names what failed to parse, never the key.
			return nil, fmt.Errorf("%w: %v", ErrClientPair, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// ForGRPC is cfg for a gRPC connection: HTTP/2 by ALPN.
func ForGRPC(cfg *tls.Config) *tls.Config {
	c := cfg.Clone()
	c.NextProtos = []string{"h2"}
	return c
}

// ForHTTP is cfg for an HTTP/1.1 connection.
func ForHTTP(cfg *tls.Config) *tls.Config {
	c := cfg.Clone()
	c.NextProtos = []string{"http/1.1"}
	return c
}

// Summary is what result.json records of a run's TLS: settings, never
// certificates or keys.
type Summary struct {
	InsecureSkipVerify bool   `json:"insecure_skip_verify"`
	ServerName         string `json:"server_name,omitempty"`
	CustomCA           bool   `json:"custom_ca"`
	ClientCertificate  bool   `json:"client_certificate"`
}

// Summarize is cfg's Summary; serverName is the name checked (the
// configured one, else the target's host).
func Summarize(cfg *tls.Config, serverName string) *Summary {
	if cfg == nil {
		return nil
	}
	if cfg.ServerName != "" {
		serverName = cfg.ServerName
	}
	return &Summary{InsecureSkipVerify: cfg.InsecureSkipVerify, ServerName: serverName,
		CustomCA: cfg.RootCAs != nil, ClientCertificate: len(cfg.Certificates) > 0 || cfg.GetClientCertificate != nil}
}

// certAlerts are the alerts a server sends when it wants a client
// certificate it did not get (TLS 1.2: bad_certificate during the
// handshake; TLS 1.3: certificate_required, after the client thinks the
// handshake is done), or refuses the one it got (bad, unsupported,
// revoked, expired, unknown, unknown_ca).
var certAlerts = map[tls.AlertError]bool{42: true, 43: true, 44: true, 45: true, 46: true, 48: true, 116: true}

// Explain is what to do about a TLS failure err, or "" when err is not one
// this package recognises. Errors the clients return as text only (grpc-go's)
// are recognised by their wording.
func Explain(err error) string {
	if err == nil {
		return ""
	}
	if ua, ok := errors.AsType[x509.UnknownAuthorityError](err); ok {
		return unknownAuthority(ua.Cert)
	}
	if he, ok := errors.AsType[x509.HostnameError](err); ok {
		return nameMismatch(he.Certificate, he.Host)
	}
	if _, ok := errors.AsType[tls.RecordHeaderError](err); ok {
		return NotTLS
	}
	if ae, ok := errors.AsType[tls.AlertError](err); ok && certAlerts[ae] {
		return ClientCertRequired
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "certificate signed by unknown authority"):
		return unknownAuthority(nil)
	case strings.Contains(msg, "certificate is valid for") || strings.Contains(msg, "certificate is not valid for any names"):
		return "the server's certificate does not name the host (" + tail(msg, "x509: ") + "): give --tls-server-name NAME with a name it has"
	case strings.Contains(msg, "first record does not look like a TLS handshake"):
		return NotTLS
	case strings.Contains(msg, "tls: certificate required") || strings.Contains(msg, "tls: bad certificate") || strings.Contains(msg, "tls: unknown certificate authority"):
		return ClientCertRequired
	}
	return ""
}

// The messages Explain gives, for tests and callers that match them.
const (
	NotTLS             = "the port does not speak TLS (it answered the TLS handshake in plain text): use http:// or grpc://"
	ClientCertRequired = "the server requires a client certificate: give --tls-cert and --tls-key"
)

// HandshakeEOF is Explain for a handshake the server ended without a word:
// a plain-text server that closed on bytes it could not read.
func HandshakeEOF(err error) string {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "the server closed the connection during the TLS handshake: it may not speak TLS (use http:// or grpc://)"
	}
	return ""
}

func unknownAuthority(cert *x509.Certificate) string {
	by := ""
	if cert != nil && cert.Issuer.CommonName != "" {
		by = " (issuer " + cert.Issuer.CommonName + ")"
	}
	return "certificate signed by an unknown authority" + by + ": give --tls-ca FILE, or --tls-insecure"
}

func nameMismatch(cert *x509.Certificate, host string) string {
	var names []string
	if cert != nil {
		names = append(names, cert.DNSNames...)
		for _, ip := range cert.IPAddresses {
			names = append(names, ip.String())
		}
		if len(names) == 0 && cert.Subject.CommonName != "" {
			names = append(names, cert.Subject.CommonName+" (common name only, not checked)")
		}
	}
	has := "no names"
	if len(names) > 0 {
		has = strings.Join(names, ", ")
	}
	return fmt.Sprintf("the server's certificate is for %s, not %s: give --tls-server-name NAME with one of its names", has, host)
}

func tail(s, after string) string {
	if i := strings.LastIndex(s, after); i >= 0 {
		return strings.TrimSuffix(strings.TrimSpace(s[i+len(after):]), "\"")
	}
	return s
}
