package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/secret"
)

const hostileToken = "hostile-peer-token-9f8e"

func hostileClient(t *testing.T, h http.Handler) *client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return &client{base: u, token: hostileToken, http: newHTTPClient(), scrub: secret.NewScrubber(hostileToken)}
}

// TestHostileCoordinator: whatever the coordinator answers, a request ends
// within its timeout with an error that says what happened, never a hang,
// a panic or the token.
func TestHostileCoordinator(t *testing.T) {
	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	hold := make(chan struct{})
	defer close(hold)
	cases := []struct {
		name string
		h    http.HandlerFunc
		want string
	}{
		{"redirect", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+"/v1/workers", http.StatusTemporaryRedirect)
		}, "redirects (307"},
		{"empty", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) }, "empty body"},
		{"truncated", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `{"name":"w","session":"ab`)
		}, "not the JSON expected"},
		{"not json", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `<html>hi</html>`) }, "not the JSON expected"},
		{"oversized", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `{"name":"`+strings.Repeat("x", maxAnswer+10)+`"}`)
		}, "over 2097152 bytes"},
		{"endless", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `{"name":"`)
			for r.Context().Err() == nil {
				if _, err := w.Write([]byte(strings.Repeat("x", 1024))); err != nil {
					return
				}
			}
		}, "over 2097152 bytes"},
		{"endless slow", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `{"name":"`)
			w.(http.Flusher).Flush()
			select {
			case <-hold:
			case <-r.Context().Done():
			}
		}, "deadline exceeded"},
		{"silent", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-hold:
			case <-r.Context().Done():
			}
		}, "deadline exceeded"},
		{"echoes the token", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(502)
			fmt.Fprintf(w, "bad gateway: you sent %s", r.Header.Get("Authorization"))
		}, "502"},
		{"error body", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(503)
			fmt.Fprint(w, `{"error":{"code":"unavailable","message":"shutting down"}}`)
		}, "503 unavailable: shutting down"},
		{"long error with control characters", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(503)
			fmt.Fprintf(w, `{"error":{"code":"unavailable","message":"shutting\u001b[2J down%s"}}`, strings.Repeat("x", 1<<20))
		}, "503 unavailable: shutting [2J down"},
		{"1xx then an answer", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Link", "</x>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			w.WriteHeader(http.StatusEarlyHints)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(200)
			fmt.Fprint(w, `{"name":"w","session":"s","heartbeat_interval_ms":5}`)
		}, ""},
		{"endless 1xx", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Link", strings.Repeat("x", 4096))
			for i := 0; i < 10000 && r.Context().Err() == nil; i++ {
				w.WriteHeader(http.StatusEarlyHints)
			}
		}, "GET"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := hostileClient(t, tc.h)
			var out api.WorkerRegistered
			start := time.Now()
			_, err := c.do(context.Background(), http.MethodGet, "/v1/workers", "", nil, &out, 300*time.Millisecond)
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %v", took)
			}
			if tc.want == "" {
				if err != nil || out.Session != "s" {
					t.Errorf("%+v, %v", out, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), hostileToken) {
				t.Errorf("the token is in the error: %v", err)
			}
			if err != nil && (len(err.Error()) > 2048 || strings.ContainsFunc(err.Error(), unicode.IsControl)) {
				t.Errorf("the error keeps %d bytes of the coordinator's text, or its control characters: %.200q", len(err.Error()), err)
			}
		})
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the redirect was followed %d times", n)
	}
}

// TestRegisterRefusesHollowAnswer: a 201 without a session is an error,
// not a worker heartbeating with no interval.
func TestRegisterRefusesHollowAnswer(t *testing.T) {
	c := hostileClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(201)
		fmt.Fprint(w, `{}`)
	}))
	w := &Worker{cfg: Config{Name: "w", Version: "v", Now: time.Now}, c: c, log: discard()}
	if _, err := w.register(context.Background()); err == nil || !strings.Contains(err.Error(), "lacks a session") || errors.Is(err, ErrRefused) {
		t.Errorf("register: %v", err)
	}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestIntervalBounded: a coordinator asking for a heartbeat every
// millisecond, or once a year, gets one within [50 ms, 1 min].
func TestIntervalBounded(t *testing.T) {
	for ms, want := range map[int64]time.Duration{1: minInterval, 750: 750 * time.Millisecond, 365 * 24 * 3600 * 1000: maxInterval, -5: minInterval} {
		if got := heartbeatInterval(ms); got != want {
			t.Errorf("%d ms: %v, want %v", ms, got, want)
		}
	}
}
