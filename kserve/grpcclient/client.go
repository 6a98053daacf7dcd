package grpcclient

// This file is the KServe v2 gRPC client: a pool of connections and the
// protocol's unary calls.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/inferencepb"
	"github.com/netloadgen/netloadgen/pkg/rxstamp"
	"github.com/netloadgen/netloadgen/triton"
)

// DefaultConns is the pool size of a Client: one HTTP/2 connection
// caps throughput (one reader and one writer goroutine, one flow-control
// window), so calls are spread over several.
const DefaultConns = 4

// grpcMaxMessage is the largest message sent or accepted, Triton's client's
// limit (grpc-go's default of 4 MiB refuses a single 224×224×3 FP32 batch of 8).
const grpcMaxMessage = math.MaxInt32

// grpcWindow is the HTTP/2 flow-control window of a stream and of a
// connection, grpc-go's BDP estimator's upper bound (16 MiB).
const grpcWindow = 16 << 20

// Client calls a KServe v2 gRPC server over a pool of connections, picked
// round-robin per call. It is safe for concurrent use.
//
// Errors: a status the server answered with is a *kserve.Error (HTTPStatus
// 0), so errors.Is(err, kserve.ErrNotFound) and the like work. A failure
// below the protocol (refused, reset or closed connection: UNAVAILABLE with
// no status from the server) matches both kserve.ErrTransport and
// kserve.ErrUnavailable. A call cut short by its context wraps
// context.DeadlineExceeded or context.Canceled. A response that cannot be
// decoded wraps kserve.ErrMalformed.
type Client struct {
	target    string
	authority string   // :authority when a Host header gave one; "": the target's
	md        []string // the added metadata, name/value pairs, names lowercased
	conns     []*grpc.ClientConn
	clients   []inferencepb.GRPCInferenceServiceClient
	rx        []atomic.Pointer[rxstamp.Conn] // by pool index: the live connection, when timestamped
	next      atomic.Uint64
	calls     grpcCalls
}

// Option configures a Client.
type Option func(*config)

type config struct {
	conns          int
	connectTimeout time.Duration // > 0: connect eagerly
	dialOptions    []grpc.DialOption
	headers        []kserve.Header
	tls            *tls.Config
}

// WithTLS makes the connections TLS with cfg (HTTP/2 by ALPN; its
// ServerName, when empty, is the target's host) instead of plaintext.
func WithTLS(cfg *tls.Config) Option { return func(c *config) { c.tls = cfg } }

// WithConns sets the number of connections in the pool (at least 1).
func WithConns(n int) Option { return func(c *config) { c.conns = n } }

// WithEagerConnect makes New open every connection and wait,
// at most timeout, until each is ready, so a load generator pays for
// connection setup before its clock starts. Without it connections open on
// first use.
func WithEagerConnect(timeout time.Duration) Option {
	return func(c *config) { c.connectTimeout = timeout }
}

// WithDialOptions adds grpc-go dial options (after the client's own, so
// they take precedence). A codec forced with grpc.ForceCodecV2 in default
// call options would replace the client's, which prepared requests need.
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(c *config) { c.dialOptions = append(c.dialOptions, opts...) }
}

// WithHeaders adds hs to every call as metadata, names lowercased, probes
// and inferences alike; one named Host (any case) sets :authority instead,
// as an ingress that routes by it needs. The caller checks the names and
// values (kserve.CheckHeaderName, CheckHeaderValue).
func WithHeaders(hs []kserve.Header) Option {
	return func(c *config) { c.headers = append(c.headers[:len(c.headers):len(c.headers)], hs...) }
}

// New builds a client of the server at target, "host:port" (any
// grpc-go target, such as "unix:///path", works too; a grpc:// URL must be
// reduced to host:port by the caller). Transport is plaintext HTTP/2, or
// TLS with WithTLS.
func New(target string, opts ...Option) (*Client, error) {
	cfg := config{conns: DefaultConns}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.conns < 1 {
		return nil, fmt.Errorf("kserve: gRPC client of %s: %d connections, need at least 1", target, cfg.conns)
	}
	codec, err := newGRPCCodec()
	if err != nil {
		return nil, err
	}
	creds := insecure.NewCredentials()
	if cfg.tls != nil {
		// credentials.NewTLS adds "h2" to the ALPN protocols. The name
		// checked is the target's host unless the config names one:
		// grpc-go would otherwise check :authority, which a Host header
		// (an ingress's route) sets to a name the certificate may not hold.
		tc := cfg.tls.Clone()
		if tc.ServerName == "" {
			if host, _, err := net.SplitHostPort(target); err == nil {
				tc.ServerName = host
			}
		}
		creds = credentials.NewTLS(tc)
		if hasHost(cfg.headers) {
			name := tc.ServerName
			tc.ServerName = ""
			creds = routedTLS{credentials.NewTLS(tc), name}
		}
	}
	dial := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(grpcMaxMessage), grpc.MaxCallSendMsgSize(grpcMaxMessage),
			grpc.ForceCodecV2(codec)),
		// Static flow-control windows at the size grpc-go's BDP estimator
		// grows to at most: the estimator pings the server about once per
		// round trip (a PING and its ACK, each a write and a read on both
		// ends), which on a load generator's many short calls was a frame
		// pair per request for windows that end at this size anyway.
		grpc.WithStaticStreamWindowSize(grpcWindow),
		grpc.WithStaticConnWindowSize(grpcWindow),
	}
	c := &Client{target: target, rx: make([]atomic.Pointer[rxstamp.Conn], cfg.conns)}
	dial = append(dial, c.headerOptions(cfg.headers)...)
	for i := range cfg.conns {
		opts := dial[:len(dial):len(dial)]
		if plainTCPTarget(target) {
			// Our own dialer, so that responses carry the kernel's arrival
			// time (pkg/rxstamp); a dialer in cfg.dialOptions replaces it.
			opts = append(opts, grpc.WithContextDialer(c.rxDialer(i)))
		}
		opts = append(opts, cfg.dialOptions...)
		cc, err := grpc.NewClient(target, opts...)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("kserve: gRPC client of %s: %w", target, err)
		}
		c.conns = append(c.conns, cc)
		c.clients = append(c.clients, inferencepb.NewGRPCInferenceServiceClient(cc))
	}
	if cfg.connectTimeout > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), cfg.connectTimeout)
		defer cancel()
		if err := c.Connect(ctx); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// routedTLS is TLS whose checked name and :authority (a Host header's
