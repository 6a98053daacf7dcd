package daemon

import (
	"bytes"
	"cmp"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"path"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/console"
	"github.com/netloadgen/netloadgen/pkg/metrics"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/runner"
	"github.com/netloadgen/netloadgen/pkg/runspec"
	"github.com/netloadgen/netloadgen/pkg/runstore"
	"github.com/netloadgen/netloadgen/pkg/search"
	"github.com/netloadgen/netloadgen/pkg/version"
)

// handler routes api.Routes, every one of them and no other, refuses what
// a web page could send (sameOrigin, jsonBody), and guards /v1/* with the
// bearer token.
func (s *Service) handler() http.Handler {
	listenHost, _, _ := net.SplitHostPort(s.cfg.Listen)
	addr := s.cfg.Listen // the port asked for, until Start has the one it got
	if s.ln != nil {
		addr = s.ln.Addr().String()
	}
	_, port, _ := net.SplitHostPort(addr)
	hosts, _ := NewAllowlist(s.cfg.AllowedHosts) // checked by Validate
	guard := newHostGuard(listenHost, port, hosts)
	mux := http.NewServeMux()
	for _, r := range api.Routes {
		h, ok := s.routes()[r.Pattern()]
		if !ok {
			panic("daemon: no handler for " + r.Pattern()) // caught by TestRoutesMatchSpec
		}
		if strings.HasPrefix(r.Path, "/v1/") && !slices.Contains(ungated, r) {
			h = s.gated(h)
		}
		switch {
		case r == recordsRoute:
			h = s.recordsBody(s.bodyReadMax(h, api.MaxRecordsBody))
		case r.Method == http.MethodPost:
			// The body is read before the gate, and its type checked
			// before it is read.
			h = jsonBody(s.bodyRead(h))
		}
		if strings.HasPrefix(r.Path, "/v1/") {
			h = s.authenticated(h)
		}
		// An orchestrator probes these by the pod's address or any name;
		// their answers tell a web page nothing.
		if r.Path != "/healthz" && r.Path != "/readyz" {
			h = sameOrigin(guard, h)
		}
		mux.Handle(r.Pattern(), h)
	}
	// Unknown /v1 paths and methods are refused like known ones, so a
	// caller without the token cannot map the API.
	mux.Handle("/v1/", sameOrigin(guard, s.authenticated(noRoute())))
	// The console's pages and assets hold no data and no secret: they are
	// served without the token, which the pages ask for and send with
	// each API request (pkg/console). The guard's refusals there carry
	// the console's security headers too.
	mux.Handle(console.Prefix, console.Secure(sameOrigin(guard, console.Handler())))
	mux.Handle("GET /{$}", sameOrigin(guard, http.RedirectHandler(console.Prefix, http.StatusFound)))
	mux.Handle("/", sameOrigin(guard, noRoute()))
	return mux
}

// noRoute answers what no route serves: 405 with an Allow header on a path
// a route has (ServeMux's own 405 is text, and its catch-alls here take
// every method first), else 404; both with the JSON error body.
func noRoute() http.Handler {
	methods := map[string][]string{}
	for _, r := range api.Routes {
		methods[r.Path] = append(methods[r.Path], r.Method)
		if r.Method == http.MethodGet {
			methods[r.Path] = append(methods[r.Path], http.MethodHead)
		}
	}
	mux := http.NewServeMux()
	for p, m := range methods {
		slices.Sort(m)
		allow := strings.Join(m, ", ")
		mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allow)
			writeError(w, http.StatusMethodNotAllowed, api.CodeMethodNotAllowed,
				fmt.Sprintf("%s %s: not allowed (allowed: %s)", r.Method, r.URL.Path, allow), "")
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, api.CodeNotFound, "no route "+r.Method+" "+r.URL.Path, "")
	})
	return mux
}

