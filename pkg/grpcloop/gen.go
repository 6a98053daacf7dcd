package grpcloop

// This file is the generative client over ModelStreamInfer on the
// package's own HTTP/2 frames (genai.Client, API kserve-stream): what
// grpcclient's Generator does on grpc-go, without grpc-go's receive path,
// which allocates about 4.6 times per streamed token (bench/RESULTS.md).
//
// Unlike the Loop it does not run on its caller's goroutine: a generative
// run's answers stream for seconds after their send, so each connection has
// one reader goroutine, blocked in a read of a timestamped socket
// (pkg/rxstamp) while nothing arrives, that parses the frames in place and
// calls the handlers. A send is an encoding into the connection's buffer
// and a write, under the connection's lock, on the caller's goroutine.
//
// Each connection carries one ModelStreamInfer stream for its whole life,
// with every request sent on it as one more gRPC message, told apart by
// request id, as Triton's own clients do (and grpcclient's Generator).
// When the stream ends, for whatever reason, the connection ends with it
// and the requests in flight on it fail; the next request dials again.
//
// A request goes to a connection with nothing in flight, as perf_analyzer
// gives each of its concurrent streams its own connection: a server
// answers every sequence of a decode step at once, and the tokens of many
// requests on one connection arrive as a burst that the kernel, when the
// reader is a moment behind, merges into one segment stamped with the
// burst's last arrival (the first tokens' times would be late by the
// burst). Connections open as the requests in flight outgrow them, up to
// Conns, dialled off the sender's goroutine; until one is open, or past
// Conns, the least busy open one takes the request.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/genwire"
	"github.com/netloadgen/netloadgen/pkg/genai"
)

// ModelStreamInferPath is the :path of KServe v2's streaming call.
const ModelStreamInferPath = "/inference.GRPCInferenceService/ModelStreamInfer"

// GenConfig configures a Generator.
type GenConfig struct {
	// Addr is the server's host:port.
	Addr string
	// Authority is the :authority sent (default Addr).
	Authority string
	// Metadata are further header fields, name/value pairs, names
	// lowercased (as NewRequest's md).
	Metadata []string
	// Conns is the most connections, each with one stream (default 1):
	// each request goes to one with nothing in flight while there is
	// one, else to the least busy (see the file's comment).
	Conns int
	// Options shape the requests to the model.
	Options genwire.Options
	// DialTimeout bounds a connection's dial (default 5 s).
	DialTimeout time.Duration
}

// Generator sends generative requests over ModelStreamInfer on its own
// HTTP/2 connections (h2c: plain text only); it implements genai.Client and
// is safe for concurrent use.
type Generator struct {
	cfg   GenConfig
	hdr   []byte // the stream's header block (literal fields, no HPACK table)
	conns []genConn
	// closed: Close was called; sends fail, and the readers' errors are
	// ErrClosed.
	closed atomic.Bool
	wg     sync.WaitGroup // the readers
	dialer net.Dialer
}

var _ genai.Client = (*Generator)(nil)

// NewGenerator checks cfg and builds a Generator; it dials nothing (Connect
// does, or the first request on each connection).
func NewGenerator(cfg GenConfig) (*Generator, error) {
	if cfg.Conns == 0 {
		cfg.Conns = 1
	}
	if cfg.Conns < 0 {
		return nil, fmt.Errorf("grpcloop: connections %d: must be positive", cfg.Conns)
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 5 * time.Second
	}
	if _, _, err := net.SplitHostPort(cfg.Addr); err != nil {
		return nil, fmt.Errorf("grpcloop: address %q: %w", cfg.Addr, err)
	}
	if cfg.Authority == "" {
		cfg.Authority = cfg.Addr
	}
	r, err := NewRequest(ModelStreamInferPath, cfg.Authority, 0, nil, cfg.Metadata...)
	if err != nil {
		return nil, err
	}
	g := &Generator{cfg: cfg, hdr: r.lit, conns: make([]genConn, cfg.Conns), dialer: net.Dialer{Timeout: cfg.DialTimeout}}
	for i := range g.conns {
		g.conns[i].g = g
	}
	return g, nil
}

// genPreopen is how many connections Connect opens; the rest open as the
// requests in flight need them.
const genPreopen = 32

// Connect opens the first connections and their streams, so that a run's
// first requests pay for neither.
func (g *Generator) Connect(ctx context.Context) error {
	for i := range min(len(g.conns), genPreopen) {
		c := &g.conns[i]
		c.mu.Lock()
		_, err := c.sessionLocked(ctx)
		c.mu.Unlock()
		if err != nil {
			return err
		}
	}
	return nil
}

