// Package target is the grammar of an endpoint's address: which URLs name
// a KServe v2 server and what a run takes from them. It sits below both
// the API's decoding (which refuses a bad target at the door) and the
// runner (which connects to a good one), so the two read a URL the same
// way.
package target

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ErrTarget marks a target that is malformed or does not answer as a KServe
// v2 server with the model: the run never started.
var ErrTarget = errors.New("target")

// Target is a parsed http://host:port or grpc://host:port.
type Target struct {
	Scheme string // "http" or "grpc"
	Host   string // host:port
	URL    string // as given
}

// Parse checks a target URL.
func Parse(raw string) (Target, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Target{}, fmt.Errorf("%w: %q is not a URL (want http://host:port or grpc://host:port): %v", ErrTarget, raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "grpc" {
		return Target{}, fmt.Errorf("%w: %q: the scheme must be http:// or grpc://", ErrTarget, raw)
	}
	if u.Hostname() == "" || u.Port() == "" {
		return Target{}, fmt.Errorf("%w: %q: want %s://host:port", ErrTarget, raw, u.Scheme)
	}
	if u.Scheme == "grpc" && strings.Trim(u.Path, "/") != "" {
		return Target{}, fmt.Errorf("%w: %q: a grpc:// target takes no path", ErrTarget, raw)
	}
	return Target{Scheme: u.Scheme, Host: u.Host, URL: raw}, nil
}
