package runner

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/target"
	"github.com/netloadgen/netloadgen/pkg/tlsconf"
)

// ErrTLS marks a target whose TLS handshake failed: a certificate not
// trusted or not for the name, a port that does not speak TLS, a client
// certificate missing. It wraps target.ErrTarget.
var ErrTLS = fmt.Errorf("%w: TLS", target.ErrTarget)

// tlsConfig is the run's TLS configuration for t: spec's, built once by
// pkg/runspec, or the default (the system's roots, the target's host as
// the server name) for a TLS target without settings; nil for a
// plain-text target.
func tlsConfig(t target.Target, cfg *tls.Config) (*tls.Config, error) {
	if !t.TLS() {
		return nil, nil
	}
	if cfg != nil {
		return cfg, nil
	}
	return tlsconf.New(tlsconf.Options{})
}

// checkHandshake shakes hands over nc, the probe's own connection to a TLS
// target, with the run's configuration, so that a failure is named in
// words a user can act on before the clients' own errors, which read like
// network failures (grpc-go's only as text), are met. When the server
// asks for a client certificate, it also sends the protocol's first bytes
// and reads the answer: under TLS 1.3 a server that
// requires a certificate, or refuses the one given, says so only after the
// client has finished its side of the handshake.
func checkHandshake(ctx context.Context, nc net.Conn, t target.Target, cfg *tls.Config) error {
	c := tlsconf.ForHTTP(cfg)
	if t.GRPC() {
		c = tlsconf.ForGRPC(cfg)
	}
	if c.ServerName == "" {
		c.ServerName = t.Hostname()
	}
	asked := false
	mine := len(cfg.Certificates) > 0
	c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		asked = true
		if mine {
			return &cfg.Certificates[0], nil
		}
		return &tls.Certificate{}, nil
	}
	tc := tls.Client(nc, c)
	hctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	defer cancel()
	if d, ok := hctx.Deadline(); ok {
		_ = nc.SetDeadline(d)
	}
	if err := tc.HandshakeContext(hctx); err != nil {
		if ctx.Err() == nil && isTimeout(err) {
			return fmt.Errorf("%w: %s: no TLS handshake from the server in %s s: is it plain HTTP?", ErrTLS, t.URL, strconv.FormatFloat(handshakeTimeout.Seconds(), 'g', -1, 64))
		}
		return handshakeError(t, err, mine)
	}
	if !asked {
		return nil
	}
	hello := []byte("GET /v2/health/live HTTP/1.1\r\nHost: " + t.Host + "\r\n\r\n")
	if t.GRPC() {
		hello = http2Hello
	}
	_ = tc.SetDeadline(time.Now().Add(sniffTimeout))
	if _, err := tc.Write(hello); err != nil {
		return handshakeError(t, err, mine)
	}
	var b [1]byte
	if _, err := tc.Read(b[:]); err != nil {
		if msg := tlsconf.Explain(err); msg != "" {
			return handshakeError(t, err, mine)
		}
	}
	return nil
}

// handshakeError names a TLS failure with what to do about it.
func handshakeError(t target.Target, err error, haveCert bool) error {
	msg := tlsconf.Explain(err)
	switch {
	case msg == tlsconf.ClientCertRequired && haveCert:
		msg = "the server refused the client certificate (--tls-cert): is it signed by a CA the server trusts?"
	case msg == tlsconf.NotTLS || (msg == "" && tlsconf.HandshakeEOF(err) != ""):
		msg = "the port does not speak TLS (it answered the TLS handshake in plain text or closed): use " + plainScheme(t) + "://" + t.Host
	}
	if msg == "" {
		return fmt.Errorf("%w: %s: TLS handshake: %v", ErrTLS, t.URL, err)
	}
	return fmt.Errorf("%w: %s: %s", ErrTLS, t.URL, msg)
}

// tlsFailure is handshakeError for a client's failed call, when it is a
// TLS failure; nil otherwise.
func tlsFailure(t target.Target, err error, haveCert bool) error {
	if !t.TLS() || tlsconf.Explain(err) == "" {
		return nil
	}
	return handshakeError(t, err, haveCert)
}

func plainScheme(t target.Target) string {
	if t.GRPC() {
		return "grpc"
	}
	return "http"
}

// speaksTLS reports whether host answers a TLS handshake: plain text sent
// to a TLS port gets nothing a client can read.
func speaksTLS(ctx context.Context, host string) bool {
	ctx, cancel := context.WithTimeout(ctx, sniffTimeout)
	defer cancel()
	d := tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true}} // #nosec G402: only asks whether TLS answers
	c, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		// A server that wants a client certificate still spoke TLS.
		var ae tls.AlertError
		return errors.As(err, &ae)
	}
	c.Close()
	return true
}

// tlsHint is what to type for a plain-text target whose port speaks TLS.
func tlsHint(ctx context.Context, t target.Target) string {
	if t.TLS() || !speaksTLS(ctx, t.Host) {
		return ""
	}
	s := "https"
	if t.GRPC() {
		s = "grpcs"
	}
	return "the port speaks TLS: use " + s + "://" + strings.TrimPrefix(t.URL, t.Scheme+"://")
}

// insecureWarning is logged, and kept in result.json's warnings, for a run
// that did not verify the server's certificate.
const insecureWarning = "tls: the server's certificate was not verified (--tls-insecure, insecure_skip_verify): anyone on the path could have answered"

// recordTLS writes the run's TLS settings into its result (result.json's
// "tls"), and the warning of a run that verified nothing.
func recordTLS(res *loadgen.Result, s *tlsconf.Summary) {
	if s == nil {
		return
	}
	res.TLS = &loadgen.TLSInfo{InsecureSkipVerify: s.InsecureSkipVerify, ServerName: s.ServerName, CustomCA: s.CustomCA, ClientCertificate: s.ClientCertificate}
	if s.InsecureSkipVerify {
		res.Warnings = append(res.Warnings, insecureWarning)
	}
}

// handshakeTimeout bounds the probe's TLS handshake: a plain-text server
// that waits for a request never answers a ClientHello, and the probe would
// otherwise spend its whole time on it and report only its deadline. A
// variable so that a test can shorten it.
var handshakeTimeout = 5 * time.Second

// isTimeout says whether err is a deadline met: the context's, or the
// socket's deadline set from it.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}
