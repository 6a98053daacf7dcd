package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/runstore"
)

// DefaultMaxEventStreams is LOADGEND_MAX_EVENT_STREAMS's default.
const DefaultMaxEventStreams = 64

const (
	// eventTick is how often a running run's progress is published.
	eventTick = 500 * time.Millisecond
	// streamQueue is how many events may wait for a stream's writer. Its
	// writer waits only when the stream's socket buffer is full, which a
	// client that reads never lets happen: a stream with this many events
	// queued has stopped reading, and is dropped rather than waited on
	// (issue 26 #10). At two events a second, that is seconds of silence
	// after its buffer filled.
	streamQueue = 8
	// streamWriteWait bounds one write to a stream: a client that takes
	// nothing for that long is dropped too. It is long, so that a writer
	// the scheduler held back (a loaded machine) never loses a client that
	// reads; what bounds the hub is the queue, which it never waits on.
	streamWriteWait = 10 * time.Second
	// A round queues streamBurst events at a time, then pauses
	// streamPause: a thousand writes in one go hold a CPU for milliseconds,
	// which on a small machine is the issuer's (issue 26 #10).
	streamBurst = 32
	streamPause = time.Millisecond
	// streamEndWait bounds the end of a stream's response (its last
	// chunk) once the hub has let it go.
	streamEndWait = time.Second
)

// errTooManyStreams: LOADGEND_MAX_EVENT_STREAMS streams are open.
var errTooManyStreams = errors.New("too many event streams")

// events streams a run as server-sent events (for `curl -N`): its state
// first, progress every half second while it runs, each state change, and
// the end of the stream after a terminal state. The handler only opens
// and closes the stream: the service's one eventHub goroutine writes every
// stream's events (see eventHub).
func (s *Service) events(w http.ResponseWriter, r *http.Request) {
	rec, ok := s.run(w, r)
	if !ok {
		return
	}
	if _, ok := w.(http.Flusher); !ok {
		writeError(w, http.StatusInternalServerError, api.CodeInternal, "streaming is not supported here", "")
		return
	}
	if err := s.hub.reserve(); err != nil {
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusServiceUnavailable, api.CodeUnavailable,
			fmt.Sprintf("%d event streams are open, the most LOADGEND_MAX_EVENT_STREAMS allows: close one, or raise the setting", s.hub.max), "")
		return
	}
	defer s.hub.release()
	// The server's read timeout would cut a long stream: lift it for this one.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if rc.Flush() != nil {
		return
	}
	// From here on this goroutine writes to w only what the hub queues.
	sub := s.hub.attach(rec.ID, responseConn{w: w, rc: rc})
	defer s.hub.detach(sub)
	if !s.hub.serve(r.Context(), sub) {
		return
	}
	if !sub.wasDropped() {
		// The server's final chunk gets a deadline of its own, a short
		// one: the stream is over.
		_ = rc.SetWriteDeadline(time.Now().Add(streamEndWait))
	}
	// A dropped stream gets no farewell: its socket buffer is full (that
	// is why it was dropped) and its last event may be cut. Returning
	// with the deadline passed closes the connection.
}

// streamConn is where a stream's events go: the response, or in a test a
// pipe that nobody reads.
type streamConn interface {
	Write([]byte) (int, error)
	SetWriteDeadline(time.Time) error
	Flush() error
}

type responseConn struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func (c responseConn) Write(b []byte) (int, error)        { return c.w.Write(b) }
func (c responseConn) SetWriteDeadline(t time.Time) error { return c.rc.SetWriteDeadline(t) }
func (c responseConn) Flush() error                       { return c.rc.Flush() }

// subscriber is one open event stream.
type subscriber struct {
	id   string
	conn streamConn
	last runstore.State // the state it was last sent; the hub's goroutine only
	out  chan []byte    // events queued by the hub for serve to write

	mu      sync.Mutex
	gone    bool // the hub queues no more (dropped, ended, or its client left)
	dropped bool // it was let go because it stopped reading
	done    chan struct{}
}

func (sub *subscriber) wasDropped() bool {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	return sub.dropped
}

// eventSnapshot is what one round publishes about a run: read once,
// whatever the number of its streams.
type eventSnapshot struct {
	state    api.StateEvent
	progress *api.Progress // while it runs, on a tick
	end      bool          // the stream ends after the state (terminal; or queued while the daemon closes)
}

