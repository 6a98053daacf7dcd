package sim

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
)

// newDriftEngine serves one echo model of constant lat on one instance, on
// a fake clock, with the degrade and transient laws given.
func newDriftEngine(t *testing.T, lat time.Duration, g *DegradeSpec, tr *TransientSpec, idle time.Duration) (*Server, *engine, *fakeClock) {
	t.Helper()
	clk := newFakeClock()
	spec := ModelSpec{
		Name: "m", Function: Echo, Latency: constant(lat), Degrade: g, Transient: tr, Idle: Duration(idle),
		Inputs: []TensorSpec{{Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{4}}},
	}
	s, err := New([]ModelSpec{spec}, withClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	e, err := s.engine("m", "")
	if err != nil {
		t.Fatal(err)
	}
	return s, e, clk
}

// at advances clk to epoch+d and enqueues one request there.
func enqueueAt(t *testing.T, e *engine, clk *fakeClock, d time.Duration) *job {
	t.Helper()
	clk.Advance(epoch.Add(d).Sub(clk.Now()))
	return mustEnqueue(t, e, 1, clk)
}

// times is a finished job's start and end, from the epoch.
func times(t *testing.T, e *engine, j *job) (start, end time.Duration) {
	t.Helper()
	if err := e.wait(context.Background(), j, nil); err != nil {
		t.Fatal(err)
	}
	return j.start.Sub(epoch), j.end.Sub(epoch)
}

// Executions that start After or more into a period of load take Factor
// times the law; a gap of Idle starts a new, fast period.
func TestDegradeAfterLoad(t *testing.T) {
	_, e, clk := newDriftEngine(t, 2*ms, &DegradeSpec{After: Duration(10 * ms), Factor: 3}, nil, 5*ms)
	type want struct{ start, end time.Duration }
	steps := []struct {
		at   time.Duration
		want want
	}{
		{0, want{0, 2 * ms}},              // the period starts: fast
		{4 * ms, want{4 * ms, 6 * ms}},    // fast
		{8 * ms, want{8 * ms, 10 * ms}},   // starts 8 ms in: fast, though it ends at 10
		{9 * ms, want{10 * ms, 16 * ms}},  // queued; starts 10 ms in: 3 × 2 ms
		{12 * ms, want{16 * ms, 22 * ms}}, // slow; the period goes on (gaps < 5 ms)
		{40 * ms, want{40 * ms, 42 * ms}}, // a 28 ms gap: a new period, fast again
		{44 * ms, want{44 * ms, 46 * ms}}, // 4 ms in: fast
		{48 * ms, want{48 * ms, 50 * ms}}, // 8 ms in: fast
		{50 * ms, want{50 * ms, 56 * ms}}, // starts 10 ms in: slow
	}
	var jobs []*job
	for _, s := range steps {
		jobs = append(jobs, enqueueAt(t, e, clk, s.at))
	}
	clk.Advance(time.Second)
	for i, s := range steps {
		start, end := times(t, e, jobs[i])
		if start != s.want.start || end != s.want.end {
			t.Errorf("request %d, arrived at %v: ran %v..%v, want %v..%v", i, s.at, start, end, s.want.start, s.want.end)
		}
	}
}

// A request arriving within Window of a period's first arrival is answered
// Latency after its execution ends, without holding the instance; later ones
// at the law; a gap of Idle brings the transient back.
func TestTransientAfterIdle(t *testing.T) {
	srv, e, clk := newDriftEngine(t, ms, nil, &TransientSpec{Window: Duration(3 * ms), Latency: Duration(20 * ms)}, 10*ms)
	steps := []struct{ at, end time.Duration }{
		{0, 21 * ms},                 // in the window: 1 ms + 20 ms held
		{2 * ms, 23 * ms},            // in the window; its instance was free at 1 ms
		{3 * ms, 4 * ms},             // the window is [0, 3 ms): at the law
		{12 * ms, 13 * ms},           // a 9 ms gap: not idle, same period
		{22 * ms, 43 * ms},           // a 10 ms gap: a new period, held again
		{24*ms + ms/2, 45*ms + ms/2}, // 2.5 ms into the new period: held
	}
	var jobs []*job
	for _, s := range steps {
		jobs = append(jobs, enqueueAt(t, e, clk, s.at))
	}
	// The held request does not keep the instance: the third one ran at once.
	if start, _ := times(t, e, jobs[2]); start != 3*ms {
		t.Errorf("the request after the window started at %v, want 3ms: a hold must not occupy the instance", start)
	}
	clk.Advance(time.Second)
	for i, s := range steps {
		if _, end := times(t, e, jobs[i]); end != s.end {
			t.Errorf("request %d, arrived at %v: answered at %v, want %v", i, s.at, end, s.end)
		}
	}
	tr, err := srv.Truth("m", "")
	if err != nil {
		t.Fatal(err)
	}
	// compute_infer counts the holds: 6 executions of 1 ms and 4 holds of 20 ms.
	if want := uint64(6*ms + 4*20*ms); tr.InferNs != want {
		t.Errorf("truth's compute_infer %v, want %v", time.Duration(tr.InferNs), time.Duration(want))
	}
}

// A held request is released by its own timer: before it, its caller is
// still waiting; a caller that gives up while held gets its error at once.
func TestTransientHoldIsATimer(t *testing.T) {
	_, e, clk := newDriftEngine(t, ms, nil, &TransientSpec{Window: Duration(ms), Latency: Duration(5 * ms)}, 0)
	j := enqueueAt(t, e, clk, 0)
	clk.Advance(6*ms - 1)
	if state(e, j) != running {
		t.Fatalf("just before 6 ms: state %v, want still running (held)", state(e, j))
	}
	clk.Advance(1)
	if state(e, j) != finished {
		t.Fatalf("at 6 ms: state %v, want finished", state(e, j))
	}
	k := enqueueAt(t, e, clk, 2*time.Second) // idle 1 s by default: held again
	clk.Advance(2 * ms)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := e.wait(ctx, k, nil); err != context.Canceled {
		t.Fatalf("a held caller that gives up: %v, want context.Canceled", err)
	}
	clk.Advance(10 * ms) // its timer fires on an abandoned job: no panic, no change
	if state(e, k) != abandoned {
		t.Errorf("after its timer: state %v, want abandoned", state(e, k))
	}
	if clk.pending() != 0 {
		t.Errorf("%d timers left", clk.pending())
	}
}

// With restart: probe, a readiness check starts a period of load: the next
// request is in a new transient window, though no idle gap came before it.
// Without it, the check changes nothing.
func TestRestartOnProbe(t *testing.T) {
	for _, restart := range []string{RestartProbe, ""} {
		t.Run("restart="+restart, func(t *testing.T) {
			clk := newFakeClock()
			spec := ModelSpec{Name: "m", Function: Echo, Latency: constant(ms), Restart: restart,
				Transient: &TransientSpec{Window: Duration(3 * ms), Latency: Duration(20 * ms)},
				Inputs:    []TensorSpec{{Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{4}}}}
			srv, err := New([]ModelSpec{spec}, withClock(clk))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { srv.Close() })
			e, _ := srv.engine("m", "")
			first := enqueueAt(t, e, clk, 0)
			later := enqueueAt(t, e, clk, 5*ms)
			if ready, err := srv.ModelReady(t.Context(), "m", ""); !ready || err != nil {
				t.Fatalf("ModelReady: %v, %v", ready, err)
			}
			probed := enqueueAt(t, e, clk, 6*ms)
			after := enqueueAt(t, e, clk, 10*ms)
			clk.Advance(time.Second)
			want := []time.Duration{21 * ms, 6 * ms, 7 * ms, 11 * ms}
			if restart == RestartProbe {
				want[2] = 27 * ms // a new window from 6 ms: held
			}
			for i, j := range []*job{first, later, probed, after} {
				if _, end := times(t, e, j); end != want[i] {
					t.Errorf("request %d: answered at %v, want %v", i, end, want[i])
				}
			}
		})
	}
}

