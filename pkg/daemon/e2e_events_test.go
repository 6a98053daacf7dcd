package daemon_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/daemon"
)

// openStream sends GET /v1/runs/{id}/events on a new connection and reads
// the answer's head; it returns the connection (its body unread), the
// status line and the reader. rcvbuf > 0 shrinks the connection's receive
// buffer before it connects.
func openStream(t *testing.T, c e2eClient, id string, rcvbuf int) (net.Conn, *bufio.Reader, *http.Response) {
	t.Helper()
	addr := strings.TrimPrefix(c.base, "http://")
	d := net.Dialer{}
	if rcvbuf > 0 {
		d.Control = func(_, _ string, rc syscall.RawConn) error {
			var serr error
			err := rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvbuf) })
			if err != nil {
				return err
			}
			return serr
		}
	}
	conn, err := d.DialContext(t.Context(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "GET /v1/runs/%s/events HTTP/1.1\r\nHost: %s\r\n\r\n", id, addr)
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("events of %s: %v", id, err)
	}
	return conn, br, resp
}

// TestEventStreamsCapped is issue 26 #10 (a): past LOADGEND_MAX_EVENT_STREAMS
// (default 64) open streams, another is answered 503 naming the setting.
// Before, streams were not capped.
func TestEventStreamsCapped(t *testing.T) {
	target := e2eSUT(t)
	_, c := e2eService(t, nil)
	id := c.submit(t, serverSpec(target, 100, 60000))
	for i := range daemon.DefaultMaxEventStreams {
		if _, _, resp := openStream(t, c, id, 0); resp.StatusCode != http.StatusOK {
			t.Fatalf("stream %d of %d: %d", i+1, daemon.DefaultMaxEventStreams, resp.StatusCode)
		}
	}
	_, _, resp := openStream(t, c, id, 0)
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), "LOADGEND_MAX_EVENT_STREAMS") {
		t.Errorf("stream %d: %d %s; want 503 naming LOADGEND_MAX_EVENT_STREAMS", daemon.DefaultMaxEventStreams+1, resp.StatusCode, b)
	}
	if code, b := c.do(t, http.MethodPost, "/v1/runs/"+id+"/cancel", ""); code != http.StatusAccepted {
		t.Errorf("cancel: %d %s", code, b)
	}
}

// TestEventStreamNonReaderHoldsNothing is issue 26 #10 (b): a subscriber
// that never reads, on a connection with a tiny receive buffer, holds
// neither the run nor the other streams: the run completes, a reading
// subscriber sees its end, and the daemon then shuts down within its
// bound (the hub lets the stuck stream go rather than wait on it).
func TestEventStreamNonReaderHoldsNothing(t *testing.T) {
	target := e2eSUT(t)
	svc, c := e2eService(t, nil)
	id := c.submit(t, serverSpec(target, 500, 2000))
	if _, _, resp := openStream(t, c, id, 1024); resp.StatusCode != http.StatusOK {
		t.Fatalf("the non-reading stream: %d", resp.StatusCode)
	}
	if st := c.waitEnded(t, id, time.Minute); st.State != api.StateDone {
		t.Fatalf("the run ended %s: %s", st.State, st.Error)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := svc.Shutdown(ctx); err != nil {
		t.Errorf("shutdown with a stream that never reads: %v", err)
	}
}
