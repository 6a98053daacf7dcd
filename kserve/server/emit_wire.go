package server

// This file records a token's emission when the bytes that complete it are
// written to the socket, for tests that compare a client's token times with
// the server's (issue 20: within 0.2 ms). A record taken when the handler
// hands a token over is early by whatever lies between the hand-over and the
// write: over HTTP fasthttp's body-stream pipe and the goroutine copying it
// to the connection, over gRPC grpc-go's loopy writer, which writes a step's
// burst of 30-50 responses at once. Recording mode only: a server without
// an EmitFunc has no wrapper and pays nothing.

import (
	"net"
	"net/netip"
	"sync"
	"time"
)

// EmitListener accepts connections that record generated tokens when their
// bytes are written (EmitConn). Serve a server with emission recording on it
// (WithEmit, GRPCHooks.Emit plus GRPCHooks.Wire) and its records are taken
// at the socket write. Only for plain-text listeners: under TLS the writes
// are ciphertext, and the handlers keep recording at the hand-over.
type EmitListener struct {
	net.Listener
	emit EmitFunc
	h2   bool // the connections carry HTTP/2 (gRPC), else HTTP/1.1
	mu   sync.RWMutex
	// conns finds a gRPC connection by its peer's address: grpc-go's
	// handlers see only the peer.
	conns map[netip.AddrPort]*EmitConn
}

// NewEmitListener wraps ln; grpc says its connections serve gRPC (HTTP/2),
// else HTTP/1.1. emit receives every recorded token.
func NewEmitListener(ln net.Listener, emit EmitFunc, grpc bool) *EmitListener {
	return &EmitListener{Listener: ln, emit: emit, h2: grpc, conns: map[netip.AddrPort]*EmitConn{}}
}

// Accept waits for a connection and wraps it.
func (l *EmitListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	c := &EmitConn{Conn: nc, emit: l.emit}
	if !l.h2 {
		c.sse = &sseWire{}
		return c, nil
	}
	c.h2 = newH2Wire()
	if ap, ok := addrPort(nc.RemoteAddr()); ok {
		c.ln = l
		l.mu.Lock()
		l.conns[ap] = c
		l.mu.Unlock()
	}
	return c, nil
}

// conn is the open connection whose peer is remote, or nil.
func (l *EmitListener) conn(remote net.Addr) *EmitConn {
	ap, ok := addrPort(remote)
	if !ok {
		return nil
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.conns[ap]
}

func (l *EmitListener) forget(c *EmitConn) {
	ap, ok := addrPort(c.RemoteAddr())
	if !ok {
		return
	}
	l.mu.Lock()
	if l.conns[ap] == c {
		delete(l.conns, ap)
	}
	l.mu.Unlock()
}

func addrPort(a net.Addr) (netip.AddrPort, bool) {
	ta, ok := a.(*net.TCPAddr)
	if !ok || ta == nil {
		return netip.AddrPort{}, false
	}
	ap := ta.AddrPort()
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), true
}

// EmitConn is an accepted connection that records each token expected on
// it (the handler says which, in the order its bytes will go) at the write
// of the bytes that complete it: over HTTP/1.1 it follows the response's
// framing and counts SSE events; over HTTP/2 it follows the frames and the
// gRPC messages in them, by response id.
type EmitConn struct {
	net.Conn
	emit EmitFunc
	ln   *EmitListener // gRPC: to unregister on Close

	mu  sync.Mutex // the handlers' expectations against the writer's progress
	sse *sseWire   // HTTP/1.1
	h2  *h2Wire    // HTTP/2
}

// Unwrap is the connection wrapped (for its receive timestamps).
func (c *EmitConn) Unwrap() net.Conn { return c.Conn }

// Close closes the connection.
func (c *EmitConn) Close() error {
	if c.ln != nil {
		c.ln.forget(c)
	}
	return c.Conn.Close()
}

// Write writes p, recording the tokens whose bytes p completes. The time
// is taken just before the write system call: on loopback the receiver's
// kernel stamps the data on delivery, in the receive softirq that normally
// runs inside the sender's write, so the record precedes the client's
// arrival by the syscall's own few µs; a time taken after it would also
// include whatever the write's wake-up of the receiver costs the sender
// (on two cores the scheduler may run the woken reader first), and could
// follow the arrival. The records are handed
// over before the write too (their cost, well under a µs each when emit
// is quick, lies between the time and the write), so that a client that
// has read the bytes finds them.
func (c *EmitConn) Write(p []byte) (int, error) {
	var buf [16]Emission
	c.mu.Lock()
	var done []Emission
	if c.sse != nil {
		done = c.sse.write(p, buf[:0])
	} else {
		done = c.h2.write(p, buf[:0])
	}
	c.mu.Unlock()
	if len(done) > 0 {
		at := time.Now()
		for i := range done {
			done[i].At = at
			c.emit(done[i])
		}
	}
	return c.Conn.Write(p)
}

// beginSSE says that the next response on the connection is an HTTP/1.1
// chunked one carrying server-sent events; events left from an earlier
// response are forgotten (they never left).
func (c *EmitConn) beginSSE() {
	c.mu.Lock()
	c.sse.begin(-1, nil)
	c.mu.Unlock()
}

// queueSSE says that b, the events the handler is about to write, comes
// next in the body; tok, when not nil, is the token b's last event carries.
func (c *EmitConn) queueSSE(b []byte, tok *Emission) {
	c.mu.Lock()
	c.sse.queue(b, tok)
	c.mu.Unlock()
}

// wholeBody says that the next response on the connection has a body of n
// bytes (Content-Length) carrying toks: they are recorded at its last byte.
func (c *EmitConn) wholeBody(n int, toks []Emission) {
	c.mu.Lock()
	c.sse.begin(n, toks)
	c.mu.Unlock()
}

// expect says that the next gRPC response with id carries toks: they are
// recorded when the write completing that message goes.
func (c *EmitConn) expect(id string, toks ...Emission) {
	c.mu.Lock()
	c.h2.expect(id, toks)
	c.mu.Unlock()
}
