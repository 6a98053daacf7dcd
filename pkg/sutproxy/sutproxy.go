// Package sutproxy assembles sutproxy: a KServe v2 server on HTTP and gRPC at
// once, serving simulated models or forwarding to upstream servers, with
// Prometheus metrics on the HTTP port. The command only parses flags; tests
// start a Proxy in-process on 127.0.0.1:0.
package sutproxy

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/valyala/fasthttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/grpcclient"
	"github.com/netloadgen/netloadgen/kserve/httpclient"
	"github.com/netloadgen/netloadgen/kserve/server"
	"github.com/netloadgen/netloadgen/pkg/forward"
	"github.com/netloadgen/netloadgen/pkg/rxstamp"
	"github.com/netloadgen/netloadgen/pkg/sim"
	"github.com/netloadgen/netloadgen/pkg/version"
)

// Config is what sutproxy serves and where.
type Config struct {
	HTTPAddr string // default 127.0.0.1:8000; port 0 picks one
	GRPCAddr string // default 127.0.0.1:8001; "" or "off" disables gRPC
	// Models are the simulated models; empty (and no Upstreams) serves
	// sim.DefaultModels().
	Models []sim.ModelSpec
	// Upstreams switches to forwarding: http://host:port or grpc://host:port.
	Upstreams []string
	Logger    *slog.Logger
	// MaxRequestBytes bounds one request on both fronts: an HTTP body
	// (413 over it) and a gRPC message (ResourceExhausted); 0:
	// DefaultMaxRequestBytes.
	MaxRequestBytes int
	// RequireHeaders must be on every request (HTTP headers, gRPC
	// metadata), metadata endpoints included: 401 or UNAUTHENTICATED
	// otherwise, as an endpoint that wants credentials answers.
	RequireHeaders []kserve.Header
	// RequireHost, when set, is the only Host (gRPC :authority) served,
	// whatever the port: another gets 404 (gRPC UNIMPLEMENTED), as an
	// ingress that routes by Host answers.
	RequireHost string
	// TLSCert and TLSKey, PEM files, make both listeners TLS (1.2 and 1.3;
	// gRPC's HTTP/2 by ALPN); TLSClientCA, a PEM file of CAs, then
	// requires a client certificate signed by one of them (mutual TLS).
	TLSCert, TLSKey, TLSClientCA string
	// Emit, when set, is told of every token a generative model's answer
	// sends, on both fronts: sutproxy's own record of emission times, for
	// tests that check a client's token timing
	// (sutproxytest.StartRecording). The time is taken just before the
	// write to the socket of the bytes that complete the token (its SSE
	// event, its gRPC response, a whole answer's last byte); under TLS,
	// when the handler hands it to the connection's writer.
	Emit server.EmitFunc
	// Received, when set, is told of every generative request a simulated
	// model is sent (its model, id, prompt, max_tokens), before the model
	// starts it, on both fronts: sutproxy's record of what it was asked,
	// for tests of what a client sends (sutproxytest.StartReceiving). Its
	// Prompt may be the front end's buffer: copy what is kept. Nil:
	// nothing is recorded.
	Received func(server.GenRequest)
}

// DefaultMaxRequestBytes is Config.MaxRequestBytes' default (sutproxy's
// --max-request-bytes): large enough for a batch of images, small enough
// that a bad client cannot make the proxy buffer gigabytes.
const DefaultMaxRequestBytes = 256 << 20

// Proxy is a running sutproxy.
type Proxy struct {
	httpLn, grpcLn net.Listener
	httpSrv        *fasthttp.Server
	grpcSrv        *grpc.Server
	backend        server.Backend
	closers        []func() error
	done           chan error
	log            *slog.Logger
	closeOnce      sync.Once
	closeErr       error
}

