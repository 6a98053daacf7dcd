//go:build linux

package grpcloop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/netloadgen/netloadgen/kserve"
)

// outcome is one OnDone call.
type outcome struct {
	at  time.Time
	err error
}

// harness is a loop whose outcomes are kept by tag.
type harness struct {
	t    *testing.T
	l    *Loop
	done map[uint64]outcome
}

func newHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	h := &harness{t: t, done: map[uint64]outcome{}}
	cfg.OnDone = func(tag uint64, at time.Time, err error) {
		if _, dup := h.done[tag]; dup {
			t.Errorf("tag %d reported twice", tag)
		}
		h.done[tag] = outcome{at, err}
	}
	l, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	h.l = l
	return h
}

// drain polls until nothing is outstanding, failing the test after a
// generous bound rather than hanging.
func (h *harness) drain() {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for h.l.Outstanding() > 0 {
		if ctx.Err() != nil {
			h.t.Fatalf("%d calls still outstanding", h.l.Outstanding())
		}
		h.l.PollUntil(ctx, time.Now().Add(50*time.Millisecond))
	}
}

func testRequest(t *testing.T, addr string, timeout time.Duration) *Request {
	t.Helper()
	r, err := NewRequest(ModelInferPath, addr, timeout, []byte("\x0a\x04null"))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestAnswersByKind(t *testing.T) {
	kinds := map[int]action{1: answer, 2: errStatus, 3: reset, 4: badFrame, 5: continued, 6: refuse, 7: answer}
	s := startRaw(t, func(_, n int) action { return kinds[n] })
	h := newHarness(t, Config{Addr: s.addr(), Conns: 1})
	req := testRequest(t, s.addr(), 0)
	for tag := range uint64(6) {
		h.l.Send(req, tag+1)
		h.drain() // one at a time: the server numbers calls in order
	}
	// 6 was refused (RST_STREAM REFUSED_STREAM), so sent again: call 7.
	if h.l.Retries() != 1 {
		t.Errorf("%d retries, want 1 (the refused stream)", h.l.Retries())
	}
	for _, tag := range []uint64{1, 5, 6} {
		if o := h.done[tag]; o.err != nil || o.at.IsZero() {
			t.Errorf("call %d: %+v, want success with an arrival time", tag, o)
		}
	}
	var ke *kserve.Error
	if err := h.done[2].err; !errors.Is(err, kserve.ErrNotFound) || !errors.As(err, &ke) || ke.Message != `no model "m"` {
		t.Errorf("grpc-status 5: %v, want NOT_FOUND with the decoded message", err)
	}
	if err := h.done[3].err; !errors.Is(err, kserve.ErrTransport) || !strings.Contains(err.Error(), "INTERNAL_ERROR") {
		t.Errorf("RST_STREAM: %v, want a transport error naming the code", err)
	}
	if err := h.done[4].err; !errors.Is(err, kserve.ErrMalformed) {
		t.Errorf("cut message: %v, want ErrMalformed", err)
	}
	if got := s.conns.Load(); got != 1 {
		t.Errorf("%d connections, want 1: a stream's failure must not end its connection", got)
	}
}

func TestGoAwayRetriesTheUnprocessedCall(t *testing.T) {
	// Connection 0 holds call 1, then answers its second call with GOAWAY
	// (last stream 1) and call 1's answer; call 2 must go again on a new
	// connection.
	s := startRaw(t, func(conn, n int) action {
		switch {
		case conn == 0 && n == 1:
			return silence
		case conn == 0 && n == 2:
			return goAway
		}
		return answer
	})
	h := newHarness(t, Config{Addr: s.addr(), Conns: 1})
	if err := h.l.Preconnect(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	req := testRequest(t, s.addr(), 0)
	h.l.Send(req, 1)
	h.l.Send(req, 2)
	h.drain()
	for tag := range uint64(2) {
		if o := h.done[tag+1]; o.err != nil {
			t.Errorf("call %d: %v", tag+1, o.err)
		}
	}
	if h.l.Retries() != 1 || s.conns.Load() != 2 {
		t.Errorf("retries %d, connections %d; want 1 and 2", h.l.Retries(), s.conns.Load())
	}
	if n := h.l.Conns(); n != 1 {
		t.Errorf("%d connections open, want 1: the drained one closes", n)
	}
}

func TestServerCloseFailsOutstandingCalls(t *testing.T) {
	s := startRaw(t, func(conn, n int) action {
		if conn == 0 && n == 3 {
			return closeConn
		}
		return answer
	})
	h := newHarness(t, Config{Addr: s.addr(), Conns: 1})
	if err := h.l.Preconnect(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	req := testRequest(t, s.addr(), 0)
	for tag := range uint64(5) {
		h.l.Send(req, tag+1)
	}
	h.drain()
	for tag := uint64(1); tag <= 2; tag++ {
		if err := h.done[tag].err; err != nil {
			t.Errorf("call %d, answered before the close: %v", tag, err)
		}
	}
	// Call 3 was read by the server: it fails, as connection_closed, and
	// is not sent again. Calls 4 and 5 fail alike if they were written
	// before the loop saw the close; one whose write the kernel refused
	// outright (the server's close had already arrived) never reached it,
	// and goes on a new connection instead, counted.
	resent := 0
	for tag := uint64(3); tag <= 5; tag++ {
		err := h.done[tag].err
		if err == nil && tag > 3 {
			resent++
			continue
		}
		if !errors.Is(err, kserve.ErrConnectionClosed) || !errors.Is(err, kserve.ErrTransport) {
			t.Errorf("call %d: %v, want kserve.ErrConnectionClosed", tag, err)
		}
	}
	if got := int(h.l.Retries()); got != resent || s.calls.Load() != int64(3+resent) {
		t.Errorf("%d resends, server saw %d calls; want %d and %d", got, s.calls.Load(), resent, 3+resent)
	}
	h.l.Send(req, 6)
	h.drain()
	if err := h.done[6].err; err != nil {
		t.Errorf("call after the close: %v, want success on a new connection", err)
	}
}

// A call none of whose frames left (its write failed at once, on a
// connection already dead) never reached the server: it goes on another
// connection, once, counted, and succeeds there.
func TestCallNeverWrittenGoesOnAnotherConnection(t *testing.T) {
	s := startRaw(t, nil)
	h := newHarness(t, Config{Addr: s.addr(), Conns: 1})
	if err := h.l.Preconnect(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	// The connection can no longer send: the call's write fails with
	// nothing written.
	for _, c := range h.l.slots {
		if c.state == stateReady {
			if err := unix.Shutdown(c.fd, unix.SHUT_WR); err != nil {
				t.Fatal(err)
			}
		}
	}
	h.l.Send(testRequest(t, s.addr(), 0), 1)
	h.drain()
	if o := h.done[1]; o.err != nil {
		t.Errorf("call 1: %v, want success on a new connection", o.err)
	}
	if h.l.Retries() != 1 || s.calls.Load() != 1 || s.conns.Load() != 2 {
		t.Errorf("%d resends, server saw %d calls on %d connections; want 1, 1, 2", h.l.Retries(), s.calls.Load(), s.conns.Load())
	}
}

func TestTimeoutCancelsTheStream(t *testing.T) {
	s := startRaw(t, func(_, n int) action {
		if n == 1 {
			return silence
		}
		return answer
	})
	const timeout = 50 * time.Millisecond
	h := newHarness(t, Config{Addr: s.addr(), Conns: 1, Timeout: timeout})
	req := testRequest(t, s.addr(), timeout)
	h.l.Send(req, 1)
	h.drain()
	if err := h.done[1].err; !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, kserve.ErrTransport) {
		t.Fatalf("silent server: %v, want a deadline error", err)
	}
	h.l.Send(req, 2)
	h.drain()
	if err := h.done[2].err; err != nil || s.conns.Load() != 1 {
		t.Errorf("next call: %v on %d connections; want success on the same one", err, s.conns.Load())
	}
}

func TestRefusedConnectionFailsTheCall(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	h := newHarness(t, Config{Addr: addr})
	h.l.Send(testRequest(t, addr, 0), 1)
	h.drain()
	if err := h.done[1].err; !errors.Is(err, kserve.ErrTransport) {
		t.Errorf("refused: %v, want a transport error", err)
	}
	if err := h.l.Preconnect(t.Context(), 1); !errors.Is(err, kserve.ErrTransport) {
		t.Errorf("Preconnect: %v, want a transport error", err)
	}
}

func TestSendAfterCloseFails(t *testing.T) {
	s := startRaw(t, nil)
	h := newHarness(t, Config{Addr: s.addr()})
	h.l.Close()
	h.l.Send(testRequest(t, s.addr(), 0), 1)
	if err := h.done[1].err; !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v, want ErrClosed", err)
	}
}

func TestSteadyStateAllocatesNothing(t *testing.T) {
	s := startRaw(t, nil)
	h := newHarness(t, Config{Addr: s.addr(), Conns: 2, Timeout: time.Minute})
	if err := h.l.Preconnect(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	req := testRequest(t, s.addr(), time.Minute)
	ctx := t.Context()
	tag := uint64(0)
	// The harness's map would allocate as it grows: count only.
	n := 0
	h.l.cfg.OnDone = func(_ uint64, _ time.Time, err error) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	// With an answer check, as a run has: the message is kept and handed
	// over without an allocation either.
	h.l.cfg.Check = func(_ uint64, msg []byte) error {
		if !bytes.Equal(msg, rawAnswer) {
			return errors.New("not the answer's message")
		}
		return nil
	}
	call := func() {
		for range 8 {
			tag++
			h.l.Send(req, tag)
		}
		for h.l.Outstanding() > 0 && ctx.Err() == nil {
			h.l.PollUntil(ctx, time.Now().Add(time.Second))
		}
	}
	for range 50 {
		call() // warm up: ring, stream pool, buffers, HPACK table
	}
	if a := testing.AllocsPerRun(200, call); a != 0 {
		t.Errorf("%.2f allocations per 8 calls, want 0", a)
	}
	if n != int(tag) {
		t.Errorf("%d outcomes for %d calls", n, tag)
	}
}

func TestGoAwayAfterTheLastCallMovesOn(t *testing.T) {
	s := startRaw(t, func(conn, n int) action {
		if conn == 0 && n == 1 {
			return goAwayAfter
		}
		return answer
	})
	h := newHarness(t, Config{Addr: s.addr(), Conns: 1})
	req := testRequest(t, s.addr(), 0)
	h.l.Send(req, 1)
	h.drain()
	h.l.Send(req, 2)
	h.drain()
	for tag := uint64(1); tag <= 2; tag++ {
		if err := h.done[tag].err; err != nil {
			t.Errorf("call %d: %v", tag, err)
		}
	}
	if s.conns.Load() != 2 || h.l.Retries() != 0 {
		t.Errorf("connections %d, retries %d; want 2 and 0", s.conns.Load(), h.l.Retries())
	}
}

func TestNotAnHTTP2ServerFailsTheCall(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			// An HTTP/1.1 server's answer to the preface.
			c.Write([]byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
			c.Close()
		}
	}()
	addr := ln.Addr().String()
	h := newHarness(t, Config{Addr: addr, Conns: 2})
	h.l.Send(testRequest(t, addr, 0), 1)
	h.drain()
	if err := h.done[1].err; !errors.Is(err, kserve.ErrTransport) || !strings.Contains(err.Error(), "handshake") {
		t.Errorf("HTTP/1.1 server: %v, want a transport error about the handshake", err)
	}
	if err := h.l.Preconnect(t.Context(), 1); !errors.Is(err, kserve.ErrTransport) {
		t.Errorf("Preconnect: %v, want a transport error", err)
	}
}

// A quiet wait is for its due time: an answer that arrives meanwhile does
// not end it, and is delivered at its end with the time it arrived. Two
// calls on one connection are read as they come: one read of both would
// time the first by the second's arrival. The same whether the loop's long
// waits park or block raw (GiveOwnP).
func TestQuietWaitLeavesAnswersForItsEnd(t *testing.T) {
	for _, ownP := range []bool{false, true} {
		t.Run(fmt.Sprintf("OwnP=%v", ownP), func(t *testing.T) { quietWaitLeavesAnswers(t, ownP) })
	}
}

func quietWaitLeavesAnswers(t *testing.T, ownP bool) {
	s := &rawServer{wrote: make(chan time.Time, 4)}
	s.start(t)
	h := newHarness(t, Config{Addr: s.addr(), Conns: 1})
	if ownP {
		h.l.GiveOwnP()
	}
	if err := h.l.Preconnect(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	h.l.Send(testRequest(t, s.addr(), 0), 1)
	// On loopback the answer is in our socket when the server's write
	// returns: it is ready before the wait starts.
	wrote := <-s.wrote
	due := time.Now().Add(80 * time.Millisecond) // within rawio.QuietLimit
	delivered := h.l.PollQuietUntil(t.Context(), due)
	back := time.Now()
	if !delivered || h.done[1].err != nil {
		t.Fatalf("delivered %v, error %v: want the answer by the due time", delivered, h.done[1].err)
	}
	if back.Before(due) {
		t.Errorf("the wait ended %v before its due time: the answer (written %v before it) woke it",
			due.Sub(back), due.Sub(wrote))
	}
	if at := h.done[1].at; at.After(wrote.Add(time.Millisecond)) {
		t.Errorf("answer timed %v after the server wrote it: want its arrival, not its delivery", at.Sub(wrote))
	}

	h.l.Send(testRequest(t, s.addr(), 0), 2)
	h.l.Send(testRequest(t, s.addr(), 0), 3)
	if h.l.mayDefer() {
		t.Error("a quiet wait with two calls on one connection")
	}
	h.drain()
	if !h.l.mayDefer() {
		t.Error("no quiet wait with nothing outstanding")
	}
}

// Calls index their header fields in the server's HPACK table, within the
// room the server's SETTINGS give it: with the default table the blocks
// after the first refer to it, with none they never do.
func TestHeaderTableFollowsTheServersSettings(t *testing.T) {
	for _, size := range []uint32{defaultHeaderTable, 0} {
		s := &rawServer{table: &size}
		s.start(t)
		h := newHarness(t, Config{Addr: s.addr(), Conns: 1})
		const n = 5
		for i := range n {
			h.l.Send(testRequest(t, s.addr(), time.Second), uint64(i))
			h.drain()
			if err := h.done[uint64(i)].err; err != nil {
				t.Fatalf("table %d, call %d: %v", size, i, err)
			}
		}
		if e, p := s.hpackErrs.Load(), s.paths.Load(); e != 0 || p != n {
			t.Errorf("table %d: %d header blocks failed to decode, %d decoded with a :path; want 0 and %d", size, e, p, n)
		}
		c := h.l.slots[0]
		if primed := c.primed != nil; primed != (size > 0) {
			t.Errorf("table %d: primed %v", size, primed)
		}
	}
}

func TestPingIsAcknowledgedWithoutAnotherCall(t *testing.T) {
	s := startRaw(t, func(int, int) action { return pingAfter })
	h := newHarness(t, Config{Addr: s.addr(), Conns: 1})
	h.l.Send(testRequest(t, s.addr(), 0), 1)
	h.drain()
	if err := h.done[1].err; err != nil {
		t.Fatal(err)
	}
	// The ACK waits for a call to go with, but not past a long wait.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for s.acks.Load() == 0 && ctx.Err() == nil {
		h.l.PollUntil(ctx, time.Now().Add(10*time.Millisecond))
	}
	if s.acks.Load() != 1 {
		t.Fatalf("%d PING ACKs with the payload, want 1", s.acks.Load())
	}
}
