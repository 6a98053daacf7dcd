package sut

// This file chooses a run's SUT among the four ways to send (the HTTP pool,
// the HTTP event loop, grpc-go, the gRPC event loop), so that a caller names
// a client and gets one SUT, and only this package imports the event loops.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/netloadgen/netloadgen/kserve/grpcclient"
	"github.com/netloadgen/netloadgen/kserve/httpclient"
	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/grpcloop"
	"github.com/netloadgen/netloadgen/pkg/httploop"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/qsl"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// HTTP clients for Config.HTTPClient.
const (
	// HTTPClientLoop sends from the engine's issuer goroutine with its own
	// epoll loop (pkg/httploop): no goroutine per request.
	HTTPClientLoop = "loop"
	// HTTPClientPool is httpclient.Client's keep-alive pool, a goroutine
	// per request.
	HTTPClientPool = "pool"
)

// gRPC clients for Config.GRPCClient.
const (
	// GRPCClientLoop sends from the engine's issuer goroutine over its own
	// HTTP/2 connections (pkg/grpcloop): no goroutine per call.
	GRPCClientLoop = "loop"
	// GRPCClientGRPC is grpcclient.Client, grpc-go's connections.
	GRPCClientGRPC = "grpc"
)

// CheckClients refuses client names other than the constants above and ""
// (the default), so that a run fails before it dials anything.
func CheckClients(httpClient, grpcClient string) error {
	switch httpClient {
	case "", HTTPClientLoop, HTTPClientPool:
	default:
		return fmt.Errorf("HTTP client %q: want %q or %q", httpClient, HTTPClientLoop, HTTPClientPool)
	}
	switch grpcClient {
	case "", GRPCClientLoop, GRPCClientGRPC:
	default:
		return fmt.Errorf("gRPC client %q: want %q or %q", grpcClient, GRPCClientLoop, GRPCClientGRPC)
	}
	return nil
}

// Config is what Open builds a run's SUT from.
type Config struct {
	// HTTP or GRPC, exactly one, is the run's client, already connected
	// (it probed the target): the pool and grpc-go send with it, the HTTP
	// loop encodes its requests with it (base URL, binary setting, Host
	// and added headers), and the gRPC loop takes its :authority and
	// metadata.
	// Open does not close it.
	HTTP *httpclient.Client
	GRPC *grpcclient.Client
	// Addr is the target's host:port, which the event loops dial.
	Addr    string
	Library qsl.Library
	Options Options
	// HTTPClient and GRPCClient name the performance client (the constants
	// above); "" is the event loop where it runs (Linux), else the pool or
	// grpc-go. A run that captures responses (Options.Capture) always uses
	// HTTP or GRPC: the loops do not return responses.
	HTTPClient, GRPCClient string
	// MaxConns caps the HTTP loop's connections.
	MaxConns int
	// ResponseBudget, when set, is the HTTP loop's budget for the answers
	// read at once, shared by the loops of a run's issuers (LoopOptions.Budget).
	ResponseBudget *httpclient.Budget
	// GRPCConns is the gRPC loop's connection count (0: the gRPC client's,
	// grpcclient.Client.Conns): an issuer of several takes its share.
	GRPCConns int
	// TLS says the target is https:// or grpcs://. The HTTP loop speaks
	// TLS (with HTTP's TLS configuration, httpclient.Client.TLSConfig);
	// the gRPC loop speaks plain text only (its HTTP/2 over raw sockets),
	// so grpc-go sends, and the gRPC loop named is an error (ErrLoopTLS).
	TLS bool
	// Slack is the timer slack of the event loops' sleeps until a due time
	// (LoopOptions.Slack).
	Slack time.Duration
	// Generative, when set, makes the run generative: its SUT sends the
	// prompts on this client instead of Library's tensors (which are then
	// unused), and the Adapter owns the client (Close closes it).
	Generative *GenerativeConfig
}

// GenerativeConfig is the SUT of a generative run.
type GenerativeConfig struct {
	Client  genai.Client
	Prompts Prompts
	Options GenerativeOptions
}