// route) differ, as an ingress reached by one name routes by another.
// grpc-go refuses a dial whose credentials name a server other than its
// authority option, and hands the authority to the handshake as the name to
// check; routedTLS names no server to the first and gives the handshake the
// name that is to be checked.
type routedTLS struct {
	credentials.TransportCredentials
	name string // the name checked in the certificate
}

func (c routedTLS) ClientHandshake(ctx context.Context, _ string, conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return c.TransportCredentials.ClientHandshake(ctx, c.name, conn)
}

func (c routedTLS) Clone() credentials.TransportCredentials {
	return routedTLS{c.TransportCredentials.Clone(), c.name}
}

// hasHost says whether hs sets :authority (a Host header).
func hasHost(hs []kserve.Header) bool {
	for _, h := range hs {
		if strings.EqualFold(h.Name, kserve.HeaderHost) {
			return true
		}
	}
	return false
}

// headerOptions are the dial options that send hs: :authority, and an
// interceptor of unary and streaming calls that adds the metadata.
func (c *Client) headerOptions(hs []kserve.Header) []grpc.DialOption {
	var opts []grpc.DialOption
	for _, h := range hs {
		if strings.EqualFold(h.Name, kserve.HeaderHost) {
			c.authority = h.Value
			opts = append(opts, grpc.WithAuthority(h.Value))
			continue
		}
		c.md = append(c.md, strings.ToLower(h.Name), h.Value)
	}
	if len(c.md) == 0 {
		return opts
	}
	md := metadata.Pairs(c.md...)
	with := func(ctx context.Context) context.Context {
		if have, ok := metadata.FromOutgoingContext(ctx); ok {
			return metadata.NewOutgoingContext(ctx, metadata.Join(have, md))
		}
		return metadata.NewOutgoingContext(ctx, md)
	}
	return append(opts,
		grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			return invoker(with(ctx), method, req, reply, cc, opts...)
		}),
		grpc.WithChainStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			return streamer(with(ctx), desc, cc, method, opts...)
		}))
}

// Authority is the :authority a Host header set (WithHeaders); "" when
// none did.
func (c *Client) Authority() string { return c.authority }

// Metadata is the metadata every call carries (WithHeaders), as
// name/value pairs with lowercased names.
func (c *Client) Metadata() []string { return c.md }

// plainTCPTarget is a host:port target, which grpc-go dials over TCP with
// the address as given (a resolver scheme or a unix socket is left to
// grpc-go's own dialer).
func plainTCPTarget(target string) bool {
	return !strings.Contains(target, "://") && !strings.HasPrefix(target, "unix:")
}

// rxDialer dials TCP for pool slot i and keeps the connection, so a call
// can read when its response arrived.
func (c *Client) rxDialer(i int) func(context.Context, string) (net.Conn, error) {
	return func(ctx context.Context, addr string) (net.Conn, error) {
		nc, err := rxstamp.Dial(ctx, &net.Dialer{}, "tcp", addr)
		if rc, ok := nc.(*rxstamp.Conn); ok && rc.Stamped() {
			c.rx[i].Store(rc)
		}
		return nc, err
	}
}

// arrival is when the latest data on pool slot i's connection reached the
// kernel, a bound on when a call on it that just returned got its response:
// the response was read before the call returned, so the latest arrival is
// its own or a later one, never an earlier one. Zero without timestamps.
func (c *Client) arrival(i uint64) time.Time {
	if rc := c.rx[i].Load(); rc != nil {
		if at, ok := rc.Arrival(time.Now()); ok {
			return at
		}
	}
	return time.Time{}
}

