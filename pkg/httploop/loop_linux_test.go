//go:build linux

package httploop

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
)

// testServer answers each HTTP/1.1 request on 127.0.0.1 with answer(n),
// n counting requests from 0 across connections; answer returns the raw
// response and whether to close the connection after it. hold, when set,
// is waited on before answering.
type testServer struct {
	ln       net.Listener
	requests atomic.Int64
	conns    atomic.Int64
	answer   func(n int64) (string, bool)
	hold     chan struct{}
	wrote    chan time.Time // when set, gets the time each answer was written
	tls      *tls.Config    // when set, the server speaks TLS (tls_linux_test.go)
	// closeHold, when set, is received from before each close that follows
	// an answer, so that the connection is idle when it closes.
	closeHold chan struct{}
	wg        sync.WaitGroup
}

func startServer(t *testing.T, answer func(n int64) (string, bool)) *testServer {
	return startHeldServer(t, answer, nil)
}

func startHeldServer(t *testing.T, answer func(n int64) (string, bool), hold chan struct{}) *testServer {
	t.Helper()
	s := &testServer{answer: answer, hold: hold}
	s.start(t)
	return s
}

// start listens and serves until the test ends.
func (s *testServer) start(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if s.tls != nil {
		ln = tls.NewListener(ln, s.tls)
	}
	s.ln = ln
	s.wg.Go(s.accept)
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
}

func (s *testServer) accept() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.conns.Add(1)
		s.wg.Go(func() { s.serve(c) })
	}
}

func (s *testServer) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		if _, err := io.Copy(io.Discard, req.Body); err != nil {
			return
		}
		n := s.requests.Add(1) - 1
		if s.hold != nil {
			<-s.hold
		}
		resp, closeIt := s.answer(n)
		_, err = io.WriteString(c, resp)
		if s.wrote != nil && err == nil {
			s.wrote <- time.Now()
		}
		if err != nil || closeIt {
			if s.closeHold != nil && err == nil {
				<-s.closeHold
			}
			return
		}
	}
}

func (s *testServer) addr() string { return s.ln.Addr().String() }

var testRequest = []byte("POST /v2/models/null/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")

type results struct {
	errs map[uint64]error
	at   map[uint64]time.Time
}

