package daemon

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
)

// Past LOADGEND_API_CONCURRENCY a /v1 request waits for a slot; one that
// finds none in time is answered 503 unavailable with Retry-After; a
// waiting one is served once a slot frees; an event stream takes no slot
// (issue 17 #5).
func TestAPIGate(t *testing.T) {
	s := newTestService(t, t.TempDir())
	s.gate = newAPIGate(1)
	s.gate.wait = 50 * time.Millisecond
	h := s.handler()
	get := func(ctx context.Context, path string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, localRequest("GET", path).WithContext(ctx))
		return w
	}
	if w := get(t.Context(), "/v1/version"); w.Code != http.StatusOK {
		t.Fatalf("a free gate: %d %s", w.Code, w.Body)
	}
	s.gate.slots <- struct{}{} // a request being served
	w := get(t.Context(), "/v1/runs")
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "1" || !strings.Contains(w.Body.String(), api.CodeUnavailable) {
		t.Errorf("past the cap: %d, Retry-After %q, %s", w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	if w := get(t.Context(), "/healthz"); w.Code != http.StatusOK {
		t.Errorf("/healthz is not gated: %d", w.Code)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // the stream of an unknown run answers at once, through no gate
	if w := get(ctx, "/v1/runs/20260101T000000.000000Z-00000000/events"); w.Code != http.StatusNotFound {
		t.Errorf("events past the cap: %d, want 404 (not gated)", w.Code)
	}
	s.gate.wait = time.Minute
	done := make(chan int)
	go func() { done <- get(t.Context(), "/v1/version").Code }()
	for len(s.gate.queue) == 0 { // the request is waiting: an event, no sleep
		select {
		case code := <-done:
			t.Fatalf("served past the cap: %d", code)
		default:
		}
		runtime.Gosched()
	}
	s.gate.leave()
	if code := <-done; code != http.StatusOK {
		t.Errorf("a waiting request once a slot freed: %d", code)
	}
}
