package daemon

import (
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
	// streamWriteWait is how long a write to one stream may wait for room
	// in its socket buffer. A stream whose buffer is full has stopped
	// reading: it is dropped, not waited on, since one goroutine writes
	// every stream and must not stall the others (issue 26 #10).
	streamWriteWait = 5 * time.Millisecond
	// A round writes streamBurst events at a time, then pauses
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
	// From here on only the hub writes to w, under sub.mu.
	sub := s.hub.attach(rec.ID, responseConn{w: w, rc: rc})
	defer s.hub.detach(sub)
	select {
	case <-sub.done:
	case <-r.Context().Done():
		return
	}
	if !sub.dropped {
		// The hub's last write left a deadline milliseconds away; the
		// server's final chunk needs a little longer, and no more.
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

	mu      sync.Mutex // held by a write to conn, and to let go of it
	gone    bool       // the hub writes no more (dropped, ended, or its client left)
	dropped bool       // it was let go because it stopped reading
	done    chan struct{}
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
// and progress once a round, encodes each event once and writes it to
// every stream, each write bounded by streamWriteWait; a stream that cannot
// take it is dropped. The worker and the run only poke the hub (a
// non-blocking send): nothing on the run's path waits for, or works for,
// a subscriber. LOADGEND_MAX_EVENT_STREAMS caps the streams.
type eventHub struct {
	max      int
	wait     time.Duration                                        // streamWriteWait; a test's own
	writes   int                                                  // in this round; the hub's goroutine only
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
	sub := &subscriber{id: id, conn: conn, done: make(chan struct{})}
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

// let lets go of a stream: no more writes; done closed for the handler.
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
	}
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
// sends running runs' progress. It never waits on a stream more than
// streamWriteWait, and drops one that made it wait so.
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

// send writes one event to a stream, or drops the stream.
func (h *eventHub) send(sub *subscriber, b []byte) bool {
	if h.writes++; h.writes%streamBurst == 0 {
		time.Sleep(streamPause)
	}
	sub.mu.Lock()
	if sub.gone {
		sub.mu.Unlock()
		return false
	}
	_ = sub.conn.SetWriteDeadline(time.Now().Add(h.wait))
	_, err := sub.conn.Write(b)
	if err == nil {
		err = sub.conn.Flush()
	}
	sub.mu.Unlock()
	if err != nil {
		h.let(sub, true)
		return false
	}
	return true
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
