package rxstamp

import (
	"net"
	"net/netip"
	"sync"
)

// Listener accepts timestamped connections and finds them again by their
// peer's address, for servers (grpc-go) whose handlers see only the peer.
type Listener struct {
	net.Listener
	mu    sync.RWMutex
	conns map[netip.AddrPort]*Conn
}

// NewListener wraps ln; connections that are not TCP pass through as they are.
func NewListener(ln net.Listener) *Listener {
	return &Listener{Listener: ln, conns: map[netip.AddrPort]*Conn{}}
}

// Accept waits for a connection and turns on its receive timestamps.
func (l *Listener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return nc, nil
	}
	c := Wrap(tc)
	c.ln = l
	if ap, ok := addrPort(tc.RemoteAddr()); ok {
		l.mu.Lock()
		l.conns[ap] = c
		l.mu.Unlock()
	}
	return c, nil
}

// Conn returns the open connection whose peer is remote, or nil.
func (l *Listener) Conn(remote net.Addr) *Conn {
	ap, ok := addrPort(remote)
	if !ok {
		return nil
	}
	l.mu.RLock()
	c := l.conns[ap]
	l.mu.RUnlock()
	return c
}

func (l *Listener) forget(c *Conn) {
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