// preparedSUT is an engine SUT whose requests are encoded before the run.
type preparedSUT interface {
	loadgen.SUT
	Prepare(ctx context.Context, tr *trace.Trace) error
}

// Every SUT Open chooses counts its resends for the result (requests_resent).
var (
	_ loadgen.Resender = (*Network)(nil)
	_ loadgen.Resender = (*Loop)(nil)
	_ loadgen.Resender = (*GRPCLoop)(nil)
)

// Adapter is a run's SUT, on the client Open chose.
type Adapter struct {
	net        *Network     // always but for a generative run: the fallback, and what captures responses
	gen        genai.Client // a generative run's client, owned; nil otherwise
	loop       *Loop        // the HTTP loop when chosen; nil otherwise
	gloop      *GRPCLoop    // the gRPC loop when chosen; nil otherwise
	sut        preparedSUT
	preconnect func(ctx context.Context, n int) error
}

// Open builds the SUT of a run on the client cfg names. A loop that cannot
// run here (httploop or grpcloop ErrUnsupported) falls back to the pool or
// grpc-go when the choice was the default, and is an error when it was
// named.
func Open(cfg Config) (*Adapter, error) {
	if err := CheckClients(cfg.HTTPClient, cfg.GRPCClient); err != nil {
		return nil, err
	}
	if cfg.Generative != nil {
		return openGenerative(cfg)
	}
	var client Client
	switch {
	case cfg.HTTP != nil && cfg.GRPC == nil:
		client = HTTP(cfg.HTTP)
	case cfg.GRPC != nil && cfg.HTTP == nil:
		client = GRPC(cfg.GRPC)
	default:
		return nil, fmt.Errorf("sut: Open needs exactly one of an HTTP and a gRPC client")
	}
	net, err := New(client, cfg.Library, cfg.Options)
	if err != nil {
		return nil, err
	}
	a := &Adapter{net: net, sut: net}
	if err := a.openLoop(cfg); err != nil {
		net.Close()
		return nil, err
	}
	switch {
	case a.loop != nil:
		a.sut, a.preconnect = a.loop, a.loop.Preconnect
	case a.gloop != nil:
		a.sut, a.preconnect = a.gloop, a.gloop.Preconnect
	case cfg.HTTP != nil:
		a.preconnect = cfg.HTTP.Preconnect
	default:
		a.preconnect = func(ctx context.Context, _ int) error { return cfg.GRPC.Connect(ctx) }
	}
	return a, nil
}

// openGenerative is Open for a generative run: the genai client sends (it
// has its own connections and readers; the event loops speak tensors), and
// the connections open before the clock as the client can.
func openGenerative(cfg Config) (*Adapter, error) {
	gc := cfg.Generative
	if gc.Client == nil || gc.Prompts == nil {
		return nil, fmt.Errorf("sut: a generative SUT needs a client and a prompt set")
	}
	a := &Adapter{sut: NewGenerative(gc.Client, gc.Prompts, gc.Options), gen: gc.Client}
	type connector interface {
		Connect(ctx context.Context) error
	}
	switch c := gc.Client.(type) {
	case connector:
		a.preconnect = func(ctx context.Context, _ int) error { return c.Connect(ctx) }
	default:
		switch {
		case cfg.HTTP != nil:
			a.preconnect = cfg.HTTP.Preconnect
		case cfg.GRPC != nil:
			a.preconnect = func(ctx context.Context, _ int) error { return cfg.GRPC.Connect(ctx) }
		default:
			a.preconnect = func(context.Context, int) error { return nil }
		}
	}
	return a, nil
}

// ErrLoopTLS refuses the gRPC event-loop client named for a TLS target.
var ErrLoopTLS = errors.New("the gRPC event-loop client speaks plain text only: a grpcs:// target uses grpc-go")

// CheckTLS refuses the gRPC event-loop client named for a TLS target, so
// that a run fails before it dials anything; the caller passes the name of
// its target's transport's client, "" for the other. The HTTP loop speaks
// TLS: httpClient is accepted either way.
func CheckTLS(tls bool, httpClient, grpcClient string) error {
	switch {
	case !tls:
	case grpcClient == GRPCClientLoop:
		return fmt.Errorf("gRPC client %q: %w (leave it out, or give %q)", GRPCClientLoop, ErrLoopTLS, GRPCClientGRPC)
	}
	return nil
}

