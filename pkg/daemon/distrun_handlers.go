package daemon

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/shardrec"
)

// The routes of a distributed run's traffic (api/distributed_run.go): a
// worker's ready, answered with the common start, and its record chunks.
// Both take the worker's session, as the registry's routes do, and are
// answered only for a worker of the crew of the distributed run in
// progress: anything else is 404 (the registration is unknown) or 409 (the
// run ended, or the worker is not in it), so that a hostile worker reaches
// no run but its own.

// recordsRoute is the route whose body is a record chunk, not JSON.
var recordsRoute = api.Route{Method: "POST", Path: "/v1/workers/{name}/runs/{id}/records"}

// recordsBody refuses a records body before it is read (up to
// api.MaxRecordsBody) when it is of another media type (it is not JSON,
// and what a web page can send cross-site is not it either) or not from a
// worker of the distributed run in progress: a stale session costs the
// daemon no read.
func (s *Service) recordsBody(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != api.RecordsMediaType {
			writeError(w, http.StatusUnsupportedMediaType, api.CodeUnsupportedMedia,
				"a record chunk must be Content-Type: "+api.RecordsMediaType, "")
			return
		}
		name, ok := workerName(w, r)
		if !ok {
			return
		}
		if _, err := s.distFor(name, r.Header.Get(api.WorkerSessionHeader), r.PathValue("id")); err != nil {
			s.distError(w, err)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// distFor is the distributed run id, if it is in progress and the worker
// name (of session) is in its crew.
func (s *Service) distFor(name, session, id string) (*distRun, error) {
	s.fleet.mu.Lock()
	m, err := s.fleet.live(name, session)
	var crewRun string
	if err == nil && m.crew != nil {
		crewRun = m.crew.runID
	}
	s.fleet.mu.Unlock()
	if err != nil {
		return nil, err
	}
	d := s.dist.Load()
	switch {
	case d == nil || d.id != id:
		return nil, fmt.Errorf("%w: run %s is not a distributed run in progress here: stop it", errRunEnded, id)
	case crewRun != id:
		return nil, fmt.Errorf("%w: worker %s is not in run %s", errRunEnded, name, id)
	}
	return d, nil
}

// distError answers a distributed run route's error.
func (s *Service) distError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, errRunEnded):
		writeError(w, http.StatusConflict, api.CodeRunEnded, err.Error(), "")
	case errors.Is(err, shardrec.ErrChunk), errors.Is(err, shardrec.ErrWorkerRefused):
		writeError(w, http.StatusBadRequest, api.CodeInvalidRequest, err.Error(), "")
	default:
		s.workerError(w, err)
	}
}

// workerReady: POST /v1/workers/{name}/runs/{id}/ready. The request is
// held up to readyHold for the start: 200 with it, 202 and RetryMs while
// others prepare, 409 when the run failed or ended.
func (s *Service) workerReady(w http.ResponseWriter, r *http.Request) {
	name, ok := workerName(w, r)
	if !ok {
		return
	}
	rd, err := api.DecodeWorkerReady(r.Body, s.limits)
	if err != nil {
		s.workerError(w, err)
		return
	}
	d, err := s.distFor(name, r.Header.Get(api.WorkerSessionHeader), r.PathValue("id"))
	if err != nil {
		s.distError(w, err)
		return
	}
	d.noteReady(name, rd)
	if rd.Error != "" {
		s.log.Warn("worker could not prepare", "run", d.id, "worker", name, "error", rd.Error)
		s.distError(w, fmt.Errorf("%w: run %s fails: worker %s could not prepare", errRunEnded, d.id, name))
		return
	}
	start, err, decided := d.waitStart(r.Context(), name, readyHold)
	switch {
	case err != nil:
		s.distError(w, err)
	case !decided:
		writeJSON(w, http.StatusAccepted, api.WorkerStart{RetryMs: readyRetry.Milliseconds()})
	default:
		writeJSON(w, http.StatusOK, start)
	}
}

// workerRecords: POST /v1/workers/{name}/runs/{id}/records, one chunk. 204
// applied (or a resend already applied), 400 refused (naming why; the
// worker is lost for the run), 409 the run ended.
func (s *Service) workerRecords(w http.ResponseWriter, r *http.Request) {
	name, ok := workerName(w, r)
	if !ok {
		return
	}
	body, err := io.ReadAll(r.Body) // read and bounded by bodyReadMax
	if err != nil {
		writeError(w, http.StatusBadRequest, api.CodeInvalidRequest, "reading the body: "+err.Error(), "")
		return
	}
	d, err := s.distFor(name, r.Header.Get(api.WorkerSessionHeader), r.PathValue("id"))
	if err == nil {
		err = d.receive(name, body)
	}
	if err != nil {
		if !errors.Is(err, errRunEnded) {
			s.log.Warn("record chunk refused", "run", r.PathValue("id"), "worker", name, "error", err)
		}
		s.distError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