// Close ends every connection (requests in flight end with ErrClosed) and
// waits for the readers.
func (g *Generator) Close() error {
	g.closed.Store(true)
	for i := range g.conns {
		c := &g.conns[i]
		c.mu.Lock()
		if s := c.s; s != nil {
			s.nc.Close()
		}
		c.mu.Unlock()
	}
	g.wg.Wait()
	return nil
}

// Generate sends req on the stream of the connection pick chooses; h hears its responses
// from that connection's reader. The send is an encoding and a write of the
// request's frames, within the server's flow-control window (what does not
// fit waits in the connection's buffer for a WINDOW_UPDATE, and goes from
// the reader): it does not wait for the network.
//
// A ctx that can end is watched with context.AfterFunc (genwire.NewCall),
// which starts no goroutine until it ends: a watching goroutine per request
// would cost more than the request, and a check by the reader would leave a
// request whose server went silent waiting for a read that never comes.
func (g *Generator) Generate(ctx context.Context, req *genai.Request, h genai.Handler) {
	if err := genwire.CheckRequest(req); err != nil {
		h.End(time.Now(), genai.Usage{}, err)
		return
	}
	call := genwire.NewCall(ctx, req, h)
	c := g.pick()
	c.mu.Lock()
	s, err := c.sessionLocked(ctx)
	if err == nil {
		err = s.sendLocked(req, &g.cfg.Options, call)
	}
	c.mu.Unlock()
	if err != nil {
		call.End(time.Now(), genai.Usage{}, err)
	}
}

// pick is the connection for the next request: the first open one with
// nothing in flight; else the least busy open one, with the next unopened
// one dialled meanwhile; the first one, dialled by the sender, when none is
// open (a run's start without Connect, or after a failure).
func (g *Generator) pick() *genConn {
	var best, idle *genConn
	for i := range g.conns {
		c := &g.conns[i]
		if !c.open.Load() {
			if idle == nil && !c.dialing.Load() {
				idle = c
			}
			continue
		}
		n := c.inflight.Load()
		if n == 0 {
			return c
		}
		if best == nil || n < best.inflight.Load() {
			best = c
		}
	}
	if best == nil {
		return &g.conns[0]
	}
	if idle != nil {
		idle.dialAhead()
	}
	return best
}

// genConn is one of the Generator's connections: its current session, if
// any.
type genConn struct {
	g  *Generator
	mu sync.Mutex // guards s and its writer's state, and serialises writes
	s  *genSession
	// open: s is a live session; inflight: the requests sent on it not
	// yet ended; dialing: dialAhead is opening it. For pick, which reads
	// them without mu.
	open     atomic.Bool
	inflight atomic.Int64
	dialing  atomic.Bool
}

// dialAhead opens c on a goroutine of its own, so that the sender that
// found every open connection busy does not wait for a dial.
func (c *genConn) dialAhead() {
	if !c.dialing.CompareAndSwap(false, true) {
		return
	}
	g := c.g
	c.mu.Lock()
	defer c.mu.Unlock()
	// Close sets closed before it takes each connection's mu: with mu
	// held and closed unset, the Add comes before its Wait.
	if g.closed.Load() {
		c.dialing.Store(false)
		return
	}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		defer c.dialing.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), g.cfg.DialTimeout)
		defer cancel()
		c.mu.Lock()
		_, _ = c.sessionLocked(ctx) // a failure leaves it for the next pick
		c.mu.Unlock()
	}()
}

// sessionLocked is c's session, dialled if it has none; c.mu is held.
func (c *genConn) sessionLocked(ctx context.Context) (*genSession, error) {
	if s := c.s; s != nil && !s.dead {
		return s, nil
	}
	g := c.g
	if g.closed.Load() {
		return nil, ErrClosed
	}
	nc, err := dialStamped(ctx, &g.dialer, g.cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", kserve.ErrTransport, err)
	}
	s := newSession(c, nc)
	if err := s.start(g.hdr); err != nil {
		nc.Close()
		return nil, fmt.Errorf("%w: %w", kserve.ErrTransport, err)
	}
	// Close sets closed before it takes each connection's mu in turn:
	// with mu held and closed unset, it has not passed c yet, and will
	// see s (so the reader is added before its Wait).
	c.s = s
	c.open.Store(true)
	g.wg.Add(1)
	go s.read()
	return s, nil
}

// connClosed is the error of requests in flight on a connection that
// failed: they were written, and may have reached the server.
func connClosed(format string, args ...any) error {
	return fmt.Errorf("%w: %w: %s", kserve.ErrTransport, kserve.ErrConnectionClosed, fmt.Sprintf(format, args...))
}

// isClosedConn tells a read that failed because Close closed the socket.
func isClosedConn(err error) bool { return errors.Is(err, net.ErrClosed) }
