package daemon

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/report"
	"github.com/netloadgen/netloadgen/pkg/runstore"
)

// reportPolicy is the report's Content-Security-Policy, the one its page
// also carries: styles inline, nothing else, so no script runs and nothing
// is fetched whatever a run's strings hold.
const reportPolicy = "default-src 'none'; style-src 'unsafe-inline'"

// getReport serves the run's HTML report (pkg/report), the page `loadgend
// report` writes for the run's directory, named by the run's id. A run not
// yet finished is 409, as its result is: the report is of what the run
// concluded, and a half-written run has no verdict to show.
func (s *Service) getReport(w http.ResponseWriter, r *http.Request) {
	rec, ok := s.run(w, r)
	if !ok {
		return
	}
	if !rec.State.Terminal() {
		writeError(w, http.StatusConflict, api.CodeNotFinished, fmt.Sprintf("run %s is %s: its report is ready when it ends", rec.ID, rec.State), "")
		return
	}
	run, err := report.Load(rec.ID, storeSource{s.store, rec.ID})
	if errors.Is(err, report.ErrNoRun) {
		writeError(w, http.StatusNotFound, api.CodeNotFound, fmt.Sprintf("run %s (%s) has no result.json or search.json to report on", rec.ID, rec.State), "")
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, api.CodeInternal, fmt.Sprintf("run %s: %v", rec.ID, err), "")
		return
	}
	var b bytes.Buffer
	if err := report.Write(&b, []*report.Run{run}, report.Options{Title: "netloadgen report: run " + rec.ID}); err != nil {
		writeError(w, http.StatusInternalServerError, api.CodeInternal, err.Error(), "")
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", reportPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(b.Bytes())
	}
}

// storeSource reads a run's files through the store, which opens only the
// run's own regular files. A name outside the store's list of run files
// reads as absent.
type storeSource struct {
	store *runstore.Store
	id    string
}

func (s storeSource) Open(name string) (io.ReadCloser, error) {
	f, err := s.store.OpenFile(s.id, name)
	if errors.Is(err, runstore.ErrFileName) {
		return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}
