package daemon

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/clocksync"
)

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func testFleet(t *testing.T) (*Fleet, *fakeClock) {
	t.Helper()
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	return newFleet(clk.now, 3*time.Second, "v1"), clk
}

func mustRegister(t *testing.T, f *Fleet, name string) api.WorkerRegistered {
	t.Helper()
	r, err := f.register(api.WorkerRegistration{Name: name, Version: "v1", Address: "127.0.0.1:9"})
	if err != nil {
		t.Fatalf("register %s: %v", name, err)
	}
	return r
}

func states(f *Fleet) map[string]api.WorkerState {
	out := map[string]api.WorkerState{}
	for _, w := range f.list().Workers {
		out[w.Name] = w.State
	}
	return out
}

func TestFleetRegisterHeartbeatLost(t *testing.T) {
	f, clk := testFleet(t)
	a := mustRegister(t, f, "a")
	b := mustRegister(t, f, "b")
	if a.HeartbeatIntervalMs != 750 || a.WorkerTimeoutMs != 3000 || a.Session == "" || a.Session == b.Session {
		t.Fatalf("registered %+v, %+v", a, b)
	}
	clk.add(2 * time.Second)
	if _, err := f.heartbeat("a", a.Session, api.WorkerHeartbeat{}); err != nil {
		t.Fatal(err)
	}
	// A heartbeat of another session (an old incarnation) keeps nothing
	// alive, and is told to register again.
	if _, err := f.heartbeat("b", a.Session, api.WorkerHeartbeat{}); !errors.Is(err, ErrWorkerGone) || !strings.Contains(err.Error(), "register again") {
		t.Errorf("wrong session: %v", err)
	}
	clk.add(1500 * time.Millisecond) // b silent 3.5 s, a 1.5 s
	f.sweep()
	if got := states(f); got["a"] != api.WorkerIdle || got["b"] != api.WorkerLost {
		t.Fatalf("states %v, want a idle, b lost", got)
	}
	if _, err := f.heartbeat("b", b.Session, api.WorkerHeartbeat{}); !errors.Is(err, ErrWorkerGone) {
		t.Errorf("a lost worker's heartbeat: %v", err)
	}
	// A live name is taken; a lost one may register again.
	_, err := f.register(api.WorkerRegistration{Name: "a", Version: "v1"})
	var re *registerError
	if !errors.As(err, &re) || re.status != 409 || re.code != api.CodeNameTaken || !strings.Contains(re.msg, "another --name") {
		t.Errorf("a's name again: %v", err)
	}
	b2 := mustRegister(t, f, "b")
	if got := states(f); got["b"] != api.WorkerIdle || b2.Session == b.Session {
		t.Errorf("b again: %v", got)
	}
	// Lost workers are dropped after lostRetention.
	clk.add(4 * time.Second)
	f.sweep()
	clk.add(lostRetention + time.Second)
	f.sweep()
	if got := states(f); len(got) != 0 {
		t.Errorf("after retention: %v", got)
	}
}

func TestFleetVersionRefused(t *testing.T) {
	f, _ := testFleet(t)
	_, err := f.register(api.WorkerRegistration{Name: "old", Version: "v0.9"})
	var re *registerError
	if !errors.As(err, &re) || re.status != 409 || re.code != api.CodeVersionMismatch {
		t.Fatalf("%v", err)
	}
	for _, want := range []string{"worker old is version v0.9", "this coordinator is version v1", "run workers of the coordinator's version"} {
		if !strings.Contains(re.msg, want) {
			t.Errorf("%q lacks %q", re.msg, want)
		}
	}
}

