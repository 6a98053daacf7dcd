package worker

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/secret"
)

// The ends of a distributed run's traffic an executor acts on
// (api/distributed_run.go): the coordinator answered 409, the run ended
// (another worker was lost, it was cancelled): stop; it answered 400 to a
// record chunk, which it will not take again: stop too, since the run
// cannot be whole; the worker has no session (between registrations).
var (
	ErrRunEnded     = errors.New("the coordinator ended the run")
	ErrChunkRefused = errors.New("the coordinator refused the record chunk")
	ErrNoSession    = errors.New("the worker is not registered with its coordinator")
)

// recordsTimeout bounds one record chunk's POST: a chunk may be up to
// api.MaxRecordsBody, far more than a control request.
const recordsTimeout = 30 * time.Second

// Link is an executor's way to its coordinator during a distributed run:
// the worker's current session and token, the bounded timeouts, no
// redirect, the answers read to a bound, and the token scrubbed from every
// error, as for the worker's own requests.
type Link struct {
	c    *client
	name string
	// session is the current one; false between registrations.
	session func() (string, bool)
}

// Link returns the worker's link to its coordinator, on whatever session
// the worker holds when it is used.
func (w *Worker) Link() *Link {
	return &Link{c: w.c, name: w.cfg.Name, session: func() (string, bool) {
		if s := w.sess.Load(); s != nil {
			return s.id, true
		}
		return "", false
	}}
}

// NewLink is a link on a session registered elsewhere: a tool's, or a
// test's against a fake coordinator.
func NewLink(coordinator, token, name, session string) (*Link, error) {
	u, err := CoordinatorURL(coordinator)
	if err != nil {
		return nil, err
	}
	if err := api.CheckWorkerName(name); err != nil {
		return nil, fmt.Errorf("%w: name: %v", ErrConfig, err)
	}
	c := &client{base: u, token: token, http: newHTTPClient(), scrub: secret.NewScrubber(token)}
	return &Link{c: c, name: name, session: func() (string, bool) { return session, session != "" }}, nil
}

// runPath is the path of one of run's routes and the session, or an error
// for a run ID that cannot be one path segment or a worker without one.
func (l *Link) runPath(runID, route string) (string, string, error) {
	if runID == "" || strings.ContainsAny(runID, "/?#%\\") || runID == "." || runID == ".." {
		return "", "", fmt.Errorf("run id %q: not one path segment", runID)
	}
	s, ok := l.session()
	if !ok {
		return "", "", ErrNoSession
	}
	return "/v1/workers/" + l.name + "/runs/" + runID + "/" + route, s, nil
}

// Ready posts POST .../runs/{id}/ready with r and returns the answer and
// its status: 200 with StartNs (on the worker's clock), 202 with RetryMs.
// A 409 wraps ErrRunEnded; status 0 is no answer (the network).
func (l *Link) Ready(ctx context.Context, runID string, r api.WorkerReady) (api.WorkerStart, int, error) {
	path, s, err := l.runPath(runID, "ready")
	if err != nil {
		return api.WorkerStart{}, 0, err
	}
	var out api.WorkerStart
	status, err := l.c.do(ctx, http.MethodPost, path, s, r, &out, requestTimeout)
	if isStatus(err, http.StatusConflict) {
		err = fmt.Errorf("%w: %w", ErrRunEnded, err)
	}
	return out, status, err
}

// Records posts one record chunk (api.RecordsMediaType). nil: applied (or
// a resend already applied). A 409 wraps ErrRunEnded, a 400
// ErrChunkRefused; any other error is worth a resend.
func (l *Link) Records(ctx context.Context, runID string, chunk []byte) error {
	path, s, err := l.runPath(runID, "records")
	if err != nil {
		return err
	}
	if len(chunk) > api.MaxRecordsBody {
		return fmt.Errorf("%w: %d bytes, over the %d a chunk may have", ErrChunkRefused, len(chunk), api.MaxRecordsBody)
	}
	_, err = l.c.sendBytes(ctx, http.MethodPost, path, s, api.RecordsMediaType, chunk, nil, recordsTimeout)
	err = l.c.scrub.Error(err)
	switch {
	case isStatus(err, http.StatusConflict):
		return fmt.Errorf("%w: %w", ErrRunEnded, err)
	case isStatus(err, http.StatusBadRequest):
		return fmt.Errorf("%w: %w", ErrChunkRefused, err)
	}
	return err
}
