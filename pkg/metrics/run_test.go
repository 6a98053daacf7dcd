package metrics

import (
	"errors"
	"math"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// The run id appears on loadgend_run_info only, and only while its run is
// active; the state gauge has exactly one 1.
func TestRunLifecycle(t *testing.T) {
	m, reg := newTest(t)
	stateIs := func(want string) {
		t.Helper()
		for _, s := range States() {
			v := 0.0
			if s == want {
				v = 1
			}
			if got := value(t, reg, "loadgend_run_state", "state", s); got != v {
				t.Errorf("run_state{state=%q} = %v, want %v", s, got, v)
			}
		}
	}
	if got := series(t, reg, "loadgend_run_info"); len(got) != 0 {
		t.Fatalf("run_info before any run: %v", got)
	}
	stateIs("")
	if err := m.SetState(StateQueued); err != nil {
		t.Fatal(err)
	}
	stateIs(StateQueued)

	steps := []struct {
		id, scenario, model, target string
		qps                         float64
		end                         string
	}{
		{"r1", "Server", "resnet", "http://127.0.0.1:8000", 100, StateDone},
		{"r2", "Offline", "bert", "grpc://127.0.0.1:8001", 2000, StateCancelled},
	}
	for i, s := range steps {
		if err := m.RunStarted(s.id, s.scenario, s.model, s.target, s.qps); err != nil {
			t.Fatal(err)
		}
		info := series(t, reg, "loadgend_run_info")
		if len(info) != 1 || info[0].GetGauge().GetValue() != 1 ||
			labelValue(info[0], "run_id") != s.id || labelValue(info[0], "scenario") != s.scenario ||
			labelValue(info[0], "model") != s.model || labelValue(info[0], "target") != s.target {
			t.Fatalf("run %s: run_info %v", s.id, info)
		}
		stateIs(StateRunning)
		if got := value(t, reg, "loadgend_target_samples_per_second"); got != s.qps {
			t.Errorf("target %v, want %v", got, s.qps)
		}
		if err := m.SearchProgress(3, 10, 20); err != nil {
			t.Fatal(err)
		}
		if tr, lo, hi := value(t, reg, "loadgend_search_trial"), value(t, reg, "loadgend_search_lower_bound_samples_per_second"),
			value(t, reg, "loadgend_search_upper_bound_samples_per_second"); tr != 3 || lo != 10 || hi != 20 {
			t.Errorf("search trial %v bounds [%v, %v], want 3 [10, 20]", tr, lo, hi)
		}
		if err := m.RunEnded(s.id, s.end); err != nil {
			t.Fatal(err)
		}
		if info := series(t, reg, "loadgend_run_info"); len(info) != 0 {
			t.Errorf("run %s ended, run_info still %v", s.id, info)
		}
		stateIs(s.end)
		if got := value(t, reg, "loadgend_target_samples_per_second") + value(t, reg, "loadgend_search_trial"); got != 0 {
			t.Errorf("target and trial not reset after run %d", i)
		}
		if got := value(t, reg, "loadgend_runs_total", "state", s.end); got != 1 {
			t.Errorf("runs_total{state=%s} = %v", s.end, got)
		}
	}
	// No label anywhere else may carry a run id.
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		for _, mt := range f.GetMetric() {
			for _, l := range mt.GetLabel() {
				if l.GetValue() == "r1" || l.GetValue() == "r2" || l.GetName() == "run_id" {
					t.Errorf("%s carries %s=%s", f.GetName(), l.GetName(), l.GetValue())
				}
			}
		}
	}
}

func TestRunMethodErrors(t *testing.T) {
	m, _ := newTest(t)
	if err := m.RunStarted("a", "Server", "m", "http://h", 10); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		call func() error
	}{
		{"second active run", func() error { return m.RunStarted("b", "Server", "m", "http://h", 10) }},
		{"empty id", func() error { return m.RunStarted("", "Server", "m", "http://h", 10) }},
		{"negative target", func() error { return m.RunStarted("c", "Server", "m", "http://h", -1) }},
		{"NaN target", func() error { return m.RunStarted("c", "Server", "m", "http://h", math.NaN()) }},
		{"end of another run", func() error { return m.RunEnded("b", StateDone) }},
		{"end in a non-final state", func() error { return m.RunEnded("a", StateRunning) }},
		{"end in an unknown state", func() error { return m.RunEnded("a", "exploded") }},
		{"unknown state", func() error { return m.SetState("paused") }},
		{"infinite target", func() error { return m.SetTargetQPS(math.Inf(1)) }},
		{"trial 0", func() error { return m.SearchProgress(0, 1, 2) }},
		{"upper below lower", func() error { return m.SearchProgress(1, 5, 2) }},
		{"NaN lower", func() error { return m.SearchProgress(1, math.NaN(), 2) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.call(); !errors.Is(err, ErrRun) {
				t.Errorf("error %v, want one wrapping ErrRun", err)
			}
		})
	}
	// The bad calls changed nothing: a still ends normally, and then search
	// progress needs a run.
	if err := m.SearchProgress(1, 0, math.Inf(1)); err != nil {
		t.Errorf("unbounded upper: %v", err)
	}
	if err := m.RunEnded("a", StateDone); err != nil {
		t.Fatal(err)
	}
	if err := m.SearchProgress(1, 1, 2); !errors.Is(err, ErrRun) {
		t.Errorf("search progress without a run: %v", err)
	}
}

func TestNewRegistration(t *testing.T) {
	if _, err := New(nil); err == nil {
		t.Error("New(nil) succeeded")
	}
	reg := NewRegistry()
	if _, err := New(reg); err != nil {
		t.Fatal(err)
	}
	var are prometheus.AlreadyRegisteredError
	if _, err := New(reg); !errors.As(err, &are) {
		t.Errorf("second New on one registry: %v", err)
	}
	// A clash in the middle leaves the registry as it was.
	reg = prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "loadgend_run_info", Help: "clash"}))
	if _, err := New(reg); err == nil {
		t.Fatal("New over a clashing metric succeeded")
	}
	if got := series(t, reg, "loadgend_queries_issued_total"); len(got) != 0 {
		t.Errorf("failed New left metrics behind")
	}
	// The fresh registry has the runtime and process collectors.
	reg = NewRegistry()
	for _, name := range []string{"go_goroutines", "process_start_time_seconds"} {
		if got := series(t, reg, name); len(got) != 1 {
			t.Errorf("%s: %d series", name, len(got))
		}
	}
}