func TestDriftFlag(t *testing.T) {
	got, err := ParseModelFlag("name=d,max_batch=0,latency=constant:1ms,degrade_after=5s,degrade_factor=2.5,transient=200ms,transient_latency=80ms,idle=300ms,restart=probe")
	if err != nil {
		t.Fatal(err)
	}
	want := ModelSpec{Name: "d", Function: Echo, Latency: constant(ms),
		Inputs:    []TensorSpec{{Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{16}}},
		Degrade:   &DegradeSpec{After: Duration(5 * time.Second), Factor: 2.5},
		Transient: &TransientSpec{Window: Duration(200 * ms), Latency: Duration(80 * ms)},
		Idle:      Duration(300 * ms), Restart: RestartProbe}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	for flag, wantErr := range map[string]string{
		"name=d,degrade_after=5s":                                  `"degrade_after" and "degrade_factor" go together`,
		"name=d,transient_latency=5ms":                             `"transient" and "transient_latency" go together`,
		"name=d,degrade_after=5s,degrade_factor=0.5":               "degrade.factor: 0.5 is not in [1, 1000]",
		"name=d,degrade_after=5s,degrade_factor=NaN":               "degrade.factor: NaN is not in [1, 1000]",
		"name=d,degrade_after=5s,degrade_factor=+Inf":              "degrade.factor: +Inf is not in [1, 1000]",
		"name=d,degrade_after=5s,degrade_factor=x":                 `key "degrade_factor": "x": want a number`,
		"name=d,degrade_after=0s,degrade_factor=2":                 `key "degrade_after": "0s": want a duration > 0`,
		"name=d,transient=-1ms,transient_latency=5ms":              `key "transient": "-1ms": want a duration > 0`,
		"name=d,idle=1s":                                           "idle: only degrade and transient use it",
		"name=d,restart=probe":                                     "restart: only degrade and transient use it",
		"name=d,transient=1ms,transient_latency=2ms,restart=first": `restart: "first" is not "idle" or "probe"`,
		"name=d,transient=1ms,transient_latency=2h":                "transient.latency: 2h0m0s is not in",
		"name=d,kind=llm,degrade_after=1s,degrade_factor=2":        "unknown key for an llm model",
	} {
		_, err := ParseModelFlag(flag)
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%s: error %v, want one containing %q", flag, err, wantErr)
		}
	}
}