// eventHub fans a run's events out to its streams (issue 26 #10). Before,
// each stream had its own goroutine reading the run's record and progress
// and encoding them every half second: a thousand streams woke a thousand
// goroutines at once beside the run's issuer, and one that did not read
// blocked its goroutine for ever. Now one goroutine reads each run's state
// and progress once a round, encodes each event once and queues it for
// every stream, in bursts; each stream's handler writes its queue (serve).
// The hub never waits on a stream: one whose queue is full, or whose
// write waits streamWriteWait, has stopped reading and is dropped. The
// worker and the run only poke the hub (a non-blocking send): nothing on
// the run's path waits for, or works for, a subscriber.
// LOADGEND_MAX_EVENT_STREAMS caps the streams.
type eventHub struct {
	max      int
	wait     time.Duration                                        // streamWriteWait; a test's own
	writes   int                                                  // queued in this round; the hub's goroutine only
	snapshot func(id string, progress bool) (eventSnapshot, bool) // false: no such run
	poke     chan struct{}
	stop     chan struct{}
	stopped  chan struct{}

	mu   sync.Mutex
	open int // streams reserved, attached or not
	subs map[string]map[*subscriber]struct{}
}

func newEventHub(max int, snapshot func(string, bool) (eventSnapshot, bool)) *eventHub {
	if max <= 0 {
		max = DefaultMaxEventStreams
	}
	return &eventHub{max: max, wait: streamWriteWait, snapshot: snapshot, poke: make(chan struct{}, 1), stop: make(chan struct{}),
		stopped: make(chan struct{}), subs: map[string]map[*subscriber]struct{}{}}
}

// reserve counts a stream in, or refuses it past the cap.
func (h *eventHub) reserve() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.open >= h.max {
		return errTooManyStreams
	}
	h.open++
	return nil
}

func (h *eventHub) release() {
	h.mu.Lock()
	h.open--
	h.mu.Unlock()
}

// attach adds a stream of run id and has the hub send it the run's state.
func (h *eventHub) attach(id string, conn streamConn) *subscriber {
	sub := &subscriber{id: id, conn: conn, out: make(chan []byte, streamQueue), done: make(chan struct{})}
	h.mu.Lock()
	if h.subs[id] == nil {
		h.subs[id] = map[*subscriber]struct{}{}
	}
	h.subs[id][sub] = struct{}{}
	h.mu.Unlock()
	h.wake()
	return sub
}

// detach is the handler's, as it returns: once it returns the hub no
// longer writes to the stream.
func (h *eventHub) detach(sub *subscriber) { h.let(sub, false) }

// let lets go of a stream: no more events; done closed for the handler. A
// dropped stream's write in progress is cut short: it will not be read.
func (h *eventHub) let(sub *subscriber, dropped bool) {
	h.mu.Lock()
	if set := h.subs[sub.id]; set != nil {
		delete(set, sub)
		if len(set) == 0 {
			delete(h.subs, sub.id)
		}
	}
	h.mu.Unlock()
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if !sub.gone {
		sub.gone, sub.dropped = true, dropped
		close(sub.done)
		if dropped {
			_ = sub.conn.SetWriteDeadline(time.Now())
		}
	}
}

// serve writes sub's queued events to its stream until the hub lets it go
// (then the events queued before that, unless it was dropped) or ctx ends;
// false when ctx ended it. A write that fails drops the stream. It is the
// stream's handler goroutine, which would otherwise only wait: the hub
// itself never writes, so no stream can hold it up.
func (h *eventHub) serve(ctx context.Context, sub *subscriber) bool {
	for {
		select {
		case b := <-sub.out:
			if !h.write(sub, b) {
				return true
			}
		case <-sub.done:
			for !sub.wasDropped() {
				select {
				case b := <-sub.out:
					if !h.write(sub, b) {
						return true
					}
				default:
					return true
				}
			}
			return true
		case <-ctx.Done():
			return false
		}
	}
}

// write writes one event to sub's stream within h.wait, or drops it. The
// deadline is set under sub.mu, as let sets a dropped stream's: a drop
// either comes first (nothing is written) or cuts the write short.
func (h *eventHub) write(sub *subscriber, b []byte) bool {
	sub.mu.Lock()
	if sub.dropped {
		sub.mu.Unlock()
		return false
	}
	_ = sub.conn.SetWriteDeadline(time.Now().Add(h.wait))
	sub.mu.Unlock()
	_, err := sub.conn.Write(b)
	if err == nil {
		err = sub.conn.Flush()
	}
	if err != nil {
		h.let(sub, true)
		return false
	}
	return true
}