func newLoop(t *testing.T, cfg Config, res *results) *Loop {
	t.Helper()
	res.errs, res.at = map[uint64]error{}, map[uint64]time.Time{}
	cfg.OnDone = func(tag uint64, at time.Time, err error) {
		if _, dup := res.errs[tag]; dup {
			t.Errorf("tag %d completed twice", tag)
		}
		res.errs[tag], res.at[tag] = err, at
	}
	l, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// pollFor polls until n completions arrived, bounded by ten seconds.
func pollFor(t *testing.T, l *Loop, res *results, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for len(res.errs) < n {
		if ctx.Err() != nil {
			t.Fatalf("%d of %d completions after 10 s", len(res.errs), n)
		}
		l.PollUntil(ctx, time.Now().Add(time.Second))
	}
}

func always(resp string) func(int64) (string, bool) {
	return func(int64) (string, bool) { return resp, false }
}

func TestLoopAnswersEveryRequestBeyondTheConnectionCap(t *testing.T) {
	s := startServer(t, always(okResponse("")))
	var res results
	l := newLoop(t, Config{Addr: s.addr(), MaxConns: 3}, &res)
	const n = 50
	for i := range n {
		l.Send(testRequest, uint64(i))
	}
	if got := l.Outstanding(); got != n {
		t.Fatalf("outstanding %d right after %d sends, want %d", got, n, n)
	}
	pollFor(t, l, &res, n)
	for tag, err := range res.errs {
		if err != nil {
			t.Errorf("tag %d: %v", tag, err)
		}
	}
	if c := s.conns.Load(); c > 3 {
		t.Errorf("%d connections opened, cap 3", c)
	}
	if l.Outstanding() != 0 {
		t.Errorf("outstanding %d after all answers", l.Outstanding())
	}
	// Answers must not count as finished connects: a negative count let
	// every momentary backlog dial up to the cap at once.
	if l.connecting != 0 {
		t.Errorf("%d connects in progress after all answers, want 0", l.connecting)
	}
}

// An answer read long after it arrived keeps its arrival time: the kernel's
// receive timestamp, not the read.
func TestLoopTimesAnswersByArrival(t *testing.T) {
	s := startServer(t, always(okResponse("")))
	var res results
	l := newLoop(t, Config{Addr: s.addr()}, &res)
	if err := l.Preconnect(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	l.Send(testRequest, 1)
	for s.requests.Load() == 0 { // wait until the server has it: the answer is on its way
		if time.Since(sent) > 10*time.Second {
			t.Fatal("the server never got the request")
		}
		l.PollUntil(context.Background(), time.Now())
	}
	// Let the answer sit in the socket a while before the loop reads it.
	time.Sleep(50 * time.Millisecond)
	read := time.Now()
	pollFor(t, l, &res, 1)
	at := res.at[1]
	if res.errs[1] != nil || at.Before(sent) || !at.Before(read) {
		t.Fatalf("answer at %v after the send, read from %v: want between (err %v)", at.Sub(sent), read.Sub(sent), res.errs[1])
	}
}

// A quiet wait is for its due time: an answer that arrives meanwhile does
// not end it, and is delivered at its end with the time it arrived. A
// request waiting for a connection needs its answer at once: no quiet wait.
// The same whether the loop's long waits park or block raw (GiveOwnP).
func TestQuietWaitLeavesAnswersForItsEnd(t *testing.T) {
	for _, ownP := range []bool{false, true} {
		t.Run(fmt.Sprintf("OwnP=%v", ownP), func(t *testing.T) { quietWaitLeavesAnswers(t, ownP) })
	}
}

func quietWaitLeavesAnswers(t *testing.T, ownP bool) {
	s := &testServer{answer: always(okResponse("")), wrote: make(chan time.Time, 4)}
	s.start(t)
	var res results
	l := newLoop(t, Config{Addr: s.addr(), MaxConns: 1}, &res)
	if ownP {
		l.GiveOwnP()
	}
	if err := l.Preconnect(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	l.Send(testRequest, 1)
	// On loopback the answer is in our socket when the server's write
	// returns: it is ready before the wait starts.
	wrote := <-s.wrote
	due := time.Now().Add(80 * time.Millisecond) // within rawio.QuietLimit
	delivered := l.PollQuietUntil(context.Background(), due)
	back := time.Now()
	if !delivered || res.errs[1] != nil {
		t.Fatalf("delivered %v, error %v: want the answer by the due time", delivered, res.errs[1])
	}
	if back.Before(due) {
		t.Errorf("the wait ended %v before its due time: the answer (written %v before it) woke it",
			due.Sub(back), due.Sub(wrote))
	}
	if at := res.at[1]; at.After(wrote.Add(time.Millisecond)) {
		t.Errorf("answer timed %v after the server wrote it: want its arrival, not its delivery", at.Sub(wrote))
	}

	l.Send(testRequest, 2)
	l.Send(testRequest, 3) // waits for the one connection
	if l.mayDefer() {
		t.Error("a quiet wait would hold back the answer a waiting request needs")
	}
	pollFor(t, l, &res, 3)
	if !l.mayDefer() {
		t.Error("no quiet wait with nothing waiting")
	}
}

func TestLoopReportsServerErrorsAsKServeErrors(t *testing.T) {
	s := startServer(t, always("HTTP/1.1 404 Not Found\r\nContent-Length: 25\r\n\r\n{\"error\":\"no such model\"}"))
	var res results
	l := newLoop(t, Config{Addr: s.addr()}, &res)
	l.Send(testRequest, 7)
	pollFor(t, l, &res, 1)
	if err := res.errs[7]; !errors.Is(err, kserve.ErrNotFound) {
		t.Fatalf("error %v, want kserve.ErrNotFound", err)
	}
}

func TestLoopHonoursConnectionClose(t *testing.T) {
	s := startServer(t, always(okResponse("Connection: close\r\n")))
	var res results
	l := newLoop(t, Config{Addr: s.addr(), MaxConns: 1}, &res)
	for i := range 3 {
		l.Send(testRequest, uint64(i))
	}
	pollFor(t, l, &res, 3)
	for tag, err := range res.errs {
		if err != nil {
			t.Errorf("tag %d: %v", tag, err)
		}
	}
	if l.Retries() != 0 {
		t.Errorf("%d retries: Connection: close needs none", l.Retries())
	}
}

func TestLoopTimesOutASilentServer(t *testing.T) {
	hold := make(chan struct{})
	s := startHeldServer(t, always(okResponse("")), hold)
	defer close(hold)
	var res results
	l := newLoop(t, Config{Addr: s.addr(), MaxConns: 1, Timeout: 20 * time.Millisecond}, &res)
	l.Send(testRequest, 1)
	l.Send(testRequest, 2) // waits for the one connection, and times out waiting
	pollFor(t, l, &res, 2)
	for _, tag := range []uint64{1, 2} {
		if err := res.errs[tag]; !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, kserve.ErrTransport) {
			t.Errorf("tag %d: error %v, want a transport deadline error", tag, err)
		}
	}
}

func TestLoopFailsRequestsWhenNothingListens(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var res results
	l := newLoop(t, Config{Addr: addr}, &res)
	l.Send(testRequest, 1)
	pollFor(t, l, &res, 1)
	if err := res.errs[1]; !errors.Is(err, kserve.ErrTransport) {
		t.Fatalf("error %v, want kserve.ErrTransport", err)
	}
	if err := l.Preconnect(context.Background(), 1); !errors.Is(err, kserve.ErrTransport) {
		t.Fatalf("preconnect error %v, want kserve.ErrTransport", err)
	}
}

func TestLoopPreconnectOpensConnections(t *testing.T) {
	s := startServer(t, always(okResponse("")))
	var res results
	l := newLoop(t, Config{Addr: s.addr(), MaxConns: 4}, &res)
	if err := l.Preconnect(context.Background(), 10); err != nil {
		t.Fatal(err)
	}
	if l.Conns() != 4 {
		t.Fatalf("%d connections, want the cap 4", l.Conns())
	}
}

func TestPollUntilReturnsWhenTheContextEnds(t *testing.T) {
	s := startServer(t, always(okResponse("")))
	var res results
	l := newLoop(t, Config{Addr: s.addr()}, &res)
	ctx, cancel := context.WithCancel(context.Background())
	go cancel()
	if l.PollUntil(ctx, time.Now().Add(time.Hour)) {
		t.Fatal("delivered a completion nobody asked for")
	}
	if ctx.Err() == nil {
		t.Fatal("PollUntil returned before its hour and before the cancel")
	}
}

func TestSendAfterCloseFails(t *testing.T) {
	var res results
	l := newLoop(t, Config{Addr: "127.0.0.1:1"}, &res)
	l.Close()
	l.Send(testRequest, 3)
	if !errors.Is(res.errs[3], ErrClosed) {
		t.Fatalf("error %v, want ErrClosed", res.errs[3])
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	done := func(uint64, time.Time, error) {}
	for _, cfg := range []Config{{Addr: "127.0.0.1:1"}, {Addr: "nohostport", OnDone: done}, {Addr: "127.0.0.1:1", MaxConns: -1, OnDone: done}} {
		if l, err := New(cfg); err == nil {
			l.Close()
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}

// startEchoServer answers every len(testRequest) bytes with okResponse
// and allocates nothing per request, so AllocsPerRun sees the client only.
func startEchoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	resp := []byte(okResponse(""))
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				buf := make([]byte, len(testRequest))
				for {
					if _, err := io.ReadFull(c, buf); err != nil {
						return
					}
					if _, err := c.Write(resp); err != nil {
						return
					}
				}
			})
		}
	})
	return ln.Addr().String()
}