// Connect opens every connection of the pool and waits until each is ready.
// A connection that fails is an error matching kserve.ErrTransport; grpc-go would
// retry it with backoff, but a load generator wants to know before it starts.
func (c *Client) Connect(ctx context.Context) error {
	for i, cc := range c.conns {
		cc.Connect()
		for {
			s := cc.GetState()
			if s == connectivity.Ready {
				break
			}
			if s == connectivity.TransientFailure || s == connectivity.Shutdown {
				return fmt.Errorf("%w: gRPC connection %d to %s: %s", kserve.ErrTransport, i, c.target, s)
			}
			if !cc.WaitForStateChange(ctx, s) {
				return fmt.Errorf("gRPC connection %d to %s still %s: %w", i, c.target, s, ctx.Err())
			}
		}
	}
	return nil
}

// Close closes every connection; calls in flight fail.
func (c *Client) Close() error {
	var errs []error
	for _, cc := range c.conns {
		errs = append(errs, cc.Close())
	}
	return errors.Join(errs...)
}

// Conns is the pool size.
func (c *Client) Conns() int { return len(c.conns) }

// pickIndex is the pool slot of the next call; prepared calls use the
// connection directly (the generated client adds a call option and two
// allocations to every call).
func (c *Client) pickIndex() uint64 { return (c.next.Add(1) - 1) % uint64(len(c.conns)) }

func (c *Client) pick() inferencepb.GRPCInferenceServiceClient { return c.clients[c.pickIndex()] }

// ServerLive asks whether the server is live.
func (c *Client) ServerLive(ctx context.Context) (bool, error) {
	call := c.calls.get(ctx)
	defer c.calls.put(call)
	r, err := c.pick().ServerLive(ctx, &inferencepb.ServerLiveRequest{}, call.opts[:]...)
	if err != nil {
		return false, call.fail(err)
	}
	return r.GetLive(), nil
}

// ServerReady asks whether the server is ready.
func (c *Client) ServerReady(ctx context.Context) (bool, error) {
	call := c.calls.get(ctx)
	defer c.calls.put(call)
	r, err := c.pick().ServerReady(ctx, &inferencepb.ServerReadyRequest{}, call.opts[:]...)
	if err != nil {
		return false, call.fail(err)
	}
	return r.GetReady(), nil
}

// ModelReady asks whether a model (version "" for the server's choice) is ready.
func (c *Client) ModelReady(ctx context.Context, model, version string) (bool, error) {
	call := c.calls.get(ctx)
	defer c.calls.put(call)
	r, err := c.pick().ModelReady(ctx, &inferencepb.ModelReadyRequest{Name: model, Version: version}, call.opts[:]...)
	if err != nil {
		return false, call.fail(err)
	}
	return r.GetReady(), nil
}

// ServerMetadata fetches the server's name, version and extensions.
func (c *Client) ServerMetadata(ctx context.Context) (kserve.ServerMetadata, error) {
	call := c.calls.get(ctx)
	defer c.calls.put(call)
	r, err := c.pick().ServerMetadata(ctx, &inferencepb.ServerMetadataRequest{}, call.opts[:]...)
	if err != nil {
		return kserve.ServerMetadata{}, call.fail(err)
	}
	return kserve.ServerMetadataFromPB(r), nil
}

// ModelMetadata fetches a model's metadata.
func (c *Client) ModelMetadata(ctx context.Context, model, version string) (kserve.ModelMetadata, error) {
	call := c.calls.get(ctx)
	defer c.calls.put(call)
	r, err := c.pick().ModelMetadata(ctx, &inferencepb.ModelMetadataRequest{Name: model, Version: version}, call.opts[:]...)
	if err != nil {
		return kserve.ModelMetadata{}, call.fail(err)
	}
	return kserve.ModelMetadataFromPB(r), nil
}

// Infer encodes req (raw tensor contents), runs it and decodes the response.
// To send the same request many times, use PrepareInfer and InferPrepared.
func (c *Client) Infer(ctx context.Context, req *kserve.InferRequest) (*kserve.InferResponse, error) {
	p, err := c.PrepareInfer(req)
	if err != nil {
		return nil, err
	}
	return c.InferPrepared(ctx, p)
}

// ModelConfig fetches a model's Triton configuration (extension
// model_configuration).
func (c *Client) ModelConfig(ctx context.Context, model, version string) (triton.ModelConfig, error) {
	call := c.calls.get(ctx)
	defer c.calls.put(call)
	r, err := c.pick().ModelConfig(ctx, &inferencepb.ModelConfigRequest{Name: model, Version: version}, call.opts[:]...)
	if err != nil {
		return triton.ModelConfig{}, call.fail(err)
	}
	return triton.ModelConfigFromPB(r.GetConfig()), nil
}

// ModelStatistics fetches Triton's cumulative statistics (extension
// statistics) of a model, or of every model when model is "".
func (c *Client) ModelStatistics(ctx context.Context, model, version string) (triton.StatisticsResponse, error) {
	call := c.calls.get(ctx)
	defer c.calls.put(call)
	r, err := c.pick().ModelStatistics(ctx, &inferencepb.ModelStatisticsRequest{Name: model, Version: version}, call.opts[:]...)
	if err != nil {
		return triton.StatisticsResponse{}, call.fail(err)
	}
	return triton.StatisticsFromPB(r), nil
}
