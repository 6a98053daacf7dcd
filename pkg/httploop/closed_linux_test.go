//go:build linux

package httploop

import (
	"context"
	"errors"
	"net"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/netloadgen/netloadgen/kserve"
)

// drop is an answer that closes the connection without a word, after the
// server has read the whole request.
func drop() (string, bool) { return "", true }

// A request the server read and then dropped its connection on was
// written: it may have run. It fails, as connection_closed, and is not
// sent again (the server saw 2 requests for 2 sent, not 3).
func TestLoopFailsARequestTheServerReadAndDropped(t *testing.T) {
	s := startServer(t, func(n int64) (string, bool) {
		if n == 1 {
			return drop()
		}
		return okResponse(""), false
	})
	var res results
	l := newLoop(t, Config{Addr: s.addr(), MaxConns: 1}, &res)
	for i := range 2 {
		l.Send(testRequest, uint64(i))
		pollFor(t, l, &res, i+1)
	}
	if err := res.errs[0]; err != nil {
		t.Fatalf("request 0: %v", err)
	}
	if err := res.errs[1]; !errors.Is(err, kserve.ErrConnectionClosed) || !errors.Is(err, kserve.ErrTransport) {
		t.Errorf("request 1, read and dropped by the server: error %v, want kserve.ErrConnectionClosed", err)
	}
	if got := s.requests.Load(); got != 2 {
		t.Errorf("server read %d requests for 2 sent: a written request was sent again", got)
	}
	if l.Retries() != 0 {
		t.Errorf("%d resends, want 0", l.Retries())
	}
}

// A server that drops the connection of every 10th request it reads, at
// 1,000 requests a second once the loop's answers have been timed (so
// Little's law, not the cap, bounds the pool): the dropped requests fail,
// every other one reaches the server and is answered, none twice, and
// nothing waits for answers that cannot come.
func TestDroppedConnectionsFailOnlyTheirRequests(t *testing.T) {
	s := startServer(t, func(n int64) (string, bool) {
		if n%10 == 9 {
			return drop()
		}
		return okResponse(""), false
	})
	var res results
	l := newLoop(t, Config{Addr: s.addr(), MaxConns: 64}, &res)
	if err := l.Preconnect(t.Context(), 16); err != nil {
		t.Fatal(err)
	}
	const n = 200
	next := time.Now()
	for i := range n {
		for time.Now().Before(next) {
			l.PollUntil(t.Context(), next)
		}
		l.Send(testRequest, uint64(i))
		next = next.Add(time.Millisecond)
	}
	ctx, cancel := context.WithDeadline(t.Context(), next.Add(2*time.Second))
	defer cancel()
	for len(res.errs) < n && ctx.Err() == nil {
		l.PollUntil(ctx, time.Now().Add(100*time.Millisecond))
	}
	if len(res.errs) < n {
		t.Fatalf("%d of %d requests ended 2 s after the last was sent (outstanding %d, queued %d, %d idle of %d connections); the server read %d",
			len(res.errs), n, l.Outstanding(), l.queue.Len(), len(l.idle), l.Conns(), s.requests.Load())
	}
	failed := 0
	for tag, err := range res.errs {
		if err == nil {
			continue
		}
		failed++
		if !errors.Is(err, kserve.ErrConnectionClosed) {
			t.Errorf("request %d: %v, want kserve.ErrConnectionClosed", tag, err)
		}
	}
	read := s.requests.Load()
	if read != n || failed != n/10 {
		t.Errorf("server read %d requests, %d failed; want %d read and the %d it dropped failed", read, failed, n, n/10)
	}
	if l.Retries() != 0 {
		t.Errorf("%d resends, want 0", l.Retries())
	}
}

// A connection the loop found closed before writing costs nothing: the
// server closes after each answer without saying so, the loop sees the
// close with the answer or while it waits, and the next request goes on a
// new connection, written once.
func TestLoopSkipsAConnectionFoundClosed(t *testing.T) {
	s := startServer(t, func(int64) (string, bool) { return okResponse(""), true })
	var res results
	l := newLoop(t, Config{Addr: s.addr(), MaxConns: 1}, &res)
	for i := range 5 {
		l.Send(testRequest, uint64(i))
		var c *conn // the one connection open (MaxConns 1): request i's
		for _, sc := range l.slots {
			if sc.state != stateClosed {
				c = sc
			}
		}
		gen := c.gen // its slot's next connection has another
		pollFor(t, l, &res, i+1)
		if err := res.errs[uint64(i)]; err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		for j := 0; c.gen == gen && c.state != stateClosed; j++ { // the loop sees the server's close
			if j == 1000 {
				t.Fatalf("request %d: the loop never saw the server close its connection", i)
			}
			l.PollUntil(t.Context(), time.Now().Add(10*time.Millisecond))
		}
	}
	if got := s.requests.Load(); got != 5 || l.Retries() != 0 {
		t.Fatalf("server read %d requests, %d resends; want 5 and 0", got, l.Retries())
	}
}