// routes maps each api.Routes pattern to its handler.
func (s *Service) routes() map[string]http.Handler {
	return map[string]http.Handler{
		"POST /v1/runs":                                 http.HandlerFunc(s.createRun),
		"GET /v1/runs":                                  http.HandlerFunc(s.listRuns),
		"POST /v1/runs/check":                           http.HandlerFunc(s.checkRun),
		"GET /v1/runs/{id}":                             http.HandlerFunc(s.getRun),
		"GET /v1/runs/{id}/result":                      http.HandlerFunc(s.getResult),
		"GET /v1/runs/{id}/files/{name}":                http.HandlerFunc(s.getFile),
		"GET /v1/runs/{id}/trials/{trial}/files/{name}": http.HandlerFunc(s.getTrialFile),
		"GET /v1/runs/{id}/report.html":                 http.HandlerFunc(s.getReport),
		"GET /v1/runs/{id}/samples.jsonl":               http.HandlerFunc(s.getSamples),
		"POST /v1/runs/{id}/cancel":                     http.HandlerFunc(s.cancelRun),
		"GET /v1/runs/{id}/events":                      http.HandlerFunc(s.events),
		"POST /v1/probe":                                http.HandlerFunc(s.probe),
		"GET /v1/version":                               http.HandlerFunc(s.version),
		"POST /v1/workers":                              http.HandlerFunc(s.registerWorker),
		"GET /v1/workers":                               http.HandlerFunc(s.listWorkers),
		"POST /v1/workers/{name}/heartbeat":             http.HandlerFunc(s.workerHeartbeat),
		"GET /v1/workers/{name}/work":                   http.HandlerFunc(s.workerWork),
		"POST /v1/workers/{name}/clock":                 http.HandlerFunc(s.workerClock),
		"POST /v1/workers/{name}/runs/{id}/ready":       http.HandlerFunc(s.workerReady),
		"POST /v1/workers/{name}/runs/{id}/records":     http.HandlerFunc(s.workerRecords),
		"GET /healthz":                                  http.HandlerFunc(s.healthz),
		"GET /readyz":                                   http.HandlerFunc(s.readyz),
		"GET /metrics":                                  metrics.Handler(s.reg),
	}
}

