package daemon

import (
	"net"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
)

// pipeConn is a stream over net.Pipe, whose writes block until the other
// end reads: a client that never reads, with no buffer at all.
type pipeConn struct{ net.Conn }

func (pipeConn) Flush() error { return nil }

// The hub never waits on a stream that does not read (issue 26 #10): with
// every stream stuck, each round returns, and the stuck streams are
// dropped (done closed, dropped set), not waited on. A regression blocks
// the round: it runs in a goroutine and the test fails after a bounded
// wait instead of hanging.
func TestEventHubNeverBlocksOnStuckStreams(t *testing.T) {
	const streams, rounds = 8, 50
	snap := func(id string, progress bool) (eventSnapshot, bool) {
		s := eventSnapshot{state: api.StateEvent{ID: id, State: api.StateRunning}}
		if progress {
			s.progress = &api.Progress{Issued: 1}
		}
		return s, true
	}
	h := newEventHub(streams, snap)
	var subs []*subscriber
	for range streams {
		if err := h.reserve(); err != nil {
			t.Fatal(err)
		}
		server, client := net.Pipe()
		t.Cleanup(func() { server.Close(); client.Close() })
		subs = append(subs, h.attach("r1", pipeConn{server})) // client never reads
	}
	if err := h.reserve(); err == nil {
		t.Errorf("a stream past the cap of %d was reserved", streams)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range rounds {
			h.round(i%2 == 0)
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%d rounds over %d stuck streams did not return within 30 s: the hub waits on them", rounds, streams)
	}
	for i, sub := range subs {
		select {
		case <-sub.done:
			if !sub.dropped {
				t.Errorf("stream %d: let go, but not as dropped", i)
			}
		default:
			t.Errorf("stream %d: stuck, and still attached", i)
		}
	}
	if n := len(h.all()); n != 0 {
		t.Errorf("%d streams still attached", n)
	}
}

// A stream that reads gets the state once, then progress each round that
// asks for it, and is let go (not dropped) after a terminal state.
func TestEventHubDelivers(t *testing.T) {
	state := api.StateRunning
	h := newEventHub(1, func(id string, progress bool) (eventSnapshot, bool) {
		s := eventSnapshot{state: api.StateEvent{ID: id, State: state}, end: state.Terminal()}
		if progress && !state.Terminal() {
			s.progress = &api.Progress{Issued: 7}
		}
		return s, true
	})
	server, client := net.Pipe()
	defer server.Close()
	defer client.Close()
	got := make(chan string, 16)
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := client.Read(b)
			if err != nil {
				close(got)
				return
			}
			got <- string(b[:n])
		}
	}()
	// net.Pipe has no buffer: a write waits for the reader goroutine, which
	// a loaded machine may not run within streamWriteWait.
	h.wait = time.Minute
	sub := h.attach("r1", pipeConn{server})
	h.round(false)
	h.round(true)
	h.round(false) // nothing new: no write
	state = api.StateDone
	h.round(true)
	want := []string{"event: state", "event: progress", "event: state"}
	for i, w := range want {
		select {
		case s := <-got:
			if len(s) < len(w) || s[:len(w)] != w {
				t.Errorf("write %d: %q, want %s", i, s, w)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("write %d (%s) never came", i, w)
		}
	}
	select {
	case <-sub.done:
		if sub.dropped {
			t.Error("a reading stream was dropped")
		}
	default:
		t.Error("the stream was not ended after the terminal state")
	}
}
