package httpclient

// The HTTP client's connection pool: keep-alive connections, at most
// maxConns open, TCP_NODELAY on each, reused first-in first-out, and at
// most maxDialing of them being opened at once.

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"time"

	"github.com/netloadgen/netloadgen/pkg/rxstamp"
)

// maxDialing caps the dials in progress at once (as pkg/httploop does). A
// request that finds no idle connection dials only when fewer than this
// many dials are under way; otherwise it waits for whichever comes first,
// an idle connection or a free dial. Uncapped, a burst meeting a pool with
// no idle connection opens one connection per waiting request, and with
// TLS each is a handshake the server pays for on the same core as its
// answers: the answers slow, more requests find no idle connection, more
// handshakes follow, until the pool's cap (400 connections in 0.6 s at
// 10,000 QPS against sutproxy, every answer 100 ms late: bench/RESULTS.md,
// "TLS (issue 19)").
const maxDialing = 4

// httpConn is one keep-alive connection.
type httpConn struct {
	nc      net.Conn
	rx      *rxstamp.Conn // nc when it carries kernel receive timestamps
	probe   *idleProbe    // looks at the socket before a reuse; nil: cannot
	br      *bufio.Reader
	meter   meter // under br: the socket's last read error
	lastUse time.Time
	reused  bool // has carried a request before: the server may have closed it since
	keep    bool // a streamed answer was read to its end (Stream)
}

// connPool holds idle connections and one slot per open connection.
type connPool struct {
	addr        string
	dialer      net.Dialer
	idleTimeout time.Duration
	slots       chan struct{} // one token per open connection
	dialing     chan struct{} // one token per dial in progress
	idle        chan *httpConn
	tls         *tls.Config // nil: plain text
}

func newConnPool(addr string, maxConns int, dialTimeout, idleTimeout time.Duration, tlsCfg *tls.Config) *connPool {
	return &connPool{
		addr:        addr,
		tls:         tlsCfg,
		dialer:      net.Dialer{Timeout: dialTimeout},
		idleTimeout: idleTimeout,
		slots:       make(chan struct{}, maxConns),
		dialing:     make(chan struct{}, maxDialing),
		idle:        make(chan *httpConn, maxConns),
	}
}

// get returns an idle connection or dials one; fresh skips the idle ones.
func (p *connPool) get(ctx context.Context, fresh bool) (*httpConn, error) {
	for !fresh {
		select {
		case c := <-p.idle:
			if p.expired(c) {
				p.discard(c)
				continue
			}
			return c, nil
		default:
		}
		break
	}
	for {
		idle := p.idle
		if fresh {
			idle = nil // a nil channel never delivers
		}
		select {
		case c := <-idle:
			if p.expired(c) {
				p.discard(c)
				continue
			}
			return c, nil
		case p.dialing <- struct{}{}:
			c, err := p.dialSlot(ctx, idle)
			<-p.dialing
			if c == nil && err == nil {
				continue // the idle connection found had expired
			}
			return c, err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// dialSlot, holding a dial token, waits for a free slot and dials, unless
// an idle connection comes first (nil, nil if that one had expired).
func (p *connPool) dialSlot(ctx context.Context, idle chan *httpConn) (*httpConn, error) {
	select {
	case c := <-idle:
		if p.expired(c) {
			p.discard(c)
			return nil, nil
		}
		return c, nil
	case p.slots <- struct{}{}:
		c, err := p.dial(ctx)
		if err != nil {
			<-p.slots
			return nil, err
		}
		return c, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (p *connPool) expired(c *httpConn) bool {
	return p.idleTimeout > 0 && time.Since(c.lastUse) > p.idleTimeout
}

func (p *connPool) dial(ctx context.Context) (*httpConn, error) {
	nc, err := p.dialer.DialContext(ctx, "tcp", p.addr)
	if err != nil {
		return nil, err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		// Go sets TCP_NODELAY by default; set it explicitly because Nagle
		// stalls small request/response pairs by ~40 ms (PROTOCOL.md §4).
		if err := tc.SetNoDelay(true); err != nil {
			nc.Close()
			return nil, fmt.Errorf("set TCP_NODELAY: %w", err)
		}
	}
	c := &httpConn{nc: nc}
	if tc, ok := nc.(*net.TCPConn); ok {
		c.probe = newIdleProbe(tc)
		// The response's arrival is read from the kernel, so a latency does
		// not include this process's own wake-up (pkg/rxstamp).
		if rc := rxstamp.Wrap(tc); rc.Stamped() {
			c.nc, c.rx = rc, rc
		}
	}
	if p.tls != nil {
		// TLS over the (timestamped) socket: the idle probe still looks at
		// the socket itself, where a server's close shows as the end of the
		// stream or as its close_notify alert, bytes nobody asked for.
		// Without a session cache the server sends no session tickets, the
		// other bytes TLS 1.3 could leave there unasked (pkg/tlsconf).
		tc := tls.Client(c.nc, p.tls)
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, fmt.Errorf("TLS handshake with %s: %w", p.addr, err)
		}
		c.nc = tc
	}
	c.meter.r = c.nc
	c.br = bufio.NewReaderSize(&c.meter, 16<<10)
	return c, nil
}

// put returns a healthy connection to the idle set.
func (p *connPool) put(c *httpConn) {
	c.lastUse = time.Now()
	c.reused = true
	select {
	case p.idle <- c:
	default: // cannot happen while every connection holds a slot; stay safe
		p.discard(c)
	}
}

// discard closes a connection and frees its slot.
func (p *connPool) discard(c *httpConn) {
	c.nc.Close()
	<-p.slots
}

// closeIdle closes every idle connection.
func (p *connPool) closeIdle() {
	for {
		select {
		case c := <-p.idle:
			p.discard(c)
		default:
			return
		}
	}
}