// Start listens on both addresses and serves until Close or ctx ends.
func Start(ctx context.Context, cfg Config) (*Proxy, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	p := &Proxy{log: log, done: make(chan error, 2)}

	backend, err := p.buildBackend(cfg, reg)
	if err != nil {
		p.Close()
		return nil, err
	}
	p.backend = backend
	m := newMetrics(reg)

	httpAddr := cfg.HTTPAddr
	if httpAddr == "" {
		httpAddr = "127.0.0.1:8000"
	}
	if p.httpLn, err = net.Listen("tcp", httpAddr); err != nil {
		p.Close()
		return nil, fmt.Errorf("sutproxy: --http-addr %s: %w", httpAddr, err)
	}
	if cfg.GRPCAddr != "off" {
		grpcAddr := cfg.GRPCAddr
		if grpcAddr == "" {
			grpcAddr = "127.0.0.1:8001"
		}
		if p.grpcLn, err = net.Listen("tcp", grpcAddr); err != nil {
			p.Close()
			return nil, fmt.Errorf("sutproxy: --grpc-addr %s: %w", grpcAddr, err)
		}
	}

	tlsCfg, err := serverTLS(cfg)
	if err != nil {
		p.Close()
		return nil, err
	}
	// Connections carry kernel receive timestamps, so a simulated model's
	// latency starts when the request arrived, not when this process woke
	// up to read it (pkg/rxstamp); TLS goes over the timestamped socket.
	p.httpLn = rxstamp.NewListener(p.httpLn)
	if cfg.Emit != nil && tlsCfg == nil {
		// Recording: tokens are recorded when their bytes are written.
		p.httpLn = server.NewEmitListener(p.httpLn, cfg.Emit, false)
	}
	if tlsCfg != nil {
		h := tlsCfg.Clone()
		h.NextProtos = []string{"http/1.1"}
		p.httpLn = tls.NewListener(p.httpLn, h)
	}
	// The goroutines get the servers and listeners as values: a Close
	// before they run clears p's fields (a nil server panicked in Serve).
	maxReq := cfg.MaxRequestBytes
	if maxReq <= 0 {
		maxReq = DefaultMaxRequestBytes
	}
	g := guard{host: cfg.RequireHost, require: cfg.RequireHeaders}
	p.httpSrv = newHTTPServer(backend, reg, m, maxReq, cfg.Emit)
	p.httpSrv.Handler = g.httpGuard(p.httpSrv.Handler)
	hs, hl := p.httpSrv, p.httpLn
	go func() { p.done <- hs.Serve(hl) }()
	if p.grpcLn != nil {
		rx := rxstamp.NewListener(p.grpcLn)
		p.grpcLn = rx
		opts := append([]grpc.ServerOption{grpc.ChainUnaryInterceptor(arrivalInterceptor(rx)), grpc.MaxRecvMsgSize(maxReq)}, g.grpcOptions()...)
		if tlsCfg != nil {
			opts = append(opts, grpc.Creds(credentials.NewTLS(tlsCfg.Clone()))) // adds h2 to ALPN
		}
		hooks := server.GRPCHooks{Observe: m.observeGRPC, Emit: cfg.Emit, Arrival: streamArrival(rx)}
		var gl net.Listener = rx
		if cfg.Emit != nil && tlsCfg == nil {
			hooks.Wire = server.NewEmitListener(rx, cfg.Emit, true)
			gl = hooks.Wire
		}
		p.grpcSrv = server.NewHookedGRPCServer(backend, hooks, opts...)
		gs := p.grpcSrv
		go func() { p.done <- gs.Serve(gl) }()
	}
	log.Info("sutproxy listening", "http", p.HTTPAddr(), "grpc", p.GRPCAddr())
	go func() {
		<-ctx.Done()
		p.Close()
	}()
	return p, nil
}

func (p *Proxy) buildBackend(cfg Config, reg prometheus.Registerer) (server.Backend, error) {
	if len(cfg.Upstreams) > 0 {
		if len(cfg.Models) > 0 {
			return nil, errors.New("sutproxy: --upstream and simulated models (--config/--model) are exclusive")
		}
		var targets []forward.Target
		for _, u := range cfg.Upstreams {
			up, closeFn, err := dialUpstream(u)
			if err != nil {
				return nil, err
			}
			p.closers = append(p.closers, closeFn)
			targets = append(targets, forward.Target{Name: u, Upstream: up})
		}
		return forward.New(targets, reg)
	}
	specs := cfg.Models
	if len(specs) == 0 {
		specs = sim.DefaultModels()
	}
	s, err := sim.New(specs, sim.WithVersion(version.String()))
	if err != nil {
		return nil, fmt.Errorf("sutproxy: models: %w", err)
	}
	p.closers = append(p.closers, s.Close)
	if err := reg.Register(s.Collector()); err != nil {
		return nil, fmt.Errorf("sutproxy: register model metrics: %w", err)
	}
	if cfg.Received != nil {
		return receiving{Server: s, received: cfg.Received}, nil
	}
	return s, nil
}

