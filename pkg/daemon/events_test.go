package daemon

import (
	"io"
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
// every stream stuck (its writer blocked in a write nobody reads), each
// round returns, the stuck streams are dropped (done closed, dropped set)
// once their queues fill, and their writers return although the write
// timeout is a minute away. A regression blocks the round or a writer:
// they run in goroutines and the test fails after a bounded wait instead
// of hanging.
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
	h.wait = time.Minute
	var subs []*subscriber
	writers := make(chan bool, streams)
	for range streams {
		if err := h.reserve(); err != nil {
			t.Fatal(err)
		}
		server, client := net.Pipe()
		t.Cleanup(func() { server.Close(); client.Close() })
		sub := h.attach("r1", pipeConn{server}) // client never reads
		subs = append(subs, sub)
		go func() { writers <- h.serve(t.Context(), sub) }()
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
	for i := range streams {
		select {
		case <-writers:
		case <-time.After(30 * time.Second):
			t.Fatalf("%d of %d stuck streams' writers still blocked 30 s after their drop", streams-i, streams)
		}
	}
}

// A writer the scheduler holds back loses no event: the hub queues, and a
// stream whose writer has not run yet is not dropped while its queue has
// room (a loaded machine dropped reading clients when the hub itself
// wrote with a deadline of milliseconds).
func TestEventHubKeepsASlowWriter(t *testing.T) {
	h := newEventHub(1, func(id string, progress bool) (eventSnapshot, bool) {
		s := eventSnapshot{state: api.StateEvent{ID: id, State: api.StateRunning}}
		if progress {
			s.progress = &api.Progress{Issued: 1}
		}
		return s, true
	})
	server, client := net.Pipe()
	defer server.Close()
	defer client.Close()
	sub := h.attach("r1", pipeConn{server})
	for range streamQueue - 2 { // the state and progress, then progress: all but one place
		h.round(true)
	}
	select {
	case <-sub.done:
		t.Fatal("a stream whose writer had not run yet was dropped")
	default:
	}
	go func() { _, _ = io.Copy(io.Discard, client) }()
	h.round(true) // the queue's last place
	h.let(sub, false)
	served := make(chan bool, 1)
	go func() { served <- h.serve(t.Context(), sub) }()
	select {
	case ok := <-served:
		if !ok || sub.wasDropped() {
			t.Errorf("the slow writer's stream was dropped")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the writer still had not written its queue 30 s after the end")
	}
	if n := len(sub.out); n != 0 {
		t.Errorf("%d queued events were not written before the end", n)
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
	sub := h.attach("r1", pipeConn{server})
	go h.serve(t.Context(), sub)
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
