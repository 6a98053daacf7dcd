//go:build linux

package httpclient

import (
	"net"
	"testing"
)

// The look at an idle connection before its reuse tells alive from
// closed, and allocates nothing.
func TestIdleProbe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	server := <-accepted
	p := newIdleProbe(nc.(*net.TCPConn))
	if p.closed() {
		t.Fatal("an open, quiet connection looks closed")
	}
	if a := testing.AllocsPerRun(100, func() { p.closed() }); a != 0 {
		t.Errorf("%.1f allocations per look, want 0", a)
	}
	server.Close()
	for i := 0; !p.closed(); i++ { // the server's FIN reaches the socket
		if i == 1_000_000 {
			t.Fatal("a connection the server closed still looks open")
		}
	}
}
