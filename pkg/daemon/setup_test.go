package daemon

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/server"
	"github.com/netloadgen/netloadgen/pkg/runstore"
	"github.com/netloadgen/netloadgen/pkg/sim"
)

// stallingBackend is a simulated SUT whose model metadata answer waits until
// released: a run probing it is held in its setup, before the engine's
// clock starts.
type stallingBackend struct {
	server.Backend
	entered chan struct{} // closed at the first metadata request
	release chan struct{}
	once    sync.Once
}

func (b *stallingBackend) ModelMetadata(ctx context.Context, model, version string) (kserve.ModelMetadata, error) {
	b.once.Do(func() { close(b.entered) })
	select {
	case <-b.release:
	case <-ctx.Done():
	}
	return b.Backend.ModelMetadata(ctx, model, version)
}

// startStallingSUT serves a stallingBackend over HTTP on loopback.
func startStallingSUT(t *testing.T) (*stallingBackend, string) {
	t.Helper()
	sm, err := sim.New(sim.DefaultModels())
	if err != nil {
		t.Fatal(err)
	}
	b := &stallingBackend{Backend: sm, entered: make(chan struct{}), release: make(chan struct{})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: server.NewHTTPHandler(b).ServeFastHTTP}
	go srv.Serve(ln)
	t.Cleanup(func() {
		close(b.release)
		srv.Shutdown()
		sm.Close()
	})
	return b, "http://" + ln.Addr().String()
}

// A run stopped during its setup (here the probe, before the engine's clock
// starts) ends cancelled when the API cancelled it and interrupted when the
// daemon shut down, not failed (issue 17 #6).
func TestStopDuringSetup(t *testing.T) {
	t.Run("cancel", func(t *testing.T) {
		b, target := startStallingSUT(t)
		_, base := startDaemon(t, nil)
		id := submit(t, base, spec(target, ""))
		waitFor(t, b.entered, "the run's probe")
		if code, body := do(t, "POST", base+"/v1/runs/"+id+"/cancel", ""); code != http.StatusAccepted {
			t.Fatalf("cancel = %d %s", code, body)
		}
		st := waitState(t, base, id)
		if st.State != api.StateCancelled || st.Error != "" {
			t.Errorf("run cancelled in its setup: %s (%q, error %q), want cancelled", st.State, st.EndReason, st.Error)
		}
	})
	t.Run("shutdown", func(t *testing.T) {
		b, target := startStallingSUT(t)
		s, base := startDaemon(t, nil)
		id := submit(t, base, spec(target, ""))
		waitFor(t, b.entered, "the run's probe")
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		rec, err := s.store.Get(id)
		if err != nil || rec.State != runstore.Interrupted || rec.Error != "" {
			t.Errorf("run in its setup at shutdown: %s (%q, error %q; %v), want interrupted", rec.State, rec.Reason, rec.Error, err)
		}
	})
}

func submit(t *testing.T, base, body string) string {
	t.Helper()
	code, b := do(t, "POST", base+"/v1/runs", body)
	var c api.RunCreated
	if code != http.StatusAccepted || json.Unmarshal(b, &c) != nil {
		t.Fatalf("POST /v1/runs = %d %s", code, b)
	}
	return c.ID
}

func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not happen within 30 s", what)
	}
}
