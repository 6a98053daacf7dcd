package daemon_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
)

// TestEventSubscribersDuringARun is issue 26 #10's measurement
// (bench/event-subscribers.sh; set NETLOADGEN_EVENTS_BENCH=1): loadgend as
// its own process, sutproxy in this one, all on loopback. Server runs of
// NETLOADGEN_EVENTS_BENCH_QPS (2000) for NETLOADGEN_EVENTS_BENCH_SECONDS
// (10) alternate without and with NETLOADGEN_EVENTS_BENCH_SUBS (1000)
// subscribers to the run's event stream: one reads it to the run's end (as
// the runs without have), the others send their GET, read the status line
// and never read again. Two daemons: one with
// LOADGEND_MAX_EVENT_STREAMS=1000 (the attack), one with the default (64:
// the rest are refused); NETLOADGEN_EVENTS_BENCH_LIMITS="1000" runs the first
// alone. Each run's issue lateness p99 (result.json) is a
// FIGURE line, with how many idle subscribers were let in (accepted). A measurement, not a check: it fails only when a run does.
func TestEventSubscribersDuringARun(t *testing.T) {
	if os.Getenv("NETLOADGEN_EVENTS_BENCH") == "" {
		t.Skip("a benchmark of a few minutes: set NETLOADGEN_EVENTS_BENCH=1 (bench/event-subscribers.sh)")
	}
	qps, seconds := envInt(t, "NETLOADGEN_EVENTS_BENCH_QPS", 2000), envInt(t, "NETLOADGEN_EVENTS_BENCH_SECONDS", 10)
	subs, pairs := envInt(t, "NETLOADGEN_EVENTS_BENCH_SUBS", 1000), envInt(t, "NETLOADGEN_EVENTS_BENCH_PAIRS", 2)
	target := e2eSUT(t)
	limits := []string{"1000", ""}
	if v, ok := os.LookupEnv("NETLOADGEN_EVENTS_BENCH_LIMITS"); ok {
		limits = strings.Split(v, ",") // "1000" or "1000,": "" is the default
	}
	for _, limit := range limits {
		env := []string{"LOADGEND_DATA_DIR=" + t.TempDir(), "LOADGEND_MAX_QPS=100000"}
		label := "default(64)"
		if limit != "" {
			env, label = append(env, "LOADGEND_MAX_EVENT_STREAMS="+limit), limit
		}
		p := startLoadgend(t, env...)
		for i := range pairs {
			for _, n := range []int{0, subs} {
				p99, maxMs, validity, accepted := eventsBenchRun(t, p.client, target, qps, seconds, n)
				t.Logf("FIGURE max_event_streams=%s pair=%d subscribers=%d accepted=%d lateness_p99_ms=%.3f lateness_max_ms=%.3f validity=%s",
					label, i+1, n, accepted, p99, maxMs, validity)
			}
		}
	}
}

// eventsBenchRun runs one Server run with n subscribers, one reading and
// n-1 idle, attached as it starts; it returns the issue lateness p99 and
// max in ms, the validity and how many idle subscribers were answered 200.
// The subscribers connect while the run is queued.
func eventsBenchRun(t *testing.T, c e2eClient, target string, qps, seconds, n int) (p99, maxMs float64, validity string, accepted int) {
	t.Helper()
	// The run waits behind a 3 s one while its subscribers connect, so that
	// what is measured is their presence, not the burst of their arrival.
	blocker := c.submit(t, serverSpec(target, 100, 3000))
	id := c.submit(t, serverSpec(target, qps, seconds*1000))
	// The reading subscriber that sees the run end comes first: idle
	// subscribers that fill LOADGEND_MAX_EVENT_STREAMS would refuse it.
	rconn, _, resp := openStream(t, c, id, 0)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the reading subscriber: %d", resp.StatusCode)
	}
	_ = rconn.SetReadDeadline(time.Now().Add(time.Duration(seconds)*time.Second + 2*time.Minute))
	addr := strings.TrimPrefix(c.base, "http://")
	var conns []net.Conn
	defer func() {
		for _, conn := range conns {
			conn.Close()
		}
	}()
	for range max(n-1, 0) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("subscriber %d: %v", len(conns), err)
		}
		conns = append(conns, conn)
		fmt.Fprintf(conn, "GET /v1/runs/%s/events HTTP/1.1\r\nHost: %s\r\n\r\n", id, addr)
	}
	for _, conn := range conns {
		// The status line, then nothing more is ever read.
		_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
		line, _ := bufio.NewReaderSize(io.LimitReader(conn, 16), 16).ReadString('\n')
		if strings.HasPrefix(line, "HTTP/1.1 200") {
			accepted++
		}
	}
	if st := c.status(t, id); st.State != api.StateQueued {
		t.Logf("run %s was %s before its subscribers had all connected (the run before it: %s)", id, st.State, c.status(t, blocker).State)
	}
	waitEndEvent(t, resp.Body, id)
	st := c.status(t, id)
	if st.State != api.StateDone {
		t.Fatalf("run %s ended %s: %s", id, st.State, st.Error)
	}
	r := lateness(t, c, id)
	return r.p99, r.max, r.validity, accepted
}

type latenessResult struct {
	p99, max float64 // ms
	validity string
}

// lateness reads a finished run's issue lateness from its result.json.
func lateness(t *testing.T, c e2eClient, id string) latenessResult {
	t.Helper()
	code, b := c.do(t, "GET", "/v1/runs/"+id+"/result", "")
	var res struct {
		Validity string `json:"result_validity"`
		Lateness struct {
			MaxNs       int64 `json:"max_ns"`
			Percentiles []struct {
				P         float64 `json:"p"`
				LatencyNs int64   `json:"latency_ns"`
			} `json:"percentiles"`
		} `json:"issue_lateness"`
	}
	if code != 200 || json.Unmarshal(b, &res) != nil {
		t.Fatalf("result of %s: %d %.200s", id, code, b)
	}
	r := latenessResult{validity: res.Validity, max: float64(res.Lateness.MaxNs) / 1e6, p99: -1}
	for _, p := range res.Lateness.Percentiles {
		if p.P == 0.99 {
			r.p99 = float64(p.LatencyNs) / 1e6
		}
	}
	return r
}

// waitEndEvent reads an event stream to the run's terminal state event.
func waitEndEvent(t *testing.T, body io.Reader, id string) {
	t.Helper()
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		var ev api.StateEvent
		if ok && json.Unmarshal([]byte(data), &ev) == nil && ev.State.Terminal() {
			return
		}
	}
	t.Fatalf("the events of %s ended before its end: %v", id, sc.Err())
}
