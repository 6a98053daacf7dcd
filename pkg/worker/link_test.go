package worker_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/worker"
)

func link(t *testing.T, h http.HandlerFunc) (*worker.Link, *atomic.Int64) {
	t.Helper()
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	l, err := worker.NewLink(srv.URL, token, "w0", "sess-1")
	if err != nil {
		t.Fatal(err)
	}
	return l, &calls
}

// TestLinkProtocol: ready and records go to the run's routes with the
// token, the session and their media types; 200 and 202 come back with
// their status, a 409 is ErrRunEnded, a records 400 ErrChunkRefused.
func TestLinkProtocol(t *testing.T) {
	var gotPath, gotType, gotSess, gotAuth string
	var gotBody []byte
	status := http.StatusOK
	l, _ := link(t, func(w http.ResponseWriter, r *http.Request) {
		gotPath, gotType, gotSess, gotAuth = r.URL.Path, r.Header.Get("Content-Type"), r.Header.Get(api.WorkerSessionHeader), r.Header.Get("Authorization")
		gotBody, _ = io.ReadAll(r.Body)
		w.WriteHeader(status)
		if status != http.StatusNoContent {
			_, _ = w.Write([]byte(`{"start_ns":42,"retry_ms":7}`))
		}
	})
	ctx := t.Context()
	for _, s := range []int{http.StatusOK, http.StatusAccepted} {
		status = s
		st, got, err := l.Ready(ctx, "run-1", api.WorkerReady{TraceQueries: 9})
		if err != nil || got != s || st.StartNs != 42 || st.RetryMs != 7 {
			t.Errorf("ready answered %d: %+v, %d, %v", s, st, got, err)
		}
	}
	if gotPath != "/v1/workers/w0/runs/run-1/ready" || gotType != "application/json" || gotSess != "sess-1" || gotAuth != "Bearer "+token || !bytes.Contains(gotBody, []byte(`"trace_queries":9`)) {
		t.Errorf("ready sent %s %s %s %q", gotPath, gotType, gotSess, gotBody)
	}
	status = http.StatusNoContent
	if err := l.Records(ctx, "run-1", []byte("chunk")); err != nil {
		t.Errorf("records: %v", err)
	}
	if gotPath != "/v1/workers/w0/runs/run-1/records" || gotType != api.RecordsMediaType || string(gotBody) != "chunk" {
		t.Errorf("records sent %s %s %q", gotPath, gotType, gotBody)
	}
	status = http.StatusConflict
	if _, _, err := l.Ready(ctx, "run-1", api.WorkerReady{}); !errors.Is(err, worker.ErrRunEnded) {
		t.Errorf("ready 409: %v", err)
	}
	if err := l.Records(ctx, "run-1", []byte("c")); !errors.Is(err, worker.ErrRunEnded) {
		t.Errorf("records 409: %v", err)
	}
	status = http.StatusBadRequest
	if err := l.Records(ctx, "run-1", []byte("c")); !errors.Is(err, worker.ErrChunkRefused) {
		t.Errorf("records 400: %v", err)
	}
	status = http.StatusServiceUnavailable
	if err := l.Records(ctx, "run-1", []byte("c")); err == nil || errors.Is(err, worker.ErrChunkRefused) || errors.Is(err, worker.ErrRunEnded) {
		t.Errorf("records 503: %v, want an error worth a resend", err)
	}
}

// TestLinkRefusesBeforeSending: a run id that is not one path segment, an
// oversized chunk and a worker with no session send nothing.
func TestLinkRefusesBeforeSending(t *testing.T) {
	l, calls := link(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) })
	for _, id := range []string{"", "a/b", "..", "x?y", "%2e"} {
		if _, _, err := l.Ready(t.Context(), id, api.WorkerReady{}); err == nil {
			t.Errorf("run id %q taken", id)
		}
	}
	if err := l.Records(t.Context(), "r", make([]byte, api.MaxRecordsBody+1)); !errors.Is(err, worker.ErrChunkRefused) {
		t.Errorf("oversized chunk: %v", err)
	}
	w, err := worker.New(worker.Config{Coordinator: "http://127.0.0.1:1", Name: "w0", Execute: func(context.Context, api.WorkerAssignment) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Link().Records(t.Context(), "r", []byte("c")); !errors.Is(err, worker.ErrNoSession) {
		t.Errorf("records with no session: %v", err)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

// TestLinkHostile: a coordinator that answers garbage, redirects, sends
// without end, quotes the token back, or never answers gives an error
// (bounded, the token scrubbed), never a hang or a panic.
func TestLinkHostile(t *testing.T) {
	cases := []struct {
		name string
		h    http.HandlerFunc
		want string
	}{
		{"garbage", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("{{{")) }, "not the JSON"},
		{"empty", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) }, "empty"},
		{"redirect", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Location", "http://evil/")
			w.WriteHeader(http.StatusTemporaryRedirect)
		}, "redirects"},
		{"endless", func(w http.ResponseWriter, _ *http.Request) {
			buf := bytes.Repeat([]byte(" "), 64<<10)
			for range 64 {
				if _, err := w.Write(buf); err != nil {
					return
				}
			}
		}, "bytes"},
		{"echoes the token", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "bad auth: "+r.Header.Get("Authorization"), http.StatusBadGateway)
		}, "502"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, _ := link(t, c.h)
			_, _, err := l.Ready(t.Context(), "run-1", api.WorkerReady{})
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), token) {
				t.Errorf("ready: %v, want an error saying %q, no token", err, c.want)
			}
			if c.name != "garbage" && c.name != "empty" { // records reads no answer
				if err := l.Records(t.Context(), "run-1", []byte("c")); err == nil || strings.Contains(err.Error(), token) {
					t.Errorf("records: %v", err)
				}
			}
		})
	}
	t.Run("silent", func(t *testing.T) {
		release := make(chan struct{})
		l, _ := link(t, func(_ http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		})
		defer close(release)
		// The executor's stop (its context) ends a request with no answer.
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		if _, _, err := l.Ready(ctx, "run-1", api.WorkerReady{}); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("ready: %v, want the context's deadline", err)
		}
		if err := l.Records(ctx, "run-1", []byte("c")); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("records: %v, want the context's deadline", err)
		}
	})
}