// openLoop builds the event loop cfg chooses, if any.
func (a *Adapter) openLoop(cfg Config) error {
	h, g := cfg.HTTPClient, cfg.GRPCClient
	if cfg.HTTP == nil {
		h = ""
	}
	if cfg.GRPC == nil {
		g = ""
	}
	if err := CheckTLS(cfg.TLS, h, g); err != nil {
		return err
	}
	capture := cfg.Options.Capture
	var err error
	if cfg.HTTP != nil && !capture && cfg.HTTPClient != HTTPClientPool {
		a.loop, err = NewLoop(cfg.HTTP, cfg.Library, cfg.Options, LoopOptions{Addr: cfg.Addr, MaxConns: cfg.MaxConns, Slack: cfg.Slack, TLS: cfg.HTTP.TLSConfig(), Budget: cfg.ResponseBudget})
		switch {
		case errors.Is(err, httploop.ErrUnsupported) && cfg.HTTPClient == "":
			a.loop = nil // the pool serves where the loop cannot run
		case err != nil:
			return fmt.Errorf("HTTP client %q: %w", HTTPClientLoop, err)
		}
	}
	if cfg.GRPC != nil && !capture && !cfg.TLS && cfg.GRPCClient != GRPCClientGRPC {
		conns := cfg.GRPCConns
		if conns <= 0 {
			conns = cfg.GRPC.Conns()
		}
		a.gloop, err = NewGRPCLoop(cfg.Library, cfg.Options, GRPCLoopOptions{Addr: cfg.Addr, Conns: conns, Slack: cfg.Slack,
			Authority: cfg.GRPC.Authority(), Metadata: cfg.GRPC.Metadata()})
		switch {
		case errors.Is(err, grpcloop.ErrUnsupported) && cfg.GRPCClient == "":
			a.gloop = nil // grpc-go serves where the loop cannot run
		case err != nil:
			return fmt.Errorf("gRPC client %q: %w", GRPCClientLoop, err)
		}
	}
	return nil
}

// SUT is what the engine drives: the chosen loop itself or the Network, not
// a wrapper, so the engine finds a loop's loadgen.Poller and a request
// costs no extra call.
func (a *Adapter) SUT() loadgen.SUT { return a.sut }

// Prepare encodes, before the clock starts, every request the trace will
// send, on the chosen SUT.
func (a *Adapter) Prepare(ctx context.Context, tr *trace.Trace) error { return a.sut.Prepare(ctx, tr) }

// Preconnect opens up to n connections before the clock starts (grpc-go
// opens its whole pool).
func (a *Adapter) Preconnect(ctx context.Context, n int) error { return a.preconnect(ctx, n) }

// GiveOwnP tells the event loop, if one was chosen, that the goroutine
// polling it has a P of its own from now on (httploop.Loop.GiveOwnP).
// Call it before the loop is polled.
func (a *Adapter) GiveOwnP() {
	switch {
	case a.loop != nil:
		a.loop.loop.GiveOwnP()
	case a.gloop != nil:
		a.gloop.loop.GiveOwnP()
	}
}

// Layout is the outputs of the captured responses (Network.Layout).
func (a *Adapter) Layout() []OutputLayout {
	if a.net == nil {
		return nil
	}
	return a.net.Layout()
}

// UsesHTTPLoop tells whether the HTTP event loop sends.
func (a *Adapter) UsesHTTPLoop() bool { return a.loop != nil }

// UsesGRPCLoop tells whether the gRPC event loop sends.
func (a *Adapter) UsesGRPCLoop() bool { return a.gloop != nil }

// Close ends the chosen loop and the Network's workers; the client stays
// open (its owner closes it). A generative run's genai client, which the
// Adapter owns, is closed.
func (a *Adapter) Close() error {
	var err error
	if a.loop != nil {
		err = a.loop.Close()
	}
	if a.gloop != nil {
		err = a.gloop.Close()
	}
	if a.gen != nil {
		return a.gen.Close()
	}
	return errors.Join(err, a.net.Close())
}