func TestFleetPickAssignLost(t *testing.T) {
	f, clk := testFleet(t)
	ctx := context.Background()
	regs := map[string]api.WorkerRegistered{}
	for _, n := range []string{"c", "a", "b"} {
		regs[n] = mustRegister(t, f, n)
	}
	crew, err := f.Pick(ctx, PickRequest{RunID: "r1", N: 2, Wait: time.Second, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if got := crew.Names(); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("picked %v, want [a b] (name order)", got)
	}
	if w := f.list().Workers; w[0].State != api.WorkerBusy || w[0].RunID != "r1" || w[2].State != api.WorkerIdle {
		t.Errorf("listed %+v", w)
	}
	// One idle left: a pick of two fails at its deadline, naming everyone.
	_, err = f.Pick(ctx, PickRequest{RunID: "r2", N: 2, Wait: time.Millisecond})
	if !errors.Is(err, ErrNoWorkers) {
		t.Fatalf("second pick: %v", err)
	}
	for _, want := range []string{"run r2 wants 2 workers, 1 idle", "idle: c", "busy: a (run r1), b (run r1)", "lost: none", "workers_wait_ms"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	// The assignment reaches a's poll.
	want := api.WorkerAssignment{RunID: "r1", Shard: 0, Shards: 2, StartNs: 42}
	if err := crew.Assign("a", want); err != nil {
		t.Fatal(err)
	}
	got, ok, err := f.poll(ctx, "a", regs["a"].Session, time.Second)
	if err != nil || !ok || got.RunID != want.RunID || got.StartNs != 42 {
		t.Fatalf("poll: %+v %v %v", got, ok, err)
	}
	if err := crew.Assign("c", want); !errors.Is(err, ErrWorkerGone) {
		t.Errorf("assigning outside the crew: %v", err)
	}
	// The run's timeout (1 s) applies to its workers once a heartbeat's
	// answer has told them its interval: b, told, then silent 1.5 s, is
	// lost and the crew hears it once; c, idle, keeps the daemon's 3 s.
	if _, err := f.heartbeat("a", regs["a"].Session, api.WorkerHeartbeat{Finished: &api.WorkerFinished{RunID: "r1", Error: "boom"}}); err != nil {
		t.Fatal(err)
	}
	if ack, err := f.heartbeat("b", regs["b"].Session, api.WorkerHeartbeat{}); err != nil || ack.HeartbeatIntervalMs != 250 {
		t.Fatalf("b's heartbeat after the pick: %+v %v, want the run's interval, 250 ms", ack, err)
	}
	clk.add(1500 * time.Millisecond)
	_, _ = f.heartbeat("a", regs["a"].Session, api.WorkerHeartbeat{})
	f.sweep()
	f.sweep()
	select {
	case l := <-crew.Lost():
		if l.Name != "b" || l.RunID != "r1" || !l.At.Equal(clk.now()) {
			t.Errorf("lost %+v", l)
		}
	default:
		t.Fatal("no loss reported")
	}
	select {
	case l := <-crew.Lost():
		t.Errorf("a second loss: %+v", l)
	default:
	}
	if fin := <-crew.Finished(); fin.Name != "a" || fin.Error != "boom" {
		t.Errorf("finished %+v", fin)
	}
	if got := states(f); got["c"] != api.WorkerIdle || got["b"] != api.WorkerLost {
		t.Errorf("states %v", got)
	}
	crew.Release()
	if got := states(f); got["a"] != api.WorkerIdle || got["b"] != api.WorkerLost {
		t.Errorf("after release %v", got)
	}
}

// TestFleetPickWaits: a pick waiting for workers takes one that registers
// meanwhile (an event, not a poll).
func TestFleetPickWaits(t *testing.T) {
	f, _ := testFleet(t)
	done := make(chan error, 1)
	go func() {
		_, err := f.Pick(context.Background(), PickRequest{RunID: "r", N: 1, Wait: time.Minute})
		done <- err
	}()
	// Whether the pick is waiting yet or not, it looks again after each
	// change.
	mustRegister(t, f, "late")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.Pick(ctx, PickRequest{N: 1, Wait: time.Minute}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled pick: %v", err)
	}
}

// exchangeWith runs n exchanges and a final one against f with a worker
// clock offset from the coordinator's by off and a wire delay each way.
func exchangeWith(t *testing.T, f *Fleet, clk *fakeClock, reg api.WorkerRegistered, n int, off, up, down time.Duration) (api.WorkerClockResponse, error) {
	t.Helper()
	var prevT3 int64
	var resp api.WorkerClockResponse
	var err error
	for seq := 0; seq <= n; seq++ {
		req := api.WorkerClockRequest{Seq: seq, T0Ns: clk.now().Add(off).UnixNano(), PrevT3Ns: prevT3, Final: seq == n}
		clk.add(up)
		resp, err = f.clockExchange(reg.Name, reg.Session, req, clk.now().UnixNano())
		if err != nil {
			return resp, err
		}
		clk.add(down)
		prevT3 = clk.now().Add(off).UnixNano()
	}
	return resp, nil
}

func TestFleetClock(t *testing.T) {
	f, clk := testFleet(t)
	reg := mustRegister(t, f, "w")
	resp, err := exchangeWith(t, f, clk, reg, 8, 250*time.Millisecond, 100*time.Microsecond, 100*time.Microsecond)
	if err != nil {
		t.Fatal(err)
	}
	if e := resp.Estimate; e == nil || e.OffsetNs != int64(250*time.Millisecond) || e.UncertaintyNs != int64(100*time.Microsecond) || e.Exchanges != 8 {
		t.Fatalf("estimate %+v", resp.Estimate)
	}
	if w := f.list().Workers[0]; w.ClockOffsetNs == nil || *w.ClockOffsetNs != int64(250*time.Millisecond) || *w.ClockUncertaintyNs != 100_000 {
		t.Errorf("listed %+v", w)
	}
	// Seven exchanges are too few; out of order is refused.
	if _, err := exchangeWith(t, f, clk, reg, 7, 0, 0, 0); err == nil || !strings.Contains(err.Error(), "7 exchanges, want at least 8") {
		t.Errorf("7 exchanges: %v", err)
	}
	_, err = f.clockExchange("w", reg.Session, api.WorkerClockRequest{Seq: 3, T0Ns: 1, PrevT3Ns: 1}, 1)
	var fe *api.FieldError
	if !errors.As(err, &fe) || fe.Field != "seq" || !strings.Contains(err.Error(), "out of order") {
		t.Errorf("out of order: %v", err)
	}
}

func TestCrewSyncAndCheckClocks(t *testing.T) {
	f, clk := testFleet(t)
	regs := []api.WorkerRegistered{mustRegister(t, f, "a"), mustRegister(t, f, "b")}
	crew, err := f.Pick(context.Background(), PickRequest{RunID: "r", N: 2, Wait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := crew.CheckClocks(nil, time.Millisecond); !errors.Is(err, clocksync.ErrTooUncertain) || !strings.Contains(err.Error(), "worker a: its clock was not measured") {
		t.Errorf("unmeasured: %v", err)
	}
	done := make(chan map[string]clocksync.Estimate, 1)
	go func() {
		est, err := crew.SyncClocks(context.Background())
		if err != nil {
			t.Error(err)
		}
		done <- est
	}()
	// Each worker polls the instruction, then measures: a near, b far.
	for i, reg := range regs {
		a, ok, err := f.poll(context.Background(), reg.Name, reg.Session, time.Minute)
		if err != nil || !ok || !a.SyncClock || a.Shard != i || a.Shards != 2 {
			t.Fatalf("%s polled %+v %v %v", reg.Name, a, ok, err)
		}
		wire := 100 * time.Microsecond
		if reg.Name == "b" {
			wire = 3 * time.Millisecond
		}
		if _, err := exchangeWith(t, f, clk, reg, 8, time.Duration(i)*time.Second, wire, wire); err != nil {
			t.Fatal(err)
		}
	}
	est := <-done
	if est["a"].Offset != 0 || est["b"].Offset != time.Second {
		t.Errorf("estimates %+v", est)
	}
	err = crew.CheckClocks(est, time.Millisecond)
	if !errors.Is(err, clocksync.ErrTooUncertain) || !strings.Contains(err.Error(), "worker b: offset 1s ± 3ms") || strings.Contains(err.Error(), "worker a") {
		t.Errorf("check: %v", err)
	}
}

// TestFleetStopsUnknownRuns: a worker carrying out a run the daemon does
// not know (it restarted) or whose crew stopped is told to stop it.
func TestFleetStopsUnknownRuns(t *testing.T) {
	f, _ := testFleet(t)
	reg := mustRegister(t, f, "w")
	ack, err := f.heartbeat("w", reg.Session, api.WorkerHeartbeat{RunID: "from-before"})
	if err != nil || ack.StopRunID != "from-before" {
		t.Errorf("unknown run: %+v %v", ack, err)
	}
	crew, err := f.Pick(context.Background(), PickRequest{RunID: "r", N: 1, Wait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if ack, _ := f.heartbeat("w", reg.Session, api.WorkerHeartbeat{RunID: "r"}); ack.StopRunID != "" {
		t.Errorf("its own run: %+v", ack)
	}
	crew.Stop()
	if ack, _ := f.heartbeat("w", reg.Session, api.WorkerHeartbeat{RunID: "r"}); ack.StopRunID != "r" {
		t.Errorf("stopped: %+v", ack)
	}
}

// TestFleetShortRunTimeoutWaitsForTheWorkerToHearIt: a run's
// worker_timeout_ms shorter than the beats its workers were told to make
// at registration does not lose them before a heartbeat's answer has told
// them the run's interval; after that it does.
func TestFleetShortRunTimeoutWaitsForTheWorkerToHearIt(t *testing.T) {
	f, clk := testFleet(t) // the daemon's 3 s: beats every 750 ms
	reg := mustRegister(t, f, "a")
	crew, err := f.Pick(context.Background(), PickRequest{RunID: "r1", N: 1, Wait: time.Second, Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	clk.add(600 * time.Millisecond) // within the 750 ms beat it was told
	f.sweep()
	select {
	case l := <-crew.Lost():
		t.Fatalf("lost %+v before it was told the run's interval", l)
	default:
	}
	ack, err := f.heartbeat("a", reg.Session, api.WorkerHeartbeat{})
	if err != nil || ack.HeartbeatIntervalMs != 125 {
		t.Fatalf("heartbeat: %+v %v, want the run's 125 ms", ack, err)
	}
	clk.add(600 * time.Millisecond)
	f.sweep()
	select {
	case l := <-crew.Lost():
		if l.Name != "a" {
			t.Errorf("lost %+v", l)
		}
	default:
		t.Fatal("silent 600 ms after hearing the run's 500 ms timeout, a was not lost")
	}
}
