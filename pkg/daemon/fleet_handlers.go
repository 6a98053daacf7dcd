package daemon

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/netloadgen/netloadgen/api"
)

// The worker routes (issue 29). Heartbeats, polls and clock exchanges take
// no API slot (see ungated): a busy API must neither make a worker look
// lost nor widen its clock's round trip.

func (s *Service) registerWorker(w http.ResponseWriter, r *http.Request) {
	reg, err := api.DecodeWorkerRegistration(r.Body, s.limits)
	if err != nil {
		status, eb := api.ErrorFor(err)
		writeJSON(w, status, eb)
		return
	}
	out, err := s.fleet.register(reg)
	var re *registerError
	if errors.As(err, &re) {
		s.log.Warn("worker refused", "worker", reg.Name, "address", reg.Address, "reason", re.msg)
		writeError(w, re.status, re.code, re.msg, "")
		return
	}
	s.log.Info("worker registered", "worker", reg.Name, "address", reg.Address, "version", reg.Version)
	w.Header().Set("Location", "/v1/workers/"+reg.Name)
	writeJSON(w, http.StatusCreated, out)
}

func (s *Service) listWorkers(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.fleet.list())
}

// workerName is the path's worker name, checked; false when it answered.
func workerName(w http.ResponseWriter, r *http.Request) (string, bool) {
	name := r.PathValue("name")
	if err := api.CheckWorkerName(name); err != nil {
		writeError(w, http.StatusNotFound, api.CodeNotFound, "no worker: the name "+err.Error(), "name")
		return "", false
	}
	return name, true
}

func (s *Service) workerHeartbeat(w http.ResponseWriter, r *http.Request) {
	name, ok := workerName(w, r)
	if !ok {
		return
	}
	body, err := io.ReadAll(r.Body) // read and bounded by bodyRead
	if err == nil {
		var hb api.WorkerHeartbeat
		if hb, err = api.DecodeWorkerHeartbeat(body, s.limits); err == nil {
			var ack api.WorkerHeartbeatAck
			if ack, err = s.fleet.heartbeat(name, r.Header.Get(api.WorkerSessionHeader), hb); err == nil {
				writeJSON(w, http.StatusOK, ack)
				return
			}
		}
	}
	s.workerError(w, err)
}

func (s *Service) workerWork(w http.ResponseWriter, r *http.Request) {
	name, ok := workerName(w, r)
	if !ok {
		return
	}
	wait := maxPollWait
	if v := r.URL.Query().Get("wait_ms"); v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms < 0 {
			writeError(w, http.StatusBadRequest, api.CodeInvalidRequest, fmt.Sprintf("wait_ms %q: want milliseconds, 0 or more", v), "wait_ms")
			return
		}
		wait = min(time.Duration(min(ms, maxPollWait.Milliseconds()))*time.Millisecond, maxPollWait)
	}
	a, ok, err := s.fleet.poll(r.Context(), name, r.Header.Get(api.WorkerSessionHeader), wait)
	switch {
	case errors.Is(err, errClosing):
		writeError(w, http.StatusServiceUnavailable, api.CodeUnavailable, err.Error(), "")
	case err != nil:
		s.workerError(w, err)
	case !ok:
		w.WriteHeader(http.StatusNoContent)
	default:
		writeJSON(w, http.StatusOK, a)
	}
}

func (s *Service) workerClock(w http.ResponseWriter, r *http.Request) {
	// t1 first: the time the request came in, as near the wire as the
	// handler gets (its body is already read, before the handler).
	t1 := s.fleet.now().UnixNano()
	name, ok := workerName(w, r)
	if !ok {
		return
	}
	req, err := api.DecodeWorkerClockRequest(r.Body, s.limits)
	if err == nil {
		var resp api.WorkerClockResponse
		if resp, err = s.fleet.clockExchange(name, r.Header.Get(api.WorkerSessionHeader), req, t1); err == nil {
			writeJSON(w, http.StatusOK, resp)
			return
		}
	}
	s.workerError(w, err)
}

// workerError answers a worker route's error: 404 for a worker the fleet
// does not hold (it registers again), 400 for a bad body.
func (s *Service) workerError(w http.ResponseWriter, err error) {
	if errors.Is(err, ErrWorkerGone) {
		writeError(w, http.StatusNotFound, api.CodeNotFound, err.Error(), "name")
		return
	}
	status, eb := api.ErrorFor(err)
	writeJSON(w, status, eb)
}

// Workers is the daemon's registry of workers: the run code picks its crews
// from it.
func (s *Service) Workers() *Fleet { return s.fleet }