// receiving is the simulated models telling Config.Received of every
// generative request; the rest of *sim.Server's methods (and so the
// front ends' optional interfaces) are its own.
type receiving struct {
	*sim.Server
	received func(server.GenRequest)
}

func (r receiving) Generate(ctx context.Context, req *server.GenRequest) (server.GenStream, error) {
	r.received(*req)
	return r.Server.Generate(ctx, req)
}

// serverTLS is the listeners' TLS configuration, or nil for plain text.
func serverTLS(cfg Config) (*tls.Config, error) {
	if cfg.TLSCert == "" && cfg.TLSKey == "" {
		if cfg.TLSClientCA != "" {
			return nil, errors.New("sutproxy: --tls-client-ca needs --tls-cert and --tls-key")
		}
		return nil, nil
	}
	if cfg.TLSCert == "" || cfg.TLSKey == "" {
		return nil, errors.New("sutproxy: --tls-cert and --tls-key go together: give both")
	}
	pair, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
	if err != nil {
		return nil, fmt.Errorf("sutproxy: --tls-cert/--tls-key: %w", err)
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pair}}
	if cfg.TLSClientCA != "" {
		b, err := os.ReadFile(cfg.TLSClientCA)
		if err != nil {
			return nil, fmt.Errorf("sutproxy: --tls-client-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("sutproxy: --tls-client-ca %s: no PEM certificate found", cfg.TLSClientCA)
		}
		c.ClientCAs, c.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return c, nil
}

// dialUpstream parses --upstream: http://host:port or grpc://host:port.
func dialUpstream(raw string) (forward.Upstream, func() error, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, nil, fmt.Errorf("sutproxy: --upstream %q: want http://host:port or grpc://host:port", raw)
	}
	switch u.Scheme {
	case "http":
		c, err := httpclient.New(raw)
		if err != nil {
			return nil, nil, fmt.Errorf("sutproxy: --upstream %q: %w", raw, err)
		}
		return c, func() error { return nil }, nil
	case "grpc":
		c, err := grpcclient.New(u.Host)
		if err != nil {
			return nil, nil, fmt.Errorf("sutproxy: --upstream %q: %w", raw, err)
		}
		return c, c.Close, nil
	}
	return nil, nil, fmt.Errorf("sutproxy: --upstream %q: scheme %q is not http or grpc", raw, u.Scheme)
}

// HTTPAddr is the address the HTTP server listens on.
func (p *Proxy) HTTPAddr() string { return addr(p.httpLn) }

// GRPCAddr is the address the gRPC server listens on ("" when off).
func (p *Proxy) GRPCAddr() string { return addr(p.grpcLn) }

func addr(l net.Listener) string {
	if l == nil {
		return ""
	}
	return l.Addr().String()
}

// Backend is what the proxy serves (for tests and embedding).
func (p *Proxy) Backend() server.Backend { return p.backend }

// Wait blocks until a server stops on its own (an error) or ctx ends.
func (p *Proxy) Wait(ctx context.Context) error {
	select {
	case err := <-p.done:
		return err
	case <-ctx.Done():
		return nil
	}
}

// Close stops both servers, letting in-flight requests finish for a moment.
// It is safe to call more than once and from several goroutines.
func (p *Proxy) Close() error {
	p.closeOnce.Do(func() { p.closeErr = p.close() })
	return p.closeErr
}

func (p *Proxy) close() error {
	var errs []error
	if p.grpcSrv != nil {
		stopped := make(chan struct{})
		go func() { p.grpcSrv.GracefulStop(); close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(5 * time.Second):
			p.grpcSrv.Stop()
		}
		p.grpcSrv = nil
	}
	if p.httpSrv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		errs = append(errs, p.httpSrv.ShutdownWithContext(ctx))
		cancel()
		p.httpSrv = nil
	}
	// fasthttp's shutdown closes only the listeners its Serve has taken
	// up: a Serve that had not started yet would serve on after it. Closed
	// here, such a Serve returns at once (already closed: no matter).
	for _, ln := range []net.Listener{p.httpLn, p.grpcLn} {
		if ln != nil {
			_ = ln.Close()
		}
	}
	for _, c := range p.closers {
		errs = append(errs, c())
	}
	p.closers = nil
	return errors.Join(errs...)
}

// ParseUpstreams splits comma-separated upstream lists, as a convenience
// for environments where repeating a flag is awkward.
func ParseUpstreams(values []string) []string {
	var out []string
	for _, v := range values {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}