// wake asks for a round without progress (a state may have changed); it
// never blocks.
func (h *eventHub) wake() {
	select {
	case h.poke <- struct{}{}:
	default:
	}
}

// run is the hub's goroutine, until close.
func (h *eventHub) run() {
	defer close(h.stopped)
	tick := time.NewTicker(eventTick)
	defer tick.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-h.poke:
			h.round(false)
		case <-tick.C:
			h.round(true)
		}
	}
}

// close stops the hub and lets go of the streams left.
func (h *eventHub) close() {
	close(h.stop)
	<-h.stopped
	for _, sub := range h.all() {
		h.let(sub, false)
	}
}

// all is a copy of the streams, grouped by nothing.
func (h *eventHub) all() []*subscriber {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []*subscriber
	for _, set := range h.subs {
		for sub := range set {
			out = append(out, sub)
		}
	}
	return out
}

// round publishes each watched run's state to the streams that have not
// seen it, ends the streams of runs that ended, and with progress set
// sends running runs' progress. It never waits on a stream: it queues,
// and drops a stream whose queue is full.
func (h *eventHub) round(progress bool) {
	h.writes = 0
	byRun := map[string][]*subscriber{}
	for _, sub := range h.all() {
		byRun[sub.id] = append(byRun[sub.id], sub)
	}
	for id, subs := range byRun {
		snap, ok := h.snapshot(id, progress)
		if !ok {
			for _, sub := range subs {
				h.let(sub, false)
			}
			continue
		}
		var stateFrame, progressFrame []byte
		if snap.progress != nil {
			progressFrame = frame(api.EventProgress, snap.progress)
		}
		for _, sub := range subs {
			if sub.last != runstore.State(snap.state.State) {
				if stateFrame == nil {
					stateFrame = frame(api.EventState, snap.state)
				}
				if !h.send(sub, stateFrame) {
					continue
				}
				sub.last = runstore.State(snap.state.State)
			}
			switch {
			case snap.end:
				h.let(sub, false)
			case progressFrame != nil:
				h.send(sub, progressFrame)
			}
		}
	}
}

// send queues one event for a stream, or drops the stream when its queue
// is full. Every streamBurst events it pauses: the streams' writers wake as
// their events come, and a thousand writes at once would hold a CPU for
// milliseconds, which on a small machine is the issuer's (issue 26 #10).
func (h *eventHub) send(sub *subscriber, b []byte) bool {
	if h.writes++; h.writes%streamBurst == 0 {
		time.Sleep(streamPause)
	}
	select {
	case sub.out <- b:
		return true
	default:
		h.let(sub, true)
		return false
	}
}

// frame is one server-sent event.
func frame(event string, v any) []byte {
	b, _ := json.Marshal(v)
	return fmt.Appendf(nil, "event: %s\ndata: %s\n\n", event, b)
}

// eventSnapshot reads what the hub publishes about run id: its record,
// and its live progress when asked and it is the active run.
func (s *Service) eventSnapshot(id string, progress bool) (eventSnapshot, bool) {
	rec, err := s.store.Get(id)
	if err != nil {
		return eventSnapshot{}, false
	}
	snap := eventSnapshot{state: api.StateEvent{ID: rec.ID, State: api.State(rec.State), At: time.Now().UTC(), Error: rec.Error, EndReason: rec.Reason}}
	s.mu.Lock()
	closing, a := s.closing, s.active
	s.mu.Unlock()
	switch {
	case rec.State.Terminal():
		snap.state.Validity = s.sums.get(rec).validity
		snap.end = true
	case closing && rec.State == runstore.Queued:
		snap.end = true // it stays queued for the next start; do not hold shutdown
	case progress && rec.State == runstore.Running && a != nil && a.id == rec.ID:
		if p, ok := a.progress(); ok {
			snap.progress = &p
		}
	}
	return snap, true
}

// notify wakes the hub: run id's state may have changed.
func (s *Service) notify(string) { s.hub.wake() }

// notifyAll wakes the hub (shutdown).
func (s *Service) notifyAll() { s.hub.wake() }
