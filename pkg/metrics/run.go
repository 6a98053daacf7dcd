package metrics

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Run states, as the control API names them.
const (
	StateQueued      = "queued"
	StateRunning     = "running"
	StateDone        = "done"
	StateFailed      = "failed"
	StateCancelled   = "cancelled"
	StateInterrupted = "interrupted"
)

// States returns every run state: the values of loadgend_run_state's state
// label.
func States() []string {
	return []string{StateQueued, StateRunning, StateDone, StateFailed, StateCancelled, StateInterrupted}
}

func terminal(s string) bool {
	return s == StateDone || s == StateFailed || s == StateCancelled || s == StateInterrupted
}

// ErrRun is wrapped by every error of the run methods (an unknown state, a
// second active run, an end for a run that is not active).
var ErrRun = errors.New("metrics: run")

// RunStarted makes id the active run: loadgend_run_info carries its labels,
// the state is running, the target rate is targetQPS, the search gauges
// and the achieved-rate window start afresh. One run is active at a time.
// targetQPS is in samples per second, like the achieved rate: LoadGen's
// target QPS for Server and Offline, target QPS × samples per query for
// MultiStream.
func (m *Metrics) RunStarted(id, scenario, model, target string, targetQPS float64) error {
	if id == "" {
		return fmt.Errorf("%w: empty run id", ErrRun)
	}
	if math.IsNaN(targetQPS) || math.IsInf(targetQPS, 0) || targetQPS < 0 {
		return fmt.Errorf("%w %s: target rate %v is not a finite non-negative number", ErrRun, id, targetQPS)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.active != "" {
		return fmt.Errorf("%w %s: run %s is still active", ErrRun, id, m.active)
	}
	m.active, m.activeInfo = id, []string{id, scenario, model, target}
	m.info.WithLabelValues(m.activeInfo...).Set(1)
	m.setState(StateRunning)
	m.targetQPS.Set(targetQPS)
	m.resetSearch()
	m.rate.restart(m.okSamples.Load())
	return nil
}

// RunEnded ends the active run id in a final state (done, failed,
// cancelled, interrupted): its info series goes, the state gauge shows the
// final state until the next run, loadgend_runs_total{state} counts it, and
// the target and search gauges return to zero.
func (m *Metrics) RunEnded(id, state string) error {
	if !terminal(state) {
		return fmt.Errorf("%w %s: %q is not a final state (done, failed, cancelled, interrupted)", ErrRun, id, state)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if id == "" || id != m.active {
		return fmt.Errorf("%w %s: not the active run (active: %q)", ErrRun, id, m.active)
	}
	m.info.DeleteLabelValues(m.activeInfo...)
	m.active, m.activeInfo = "", nil
	m.setState(state)
	m.runs.WithLabelValues(state).Inc()
	m.targetQPS.Set(0)
	m.tok.setBounds(0, 0)
	m.resetSearch()
	return nil
}

// SetState shows state as the current one (e.g. queued while a run waits)
// without starting or ending a run.
func (m *Metrics) SetState(state string) error {
	if !slices.Contains(States(), state) {
		return fmt.Errorf("%w: unknown state %q (want one of %v)", ErrRun, state, States())
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.setState(state)
	return nil
}

// SetTargetQPS changes the active run's target rate, as a peak search does
// from one trial to the next.
func (m *Metrics) SetTargetQPS(qps float64) error {
	if math.IsNaN(qps) || math.IsInf(qps, 0) || qps < 0 {
		return fmt.Errorf("%w: target rate %v is not a finite non-negative number", ErrRun, qps)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.active == "" {
		return fmt.Errorf("%w: a target rate without an active run", ErrRun)
	}
	m.targetQPS.Set(qps)
	return nil
}

// SearchProgress reports a peak search's trial (counting from 1) and its
// bounds on the peak rate; upper may be +Inf before a trial has failed.
func (m *Metrics) SearchProgress(trial int, lower, upper float64) error {
	switch {
	case trial < 1:
		return fmt.Errorf("%w: search trial %d; trials count from 1", ErrRun, trial)
	case math.IsNaN(lower) || math.IsInf(lower, 0) || lower < 0:
		return fmt.Errorf("%w: search lower bound %v is not a finite non-negative number", ErrRun, lower)
	case math.IsNaN(upper) || math.IsInf(upper, -1) || upper < lower:
		return fmt.Errorf("%w: search upper bound %v is below the lower bound %v", ErrRun, upper, lower)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.active == "" {
		return fmt.Errorf("%w: search progress without an active run", ErrRun)
	}
	m.searchTrial.Set(float64(trial))
	m.searchLow.Set(lower)
	m.searchHigh.Set(upper)
	return nil
}

func (m *Metrics) setState(state string) {
	for _, s := range States() {
		v := 0.0
		if s == state {
			v = 1
		}
		m.state.WithLabelValues(s).Set(v)
	}
}

func (m *Metrics) resetSearch() {
	m.searchTrial.Set(0)
	m.searchLow.Set(0)
	m.searchHigh.Set(0)
}
