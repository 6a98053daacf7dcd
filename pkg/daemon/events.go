package daemon

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/runstore"
)

// events streams a run as server-sent events (for `curl -N`): its state
// first, progress every half second while it runs, each state change, and
// the end of the stream after a terminal state.
func (s *Service) events(w http.ResponseWriter, r *http.Request) {
	rec, ok := s.run(w, r)
	if !ok {
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, api.CodeInternal, "streaming is not supported here", "")
		return
	}
	// The server's read timeout would cut a long stream: lift it for this one.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)

	changed := s.watch(rec.ID)
	defer s.unwatch(rec.ID, changed)
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()

	send := func(event string, v any) bool {
		b, _ := json.Marshal(v)
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return false
		}
		flusher.Flush()
		return true
	}
	last := runstore.State("")
	for {
		rec, err := s.store.Get(rec.ID)
		if err != nil {
			return
		}
		if rec.State != last {
			ev := api.StateEvent{ID: rec.ID, State: api.State(rec.State), At: time.Now().UTC(), Error: rec.Error, EndReason: rec.Reason}
			if rec.State.Terminal() {
				ev.Validity = s.sums.get(rec).validity
			}
			if !send(api.EventState, ev) {
				return
			}
			last = rec.State
		}
		if rec.State.Terminal() {
			return
		}
		s.mu.Lock()
		closing := s.closing
		s.mu.Unlock()
		if closing && rec.State == runstore.Queued {
			return // it stays queued for the next start; do not hold shutdown
		}
		if rec.State == runstore.Running {
			s.mu.Lock()
			a := s.active
			s.mu.Unlock()
			if a != nil && a.id == rec.ID {
				if p, ok := a.progress(); ok && !send(api.EventProgress, p) {
					return
				}
			}
		}
		select {
		case <-r.Context().Done():
			return
		case <-changed:
		case <-tick.C:
		}
	}
}

func (s *Service) watch(id string) chan struct{} {
	ch := make(chan struct{}, 1)
	s.mu.Lock()
	if s.watchers[id] == nil {
		s.watchers[id] = map[chan struct{}]struct{}{}
	}
	s.watchers[id][ch] = struct{}{}
	s.mu.Unlock()
	return ch
}

func (s *Service) unwatch(id string, ch chan struct{}) {
	s.mu.Lock()
	delete(s.watchers[id], ch)
	if len(s.watchers[id]) == 0 {
		delete(s.watchers, id)
	}
	s.mu.Unlock()
}

// notify wakes the event streams of a run.
func (s *Service) notify(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ch := range s.watchers[id] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// notifyAll wakes every stream (shutdown).
func (s *Service) notifyAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, set := range s.watchers {
		for ch := range set {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
}
