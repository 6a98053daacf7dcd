// Package sutproxytest starts sutproxy in-process for tests: simulated models
// given in the --model flag syntax, both front ends on loopback ports the
// kernel picks, closed when the test ends.
package sutproxytest

import (
	"testing"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/pkg/sim"
	"github.com/netloadgen/netloadgen/pkg/sutproxy"
)

// Start serves the models (sim.ParseModelFlag syntax; none: the built-in set).
func Start(t testing.TB, flags ...string) *sutproxy.Proxy {
	t.Helper()
	return start(t, sutproxy.Config{Models: models(t, flags)})
}

// models are the flags' simulated models.
func models(t testing.TB, flags []string) []sim.ModelSpec {
	t.Helper()
	var specs []sim.ModelSpec
	for _, f := range flags {
		s, err := sim.ParseModelFlag(f)
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, s)
	}
	return specs
}

// StartFront serves the models behind a front: only host (any port;
// "": any) and only requests carrying the headers, as a deployed endpoint
// behind an ingress that routes by Host and wants credentials.
func StartFront(t testing.TB, host string, require []kserve.Header, flags ...string) *sutproxy.Proxy {
	t.Helper()
	var specs []sim.ModelSpec
	for _, f := range flags {
		s, err := sim.ParseModelFlag(f)
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, s)
	}
	return start(t, sutproxy.Config{Models: specs, RequireHost: host, RequireHeaders: require})
}

// StartForward starts a forwarding sutproxy in front of the upstreams
// (http://host:port or grpc://host:port).
func StartForward(t testing.TB, upstreams ...string) *sutproxy.Proxy {
	t.Helper()
	return start(t, sutproxy.Config{Upstreams: upstreams})
}

// start starts cfg on loopback ports the kernel picks, closed when t ends.
func start(t testing.TB, cfg sutproxy.Config) *sutproxy.Proxy {
	t.Helper()
	cfg.HTTPAddr, cfg.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	p, err := sutproxy.Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// Target is p's URL for a transport: "grpc" gives grpc://, anything else
// (http, http-json) http://.
func Target(p *sutproxy.Proxy, transport string) string {
	if transport == "grpc" {
		return "grpc://" + p.GRPCAddr()
	}
	return "http://" + p.HTTPAddr()
}

// StartTLS serves the models as Start does, both listeners TLS with the
// certificate and key files; clientCA, when not "", requires client
// certificates signed by it.
func StartTLS(t testing.TB, cert, key, clientCA string, flags ...string) *sutproxy.Proxy {
	t.Helper()
	return start(t, sutproxy.Config{Models: models(t, flags), TLSCert: cert, TLSKey: key, TLSClientCA: clientCA})
}