// The steady state of a run — send, poll, deliver — allocates nothing.
func TestSteadyStateDoesNotAllocate(t *testing.T) {
	assertAllocs(t, startEchoServer(t), nil, 0)
}

// assertAllocs fails t if a request to the echo server at addr (over TLS
// with client set) allocates more than want objects.
func assertAllocs(t *testing.T, addr string, client *tls.Config, want float64) {
	var got int
	// With an answer check, as a run has: the answer's JSON is kept and
	// handed over without an allocation either.
	check := func(_ uint64, json []byte, _ int64) error {
		if string(json) != `{"model_name":"null"}` {
			return errors.New("not the answer's JSON")
		}
		return nil
	}
	l, err := New(Config{Addr: addr, MaxConns: 2, Timeout: time.Minute, Check: check, TLS: client, OnDone: func(_ uint64, _ time.Time, err error) {
		if err != nil {
			t.Fatal(err)
		}
		got++
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	round := func() {
		want := got + 1
		l.Send(testRequest, 1)
		for got < want {
			l.PollUntil(ctx, time.Now().Add(time.Second))
		}
	}
	for range 10 {
		round()
	}
	if a := testing.AllocsPerRun(200, round); a > want {
		t.Fatalf("%.2f allocations per request, want %v", a, want)
	}
}

// A backlog that lasts (a server slower than the open connections can
// carry) gets more connections, up to the cap: with every request held by
// the server, all 6 reach it at once only if the loop opened 6 connections.
func TestLastingBacklogOpensConnections(t *testing.T) {
	hold := make(chan struct{})
	s := startHeldServer(t, always(okResponse("")), hold)
	var res results
	l := newLoop(t, Config{Addr: s.addr(), MaxConns: 6}, &res)
	if err := l.Preconnect(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		l.Send(testRequest, uint64(i))
	}
	for i := 0; s.requests.Load() < 6; i++ {
		if i == 2000 {
			t.Fatalf("server saw %d requests on %d connections; loop: %d open, %d outstanding, queue %d", s.requests.Load(), s.conns.Load(), l.Conns(), l.Outstanding(), l.queue.Len())
		}
		l.PollUntil(t.Context(), time.Now().Add(time.Millisecond))
	}
	if c := s.conns.Load(); c != 6 {
		t.Errorf("%d connections for 6 held requests, want 6", c)
	}
	close(hold)
	pollFor(t, l, &res, 6)
	for tag, err := range res.errs {
		if err != nil {
			t.Errorf("tag %d: %v", tag, err)
		}
	}
}

// A backlog on more connections than Little's law gives for the load (a
// server that has stopped answering, not one that needs more connections)
// opens no more: 100 requests 2 ms apart, answered at once, time the
// connection at well under the gap; then the server holds every answer
// while 40 requests queue for a whole 20 ms, and the loop stays within the
// few connections the law allows instead of opening one per request.
func TestBacklogBeyondLittlesLawOpensNoConnections(t *testing.T) {
	release := make(chan struct{})
	const fast = 100
	s := startServer(t, func(n int64) (string, bool) {
		if n >= fast {
			<-release
		}
		return okResponse(""), false
	})
	released := false
	t.Cleanup(func() {
		if !released {
			close(release)
		}
	})
	var res results
	l := newLoop(t, Config{Addr: s.addr(), MaxConns: 64}, &res)
	if err := l.Preconnect(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	next := time.Now()
	for i := range fast {
		l.Send(testRequest, uint64(i))
		next = next.Add(2 * time.Millisecond)
		for time.Now().Before(next) {
			l.PollUntil(t.Context(), next)
		}
	}
	pollFor(t, l, &res, fast)
	if need := l.Needed(); need > 8 {
		t.Fatalf("Little's law gives %d connections for one request per 2 ms answered at once (svc %.0f ns, gap %.0f ns)", need, l.svc, l.gap)
	}
	for i := range 40 {
		l.Send(testRequest, uint64(fast+i))
	}
	end := time.Now().Add(20 * time.Millisecond)
	for time.Now().Before(end) {
		l.PollUntil(t.Context(), end)
	}
	if got := s.conns.Load(); got > int64(l.Needed()) || l.Conns() > l.Needed() {
		t.Errorf("a held backlog opened %d connections (loop: %d), Little's law allows %d", got, l.Conns(), l.Needed())
	}
	released = true
	close(release)
	pollFor(t, l, &res, fast+40)
	for tag, err := range res.errs {
		if err != nil {
			t.Errorf("tag %d: %v", tag, err)
		}
	}
}