// A close that came with the answer is read with it: the connection is
// closed as the answer is delivered, not left idle (its sockets' events
// are edge-triggered, and nothing would report the close again).
func TestCloseWithTheAnswerClosesTheConnection(t *testing.T) {
	s := &testServer{answer: func(int64) (string, bool) { return okResponse(""), true }, wrote: make(chan time.Time, 1)}
	s.start(t)
	var res results
	l := newLoop(t, Config{Addr: s.addr(), MaxConns: 1}, &res)
	if err := l.Preconnect(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	l.Send(testRequest, 1)
	<-s.wrote
	c := l.slots[0]
	fd, gen := c.fd, c.gen
	for i := 0; ; i++ { // the server's close reaches the socket before the loop looks
		info, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO)
		if err == nil && info.State == 8 { // TCP_CLOSE_WAIT
			break
		}
		if i == 100000 {
			t.Fatalf("the client's socket never saw the server's close (%v)", err)
		}
		runtime.Gosched()
	}
	pollFor(t, l, &res, 1)
	if err := res.errs[1]; err != nil {
		t.Fatalf("request 1: %v", err)
	}
	// (The loop may already be dialling its replacement, in the same slot.)
	if c.gen == gen && c.state != stateClosed {
		t.Errorf("the connection is %s after an answer that came with the close, want closed", map[int]string{stateIdle: "idle", stateBusy: "busy"}[c.state])
	}
}

// A request whose write fails before its first byte left (the server had
// reset the connection) provably never reached the server: it is sent
// again on another connection, once, and counted.
func TestLoopResendsARequestItCouldNotWrite(t *testing.T) {
	reset := make(chan struct{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// The reset waits for the answer to be read (closeHold): a reset that
	// came with it would close the connection then, never written on.
	s := &testServer{ln: ln, answer: func(n int64) (string, bool) { return okResponse(""), n == 0 }, closeHold: make(chan struct{})}
	s.wg.Go(func() {
		// The first connection answers one request and is reset (linger
		// 0); the rest are served as usual.
		c, err := ln.Accept()
		if err != nil {
			return
		}
		s.conns.Add(1)
		_ = c.(*net.TCPConn).SetLinger(0) // the close after the answer resets
		s.serve(c)
		close(reset)
		s.accept()
	})
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	var res results
	l := newLoop(t, Config{Addr: s.addr(), MaxConns: 2}, &res)
	l.Send(testRequest, 0)
	pollFor(t, l, &res, 1)
	close(s.closeHold)
	<-reset
	// The reset reaches the idle connection; the loop does not poll before
	// the next send, so it writes on it and fails before any byte leaves.
	fd := l.idle[0].fd
	for i := 0; ; i++ {
		info, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO)
		if err == nil && info.State == 7 { // TCP_CLOSE
			break
		}
		if i == 100000 {
			t.Fatalf("the client's socket never saw the reset (%v)", err)
		}
		runtime.Gosched()
	}
	l.Send(testRequest, 1)
	pollFor(t, l, &res, 2)
	if err := res.errs[1]; err != nil {
		t.Fatalf("request 1: %v", err)
	}
	if l.Retries() != 1 || s.requests.Load() != 2 {
		t.Errorf("%d resends, server read %d requests; want 1 and 2", l.Retries(), s.requests.Load())
	}
}

// A graceful close (Connection: close answered, as nginx does after
// keepalive_requests) costs the next request nothing: the loop replaces
// the connection when it closes, so the next request, sent later, is
// written at once rather than queued behind a connect.
func TestGracefulCloseIsReplacedBeforeTheNextRequest(t *testing.T) {
	s := startServer(t, always(okResponse("Connection: close\r\n")))
	var res results
	l := newLoop(t, Config{Addr: s.addr(), MaxConns: 4}, &res)
	if err := l.Preconnect(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		for j := 0; len(l.idle) == 0; j++ {
			if j == 1000 {
				t.Fatalf("request %d: no idle connection after the last close (%d open)", i, l.Conns())
			}
			l.PollUntil(t.Context(), time.Now().Add(10*time.Millisecond))
		}
		l.Send(testRequest, uint64(i))
		if l.queue.Len() != 0 {
			t.Fatalf("request %d waits for a connection", i)
		}
		pollFor(t, l, &res, i+1)
		if err := res.errs[uint64(i)]; err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	if l.Retries() != 0 || s.requests.Load() != 5 {
		t.Errorf("%d resends, server read %d requests; want 0 and 5", l.Retries(), s.requests.Load())
	}
}
