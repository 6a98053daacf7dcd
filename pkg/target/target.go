// Package target is the grammar of an endpoint's address: which URLs name
// a KServe v2 server and what a run takes from them. It sits below both
// the API's decoding (which refuses a bad target at the door) and the
// runner (which connects to a good one), so the two read a URL the same
// way.
package target

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrTarget marks a target that is malformed or does not answer as a KServe
// v2 server with the model: the run never started.
var ErrTarget = errors.New("target")

// Target is a parsed http://, https://, grpc:// or grpcs:// host[:port].
// An HTTP(S) target may carry a path: the prefix every request's path
// starts with (a server behind a proxy at https://host/prefix). Nothing
// else: no credentials (a run spec is stored and logged), no query, no
// fragment.
type Target struct {
	Scheme string // "http", "https", "grpc" or "grpcs"
	Host   string // host:port, the scheme's default port filled in
	URL    string // as given
}

// defaultPorts are the ports of a target that names none.
var defaultPorts = map[string]string{"http": "80", "https": "443", "grpc": "80", "grpcs": "443"}

// TLS reports whether the target's transport is TLS (https://, grpcs://).
func (t Target) TLS() bool { return t.Scheme == "https" || t.Scheme == "grpcs" }

// GRPC reports whether the target speaks gRPC (grpc://, grpcs://).
func (t Target) GRPC() bool { return t.Scheme == "grpc" || t.Scheme == "grpcs" }

// Hostname is the host without its port: the name a TLS certificate is
// checked against unless a server name is given.
func (t Target) Hostname() string {
	h, _, err := net.SplitHostPort(t.Host)
	if err != nil {
		return t.Host
	}
	return h
}

// Parse checks a target URL. Its errors never quote credentials the URL
// carries: the target is refused, and what the user wrote comes back with
// the user information cut out.
func Parse(raw string) (Target, error) {
	if !utf8.ValidString(raw) {
		return Target{}, fmt.Errorf("%w: %q is not valid UTF-8", ErrTarget, Redact(raw))
	}
	if hint := withScheme(raw); hint != "" {
		return Target{}, fmt.Errorf("%w: %q has no scheme: use %s (want http://host:port or grpc://host:port)", ErrTarget, Redact(raw), hint)
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error quotes the URL as given, password included.
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err
		}
		return Target{}, fmt.Errorf("%w: %q is not a URL (want http://host:port or grpc://host:port): %v", ErrTarget, Redact(raw), err)
	}
	shown := Redact(raw)
	def, ok := defaultPorts[u.Scheme]
	if !ok {
		return Target{}, fmt.Errorf("%w: %q: the scheme must be http://, https://, grpc:// or grpcs://", ErrTarget, shown)
	}
	if u.User != nil {
		return Target{}, fmt.Errorf("%w: %q: a target takes no credentials (user:password@): it is stored with the run and logged", ErrTarget, shown)
	}
	if u.Hostname() == "" {
		return Target{}, fmt.Errorf("%w: %q: want %s://host:port", ErrTarget, shown, u.Scheme)
	}
	host := u.Host
	if u.Port() == "" {
		if strings.HasSuffix(u.Host, ":") {
			return Target{}, fmt.Errorf("%w: %q: want %s://host:port", ErrTarget, shown, u.Scheme)
		}
		host = net.JoinHostPort(u.Hostname(), def)
	} else if p, err := strconv.Atoi(u.Port()); err != nil || p < 1 || p > 65535 {
		return Target{}, fmt.Errorf("%w: %q: port %s is not between 1 and 65535", ErrTarget, shown, u.Port())
	}
	if u.RawQuery != "" || u.ForceQuery {
		return Target{}, fmt.Errorf("%w: %q: a target takes no query (?...)", ErrTarget, shown)
	}
	// A '#' can only start the fragment, even an empty one.
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return Target{}, fmt.Errorf("%w: %q: a target takes no fragment (#...)", ErrTarget, shown)
	}
	if (u.Scheme == "grpc" || u.Scheme == "grpcs") && strings.Trim(u.Path, "/") != "" {
		return Target{}, fmt.Errorf("%w: %q: a %s:// target takes no path", ErrTarget, shown, u.Scheme)
	}
	return Target{Scheme: u.Scheme, Host: host, URL: raw}, nil
}

// Redact is raw with everything between "//" and its last '@' replaced by
// "REDACTED", for a message or a log line: the user information
// (user:password@) is cut out however the rest is malformed (a password
// may hold a '/', '?' or '#'), at the cost of an '@' in a path.
func Redact(raw string) string {
	scheme, rest := "", raw
	if i := strings.Index(raw, "//"); i >= 0 {
		scheme, rest = raw[:i+2], raw[i+2:]
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return raw
	}
	return scheme + "REDACTED" + rest[at:]
}

// withScheme is what to type for a target given without a scheme
// ("127.0.0.1:1", "localhost:1/prefix"): "http://... or grpc://...", or ""
// when raw has a scheme or is not host:port before its path.
func withScheme(raw string) string {
	if strings.Contains(raw, "://") {
		return ""
	}
	hostport, path, _ := strings.Cut(raw, "/")
	host, port, err := net.SplitHostPort(hostport)
	if err != nil || host == "" || strings.ContainsAny(hostport, "@?#") {
		return ""
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return ""
	}
	h := "http://" + hostport
	if path != "" {
		h += "/" + path
	}
	return h + " or grpc://" + hostport
}
