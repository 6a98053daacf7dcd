package rxstamp

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"testing"
	"time"
)

// pair returns a timestamped client connection and the server's end, over
// loopback, through a Listener.
func pair(t *testing.T) (*Conn, *Conn, *Listener) {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := NewListener(inner)
	t.Cleanup(func() { ln.Close() })
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	nc, err := Dial(context.Background(), &net.Dialer{}, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	sc, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	client, server := nc.(*Conn), sc.(*Conn)
	t.Cleanup(func() { client.Close(); server.Close() })
	if !client.Stamped() || !server.Stamped() {
		t.Skip("this kernel gives no SO_TIMESTAMPNS")
	}
	return client, server, ln
}

// warm exchanges bytes until a read carries a receive timestamp: the kernel
// turns them on for the whole stack only after the first socket asks, in
// deferred work, and packets until then carry none (Arrival then reports
// false and callers use the read time).
func warm(t *testing.T, client, server *Conn) {
	t.Helper()
	buf := make([]byte, 8)
	for i := 0; ; i++ {
		if i == 100_000 {
			t.Fatal("no receive timestamp after 100,000 exchanges")
		}
		client.Reset()
		if _, err := server.Write([]byte("w")); err != nil {
			t.Fatal(err)
		}
		if _, err := client.Read(buf); err != nil {
			t.Fatal(err)
		}
		if _, ok := client.Arrival(time.Now()); ok {
			client.Reset()
			return
		}
	}
}

func TestArrivalIsWhenTheDataCameNotWhenItWasRead(t *testing.T) {
	client, server, _ := pair(t)
	if _, ok := client.Arrival(time.Now()); ok {
		t.Fatal("an arrival before any data")
	}
	warm(t, client, server)
	before := time.Now()
	if _, err := server.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	// Read well after the data arrived (loopback delivers inside the
	// sender's write): the gap is what a late-waking reader would add.
	const gap = 20 * time.Millisecond
	for time.Since(after) < gap {
		runtime.Gosched()
	}
	buf := make([]byte, 16)
	n, err := client.Read(buf)
	if err != nil || string(buf[:n]) != "hello" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	now := time.Now()
	at, ok := client.Arrival(now)
	if !ok {
		t.Fatal("no arrival after a read")
	}
	// Wall and monotonic clocks may differ by a few µs of conversion.
	const slack = 200 * time.Microsecond
	if at.Before(before.Add(-slack)) || at.After(after.Add(slack)) {
		t.Errorf("arrival %v after the write began, want within the write (%v long)", at.Sub(before), after.Sub(before))
	}
	if now.Sub(at) < gap {
		t.Errorf("arrival only %v before the read returned; the read came %v after the data", now.Sub(at), gap)
	}
	client.Reset()
	if _, ok := client.Arrival(time.Now()); ok {
		t.Error("an arrival after Reset")
	}
}

func TestReadKeepsConnSemantics(t *testing.T) {
	client, server, _ := pair(t)
	if err := client.SetReadDeadline(time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Read(make([]byte, 4)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v, want os.ErrDeadlineExceeded", err)
	}
	if err := client.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	if n, err := client.Read(nil); n != 0 || err != nil {
		t.Fatalf("empty read: %d, %v", n, err)
	}
	// Data larger than one read arrives whole across reads.
	msg := make([]byte, 200_000)
	for i := range msg {
		msg[i] = byte(i * 7)
	}
	go func() {
		server.Write(msg)
		server.Close()
	}()
	got, err := io.ReadAll(client)
	if err != nil {
		t.Fatalf("read all: %v", err)
	}
	if len(got) != len(msg) || string(got) != string(msg) {
		t.Fatalf("read %d bytes, want %d identical", len(got), len(msg))
	}
	if n, err := client.Read(make([]byte, 4)); n != 0 || err != io.EOF {
		t.Fatalf("after the peer closed: %d, %v; want io.EOF", n, err)
	}
}

func TestListenerFindsConnectionsByPeer(t *testing.T) {
	client, server, ln := pair(t)
	if got := ln.Conn(client.LocalAddr()); got != server {
		t.Fatalf("Conn(%v) = %p, want the accepted connection %p", client.LocalAddr(), got, server)
	}
	if got := ln.Conn(server.LocalAddr()); got != nil {
		t.Fatalf("Conn of an address that is no peer = %p, want nil", got)
	}
	server.Close()
	if got := ln.Conn(client.LocalAddr()); got != nil {
		t.Fatal("a closed connection is still found")
	}
}

func TestReadDoesNotAllocate(t *testing.T) {
	client, server, _ := pair(t)
	buf := make([]byte, 64)
	msg := []byte("x")
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := server.Write(msg); err != nil {
			t.Fatal(err)
		}
		if _, err := client.Read(buf); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per write+read, want 0", allocs)
	}
}

func TestContextCarriesTheStamp(t *testing.T) {
	at := time.Now().Add(-time.Millisecond)
	st := NewStamp(at, nil)
	if got := FromContext(NewContext(context.Background(), st)); got != st || !got.Arrival.Equal(at) {
		t.Fatalf("FromContext = %+v, want %+v", got, st)
	}
	if got := FromContext(context.Background()); got != nil {
		t.Fatalf("a stamp in a bare context: %+v", got)
	}
	if st.OnDeparture(func(time.Time) { t.Error("called without a connection") }) {
		t.Error("OnDeparture without a connection reported true")
	}
	var none *Stamp
	if none.OnDeparture(func(time.Time) {}) {
		t.Error("OnDeparture of a nil stamp reported true")
	}
}

func TestDepartureIsTheNextWrite(t *testing.T) {
	_, server, _ := pair(t)
	st := NewStamp(time.Now(), server)
	got := make(chan time.Time, 2)
	if !st.OnDeparture(func(start time.Time) { got <- start }) {
		t.Fatal("OnDeparture on a connection reported false")
	}
	before := time.Now()
	if _, err := server.Write([]byte("answer")); err != nil {
		t.Fatal(err)
	}
	if _, err := server.Write([]byte("more")); err != nil {
		t.Fatal(err)
	}
	select {
	case start := <-got:
		if start.Before(before) {
			t.Errorf("departure %v before the write was asked for", before.Sub(start))
		}
	default:
		t.Fatal("no departure reported after a write")
	}
	if len(got) != 0 {
		t.Error("the callback ran for a second write")
	}
}