func TestDriftInModelFiles(t *testing.T) {
	specs, err := DecodeYAML([]byte(`models:
  - name: d
    inputs: [{name: INPUT0, datatype: FP32, shape: [4]}]
    function: echo
    latency: {distribution: constant, value: 1ms}
    degrade: {after: 5s, factor: 3}
    transient: {window: 200ms, latency: 80ms}
  - name: e
    inputs: [{name: INPUT0, datatype: FP32, shape: [4]}]
    function: echo
    transient: {window: 200ms, latency: 80ms}
    idle: 500ms
    restart: probe
`))
	if err != nil {
		t.Fatal(err)
	}
	if g, tr := specs[0].Degrade, specs[0].Transient; g == nil || g.Factor != 3 || g.After.D() != 5*time.Second || tr == nil || tr.Latency.D() != 80*ms {
		t.Errorf("decoded %+v %+v", g, tr)
	}
	n, err := specs[0].normalized()
	if err != nil || n.Idle.D() != time.Second {
		t.Errorf("normalized idle %v (%v), want the 1s default", n.Idle, err)
	}
	if e := specs[1]; e.Idle.D() != 500*ms || e.Restart != RestartProbe {
		t.Errorf("second model: idle %v, restart %q", e.Idle, e.Restart)
	}
	for doc, wantErr := range map[string]string{
		`{"models":[{"name":"d","inputs":[{"name":"I","datatype":"FP32","shape":[4]}],"function":"echo","degrade":{"after":"1s","factor":3,"x":1}}]}`: "degrade.x: unknown field",
		`{"models":[{"name":"d","inputs":[{"name":"I","datatype":"FP32","shape":[4]}],"function":"echo","degrade":{"after":"1s"}}]}`:                  "degrade.factor: 0 is not in [1, 1000]",
		`{"models":[{"name":"l","llm":{},"transient":{"window":"1s","latency":"1s"}}]}`:                                                               "not an llm model's",
	} {
		_, err := DecodeJSON([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%s: error %v, want one containing %q", doc, err, wantErr)
		}
	}
}
