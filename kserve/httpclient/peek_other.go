//go:build !unix

package httpclient

import "net"

// idleProbe is a no-op where the socket cannot be peeked at: a pooled
// connection's close is then found by the request written on it.
type idleProbe struct{}

func newIdleProbe(*net.TCPConn) *idleProbe { return nil }

func (*idleProbe) closed() bool { return false }