// authenticated requires "Authorization: Bearer <LOADGEND_API_TOKEN>" when a
// token is configured, compared in constant time. The scheme name is
// case-insensitive (RFC 9110 §11.1), the token is not.
func (s *Service) authenticated(h http.Handler) http.Handler {
	if s.cfg.APIToken == "" {
		return h
	}
	want := []byte(s.cfg.APIToken)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare([]byte(got), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="loadgend"`)
			writeError(w, http.StatusUnauthorized, api.CodeUnauthorized, "a valid bearer token is required", "")
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (s *Service) createRun(w http.ResponseWriter, r *http.Request) {
	spec, ok := s.admitted(w, r)
	if !ok {
		return
	}
	// The store keeps the spec as decoded, not the bytes sent: the worker
	// reads back exactly what was checked, but for header values given
	// literally, which are secrets: stored as <redacted>, kept in memory.
	literals := literalHeaders(spec.Headers)
	spec.Headers = api.ShownHeaders(spec.Headers)
	stored, err := json.Marshal(spec)
	if err != nil {
		writeError(w, http.StatusInternalServerError, api.CodeInternal, "encoding the spec: "+err.Error(), "")
		return
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		writeError(w, http.StatusServiceUnavailable, api.CodeUnavailable, "loadgend is shutting down", "")
		return
	}
	if n := len(s.queue); n >= s.maxQueued() {
		s.mu.Unlock()
		writeError(w, http.StatusTooManyRequests, api.CodeQueueFull,
			fmt.Sprintf("%d runs are queued, the most LOADGEND_MAX_QUEUED allows: wait for one to start, or cancel one", n), "")
		return
	}
	rec, err := s.store.Create(stored)
	if err != nil {
		s.mu.Unlock()
		writeError(w, http.StatusInternalServerError, api.CodeInternal, "storing the run: "+err.Error(), "")
		return
	}
	s.queue = append(s.queue, rec.ID)
	if literals != nil {
		s.literals[rec.ID] = literals
	}
	pos := s.queuePosition(rec.ID)
	s.mu.Unlock()
	s.signal()
	u := "/v1/runs/" + rec.ID
	w.Header().Set("Location", u)
	writeJSON(w, http.StatusAccepted, api.RunCreated{ID: rec.ID, URL: u, State: api.StateQueued, QueuePosition: pos})
}

// admitted reads the body of POST /v1/runs or POST /v1/runs/check and
// checks the spec: one path for both, so that a check says what a
// submission would meet (the decoding, the daemon's limits, its data
// root and secrets references, the target allowlist). It answers the
// refusal itself. Nothing is queued and the target is not contacted.
func (s *Service) admitted(w http.ResponseWriter, r *http.Request) (api.RunSpec, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBody()))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, api.CodeBodyTooLarge, fmt.Sprintf("the body is over %d bytes", s.maxBody()), "")
			return api.RunSpec{}, false
		}
		writeError(w, http.StatusBadRequest, api.CodeInvalidRequest, "reading the body: "+err.Error(), "")
		return api.RunSpec{}, false
	}
	spec, err := runspec.Decode(bytes.NewReader(body), s.limits)
	if err != nil {
		status, eb := api.ErrorFor(err)
		writeJSON(w, status, eb)
		return api.RunSpec{}, false
	}
	if f := s.outsideFence(r.Context(), spec); f != nil {
		writeError(w, http.StatusForbidden, api.CodeTargetNotAllowed, f.msg, f.field)
		return api.RunSpec{}, false
	}
	return spec, true
}

// checkRun is POST /v1/runs/check: the spec checked as POST /v1/runs
// checks it, answered with the spec as it would be stored (literal header
// values as <redacted>) and the `loadgend run` command line that fills it.
func (s *Service) checkRun(w http.ResponseWriter, r *http.Request) {
	spec, ok := s.admitted(w, r)
	if !ok {
		return
	}
	spec.Headers = api.ShownHeaders(spec.Headers)
	args, lost := runspec.CommandLine(spec)
	if lost == nil {
		lost = []string{}
	}
	writeJSON(w, http.StatusOK, api.RunCheck{Spec: spec, CommandLine: args, Command: runspec.ShellQuote(args), NotExpressible: lost})
}

func (s *Service) listRuns(w http.ResponseWriter, r *http.Request) {
	q, err := api.ParseListQuery(r.URL.Query())
	if err != nil {
		status, eb := api.ErrorFor(err)
		writeJSON(w, status, eb)
		return
	}
	runs, next, err := s.listPage(q)
	if err != nil {
		if errors.Is(err, runstore.ErrPageToken) {
			writeError(w, http.StatusBadRequest, api.CodeInvalidRequest, "page_token is not one this daemon gave", "page_token")
			return
		}
		writeError(w, http.StatusInternalServerError, api.CodeInternal, err.Error(), "")
		return
	}
	writeRunList(w, runs, next)
}

// listPage is one page of GET /v1/runs: the encoded entries of the runs
// that pass q's filters, newest first, and the token of the next page
// ("" at the end of the history). One state is filtered by the store as
// it walks its history under its read lock (runstore keeps no index by
// state: the walk is linear, newest first, a comparison per run, and is
// not bounded by api.MaxListScan, so a rare state costs a walk of the
// history); the other filters read each run's summary (in memory), and
// such a page looks at no more than api.MaxListScan runs: one that stops
// there has a token to go on from the last run it looked at.
func (s *Service) listPage(q api.ListQuery) ([][]byte, string, error) {
	var filter runstore.State
	if len(q.States) == 1 {
		filter = runstore.State(q.States[0])
	}
	var runs [][]byte // each run's status, encoded (listEntry)
	token, scanned := q.PageToken, 0
	bound := cmp.Or(s.listScan, api.MaxListScan)
	chunk := q.Limit
	if q.Filtered() {
		chunk = max(chunk, 256) // most runs looked at are left out
	}
	for {
		recs, next, err := s.store.ListBrief(filter, min(chunk, bound-scanned), token) // the specs are in s.sums
		if err != nil {
			return nil, "", err
		}
		for i, rec := range recs {
			token = rec.ID
			if q.Filtered() {
				scanned++
			}
			if !q.Filtered() || s.listMatches(q, rec) {
				runs = append(runs, s.listEntry(rec))
			}
			if len(runs) == q.Limit || scanned == bound {
				if i == len(recs)-1 && next == "" {
					return runs, "", nil // the history's last run
				}
				return runs, token, nil
			}
		}
		if next == "" {
			return runs, "", nil
		}
	}
}

// listMatches reports whether run rec passes q's filters, from its record
// and its summary (no file read).
func (s *Service) listMatches(q api.ListQuery, rec runstore.Record) bool {
	sum := s.sums.get(rec)
	validity := ""
	if rec.State.Terminal() {
		validity = sum.validity // what its status shows
	}
	return q.Matches(api.State(rec.State), sum.spec.Model, sum.spec.Scenario, validity)
}

// run fetches the record named by the path, answering 404 itself.
func (s *Service) run(w http.ResponseWriter, r *http.Request) (runstore.Record, bool) {
	id := r.PathValue("id")
	rec, err := s.store.Get(id)
	if err != nil {
		writeError(w, http.StatusNotFound, api.CodeNotFound, fmt.Sprintf("no run %q", id), "id")
		return rec, false
	}
	return rec, true
}

func (s *Service) getRun(w http.ResponseWriter, r *http.Request) {
	rec, ok := s.run(w, r)
	if ok {
		writeJSON(w, http.StatusOK, s.status(rec, true))
	}
}

// status builds a run's API view: the record, its live or last progress,
// its verdict once result.json exists, and its files.
func (s *Service) status(rec runstore.Record, detail bool) api.RunStatus {
	sum := s.sums.get(rec) // no file read: see summaries
	st := api.RunStatus{
		ID: rec.ID, URL: "/v1/runs/" + rec.ID, State: api.State(rec.State), Spec: sum.spec,
		CreatedAt: rec.Created, Error: rec.Error, EndReason: rec.Reason,
		Progress: sum.progress, Trials: sum.trials, Search: sum.search,
	}
	if !rec.Started.IsZero() {
		t := rec.Started
		st.StartedAt = &t
	}
	if !rec.Ended.IsZero() {
		t := rec.Ended
		st.EndedAt = &t
	}
	s.mu.Lock()
	active := s.active
	if rec.State == runstore.Queued {
		pos := s.queuePosition(rec.ID)
		st.QueuePosition = &pos
	}
	s.mu.Unlock()
	if active != nil && active.id == rec.ID {
		if p, ok := active.progress(); ok {
			st.Progress = &p
		}
	}
	if rec.State.Terminal() {
		st.Validity = sum.validity
		st.InvalidReasons, st.Warnings, st.Failures = sum.invalidReasons, sum.warnings, sum.failures
		st.TokenLatencies = sum.tokenLatencies
		st.AnsweredLatencyMs, st.AchievedQPS = sum.answered, sum.achieved
	}
	if detail {
		files, _ := s.store.Files(rec.ID)
		st.Files = slices.DeleteFunc(files, func(n string) bool { _, ok := api.FileMediaType(n); return !ok })
	}
	return st
}

func (s *Service) getResult(w http.ResponseWriter, r *http.Request) {
	rec, ok := s.run(w, r)
	if !ok {
		return
	}
	if !rec.State.Terminal() {
		writeError(w, http.StatusConflict, api.CodeNotFinished, fmt.Sprintf("run %s is %s: no result yet", rec.ID, rec.State), "")
		return
	}
	s.serveFile(w, r, rec.ID, runlog.ResultFile)
}

func (s *Service) getFile(w http.ResponseWriter, r *http.Request) {
	rec, ok := s.run(w, r)
	if ok {
		s.serveFile(w, r, rec.ID, r.PathValue("name"))
	}
}

// getSamples serves a generative run's per-sample export. A run not yet
// finished is 409, as its report is: the file is written when the run ends.
func (s *Service) getSamples(w http.ResponseWriter, r *http.Request) {
	rec, ok := s.run(w, r)
	if !ok {
		return
	}
	if !rec.State.Terminal() {
		writeError(w, http.StatusConflict, api.CodeNotFinished, fmt.Sprintf("run %s is %s: its samples are written when it ends", rec.ID, rec.State), "")
		return
	}
	f, err := s.store.OpenFile(rec.ID, runstore.SamplesJSONLFile)
	if errors.Is(err, fs.ErrNotExist) {
		writeError(w, http.StatusNotFound, api.CodeNotFound, fmt.Sprintf("run %s (%s) has no %s: only a run of a generative API, or one whose spec sets keep_samples, keeps one", rec.ID, rec.State, runstore.SamplesJSONLFile), "")
		return
	}
	var st fs.FileInfo
	if err == nil {
		defer f.Close()
		st, err = f.Stat()
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, api.CodeInternal, err.Error(), "")
		return
	}
	mediaType, _ := api.FileMediaType(runstore.SamplesJSONLFile)
	w.Header().Set("Content-Type", mediaType)
	http.ServeContent(w, r, runstore.SamplesJSONLFile, st.ModTime(), f)
}

// getTrialFile serves a file of a search's trial, from its trial-NNN
// directory under the run's.
func (s *Service) getTrialFile(w http.ResponseWriter, r *http.Request) {
	rec, ok := s.run(w, r)
	if !ok {
		return
	}
	n, err := strconv.Atoi(r.PathValue("trial"))
	if err != nil || n < 1 {
		writeError(w, http.StatusNotFound, api.CodeNotFound, fmt.Sprintf("no trial %q (want its index, from 1)", r.PathValue("trial")), "trial")
		return
	}
	s.serveFileIn(w, r, rec.ID, search.TrialDir(n), r.PathValue("name"))
}

func (s *Service) serveFile(w http.ResponseWriter, r *http.Request, id, name string) {
	s.serveFileIn(w, r, id, "", name)
}

// serveFileIn serves file name of run id, from its subdirectory sub ("":
// the run's own directory).
func (s *Service) serveFileIn(w http.ResponseWriter, r *http.Request, id, sub, name string) {
	mediaType, ok := api.FileMediaType(name)
	if !ok {
		writeError(w, http.StatusNotFound, api.CodeNotFound, fmt.Sprintf("no file %q (want one of %s)", name, strings.Join(api.RunFiles(), ", ")), "name")
		return
	}
	f, err := s.store.OpenFileIn(id, sub, name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			writeError(w, http.StatusNotFound, api.CodeNotFound, fmt.Sprintf("run %s has no %s (yet)", path.Join(id, sub), name), "name")
			return
		}
		writeError(w, http.StatusInternalServerError, api.CodeInternal, err.Error(), "")
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		writeError(w, http.StatusInternalServerError, api.CodeInternal, err.Error(), "")
		return
	}
	w.Header().Set("Content-Type", mediaType)
	http.ServeContent(w, r, name, st.ModTime(), f)
}

func (s *Service) cancelRun(w http.ResponseWriter, r *http.Request) {
	rec, ok := s.run(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	i := slices.Index(s.queue, rec.ID)
	if i >= 0 || (rec.ID == s.taken && !s.takenCancelled) {
		if i >= 0 {
			s.queue = slices.Delete(s.queue, i, i+1)
		} else {
			s.takenCancelled = true // the worker is admitting it: it will not start it
		}
		delete(s.literals, rec.ID)
		s.mu.Unlock()
		rec, err := s.store.SetState(rec.ID, runstore.Cancelled, "cancelled through the API before it started")
		if err != nil {
			writeError(w, http.StatusConflict, api.CodeAlreadyFinished, err.Error(), "")
			return
		}
		s.notify(rec.ID)
		writeJSON(w, http.StatusOK, s.status(rec, false))
		return
	}
	if s.active != nil && s.active.id == rec.ID {
		a := s.active
		s.mu.Unlock()
		a.stop(api.StateCancelled)
		rec, _ = s.store.Get(rec.ID)
		writeJSON(w, http.StatusAccepted, s.status(rec, false))
		return
	}
	s.mu.Unlock()
	writeError(w, http.StatusConflict, api.CodeAlreadyFinished, fmt.Sprintf("run %s is %s", rec.ID, rec.State), "")
}

func (s *Service) probe(w http.ResponseWriter, r *http.Request) {
	req, err := api.DecodeProbeRequest(http.MaxBytesReader(w, r.Body, s.maxBody()), s.limits)
	if err != nil {
		status, eb := api.ErrorFor(err)
		writeJSON(w, status, eb)
		return
	}
	if !s.allow.Allows(r.Context(), hostOf(req.Target)) {
		writeError(w, http.StatusForbidden, api.CodeTargetNotAllowed,
			fmt.Sprintf("target %s is outside LOADGEND_ALLOWED_TARGETS", req.Target), "target")
		return
	}
	headers, err := runspec.ProbeHeaders(req.Headers, s.limits)
	if err != nil {
		status, eb := api.ErrorFor(err)
		writeJSON(w, status, eb)
		return
	}
	tlsCfg, err := runspec.ProbeTLS(req, s.limits)
	if err != nil {
		status, eb := api.ErrorFor(err)
		writeJSON(w, status, eb)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 20*time.Second)
	defer cancel()
	out := api.ProbeResponse{Target: req.Target, Extensions: []string{}}
	rep, err := runner.ProbeEndpoint(ctx, req.Target, req.Model, req.ModelVersion, tlsCfg, headers...)
	if err != nil {
		out.Error = err.Error()
		writeJSON(w, http.StatusOK, out)
		return
	}
	out.Live, out.Ready, out.Extensions, out.Models = rep.Live, rep.Ready, rep.Extensions, rep.Models
	srv := rep.Server
	out.Server = &srv
	if m := rep.Model; m != nil {
		md := m.Model
		out.Model, out.ModelReady, out.Config = &md, true, m.Config
		out.MaxBatchSize, out.Batched = m.MaxBatch, m.Batched
		out.API = cmp.Or(string(rep.API), api.ProbeAPITensor)
		out.Inference = &api.ProbeInference{LatencyMs: rep.InferenceLatencyMs, OK: rep.InferenceError == "", Error: rep.InferenceError}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Service) version(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, api.Version{Version: version.String(), GoVersion: runtime.Version(), API: api.APIVersion})
}

func (s *Service) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz is ready while the service takes runs: not while shutting down.
func (s *Service) readyz(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	closing := s.closing
	s.mu.Unlock()
	if closing {
		writeError(w, http.StatusServiceUnavailable, api.CodeUnavailable, "shutting down", "")
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// maxQueued is LOADGEND_MAX_QUEUED, its default for a zero Config.
func (s *Service) maxQueued() int {
	if s.cfg.MaxQueued > 0 {
		return s.cfg.MaxQueued
	}
	return DefaultMaxQueued
}

func (s *Service) maxBody() int64 {
	if s.limits.MaxBodyBytes > 0 {
		return s.limits.MaxBodyBytes
	}
	return api.DefaultLimits().MaxBodyBytes
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg, field string) {
	writeJSON(w, status, api.NewErrorBody(code, msg, field))
}

// hostOf is the host of a target URL already checked by the decoder.
func hostOf(target string) string {
	u, err := url.Parse(target)
	if err != nil {
		return ""
	}
	return u.Hostname()
}
