package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/netloadgen/netloadgen/api"
)

// runPause is how many times its own time a request's slot stays taken
// after it while a run issues.
const runPause = 7

// DefaultAPIConcurrency is LOADGEND_API_CONCURRENCY's default.
const DefaultAPIConcurrency = 2

// The gate's queue: how many requests past the cap may wait for a slot, and
// how long each may wait before its 503.
const (
	apiQueueMax  = 256
	apiQueueWait = 2 * time.Second
)

// apiGate bounds the /v1 requests served at once (issue 17 #5). The run's
// issuer shares the daemon's CPUs with the API, and Go's scheduler does not
// favour it: fifty requests at once put fifty goroutines ahead of it. Past
// the cap a request waits for a slot, briefly; past the queue, or when its
// wait is over, it is answered 503 unavailable with Retry-After. The issuer
// never waits on the gate; only the API does.
type apiGate struct {
	slots chan struct{} // one per request being served
	queue chan struct{} // one per request waiting for a slot
	wait  time.Duration
}

func newAPIGate(concurrency int) *apiGate {
	if concurrency <= 0 {
		concurrency = DefaultAPIConcurrency
	}
	return &apiGate{slots: make(chan struct{}, concurrency), queue: make(chan struct{}, apiQueueMax), wait: apiQueueWait}
}

// enter takes a slot, waiting for one up to the gate's wait; false when
// none came (or ctx ended first).
func (g *apiGate) enter(ctx context.Context) bool {
	select {
	case g.slots <- struct{}{}:
		return true
	default:
	}
	select {
	case g.queue <- struct{}{}:
	default:
		return false // the queue is full too
	}
	defer func() { <-g.queue }()
	t := time.NewTimer(g.wait)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

func (g *apiGate) leave() { <-g.slots }

// ungated are the /v1 routes that take no slot: a stream lasts as long as
// its run and would hold one; a cancel must get through however busy the
// API is, since it is what stops the load (issue 26 #3). /healthz and
// /readyz are outside /v1 and never gated.
var ungated = []api.Route{
	{Method: "GET", Path: "/v1/runs/{id}/events"},
	{Method: "POST", Path: "/v1/runs/{id}/cancel"},
	// A worker's heartbeat, long poll and clock exchange (fleet_handlers.go).
	{Method: "POST", Path: "/v1/workers/{name}/heartbeat"},
	{Method: "GET", Path: "/v1/workers/{name}/work"},
	{Method: "POST", Path: "/v1/workers/{name}/clock"},
	// A distributed run's ready (held for the start) and records: the
	// run's own traffic, which a busy API must not delay (distrun.go).
	{Method: "POST", Path: "/v1/workers/{name}/runs/{id}/ready"},
	recordsRoute,
}

// bodyRead reads a request's body, bounded in size (maxBody) and in time
// (LOADGEND_BODY_TIMEOUT), before h, which the gate wraps, so that a body
// that is slow to come holds no slot (issue 26 #3: two connections sending
// a byte a second kept every /v1 request at 503 for minutes). h reads the
// body from memory.
func (s *Service) bodyRead(h http.Handler) http.Handler {
	return s.bodyReadMax(h, s.maxBody())
}

// bodyReadMax is bodyRead with a bound of its own: a worker's record chunk
// is larger than any JSON body.
func (s *Service) bodyReadMax(h http.Handler, maxBody int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			h.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		timeout := s.bodyTimeout()
		_ = rc.SetReadDeadline(time.Now().Add(timeout))
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			writeError(w, http.StatusRequestEntityTooLarge, api.CodeBodyTooLarge, fmt.Sprintf("the body is over %d bytes", maxBody), "")
			return
		case errors.Is(err, os.ErrDeadlineExceeded):
			w.Header().Set("Connection", "close")
			writeError(w, http.StatusRequestTimeout, api.CodeBodyTimeout,
				fmt.Sprintf("the request body did not arrive within %v (LOADGEND_BODY_TIMEOUT): send it whole, at once", timeout), "")
			return
		case err != nil:
			writeError(w, http.StatusBadRequest, api.CodeInvalidRequest, "reading the body: "+err.Error(), "")
			return
		}
		// The body is in: the server's read deadline has nothing left to
		// bound, and one that passed while the handler works would cancel
		// the request's context.
		_ = rc.SetReadDeadline(time.Time{})
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	})
}

func (s *Service) bodyTimeout() time.Duration {
	if s.cfg.BodyTimeout > 0 {
		return s.cfg.BodyTimeout
	}
	return DefaultBodyTimeout
}

// gated serves h through the gate.
func (s *Service) gated(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.gate.enter(r.Context()) {
			w.Header().Set("Retry-After", "1")
			writeError(w, http.StatusServiceUnavailable, api.CodeUnavailable, "too many API requests at once: retry after a second", "")
			return
		}
		start := time.Now()
		h.ServeHTTP(w, r)
		if !s.running() {
			s.gate.leave()
			return
		}
		// While a run issues, the slot is kept runPause times as long
		// again as the request took: each slot serves at most an eighth
		// of the time, so that the API (and its clients' reading, when
		// they are on the same machine) leave the run's issuer a CPU.
		time.AfterFunc(runPause*time.Since(start), s.gate.leave)
	})
}

// running reports whether a run is being carried out.
func (s *Service) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active != nil
}
