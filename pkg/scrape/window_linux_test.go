package scrape

import (
	"io"
	"net"
	"syscall"
	"testing"
)

// A scrape's connection keeps a small receive buffer, so the server sends
// no further ahead of the paced reads than it holds: after 8 MB read as
// fast as they come, where the kernel's autotuning would have grown the
// buffer to megabytes, it is still the one set.
func TestScrapeConnectionSmallWindow(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		s, err := ln.Accept()
		if err != nil {
			return
		}
		defer s.Close()
		_, _ = s.Write(make([]byte, 8<<20))
	}()
	c, err := (&net.Dialer{Control: smallWindow}).DialContext(t.Context(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if n, err := io.Copy(io.Discard, c); err != nil || n != 8<<20 {
		t.Fatalf("read %d bytes, %v", n, err)
	}
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var got int
	var gerr error
	if err := raw.Control(func(fd uintptr) {
		got, gerr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF)
	}); err != nil || gerr != nil {
		t.Fatal(err, gerr)
	}
	// Linux doubles what is set, for its own bookkeeping.
	if got > 2*scrapeRcvBuf {
		t.Errorf("SO_RCVBUF %d, want at most %d", got, 2*scrapeRcvBuf)
	}
}
