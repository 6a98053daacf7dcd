package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// Workers (issue 29): loadgend processes that register with a coordinator
// loadgend over this API and carry shards of its distributed runs. A worker
// reaches the coordinator, never the reverse, so workers behind NAT or in
// other clusters work.

// WorkerSessionHeader carries the session a registration gave on each of the
// worker's later requests: a worker that registered again (after a restart,
// or after it was lost) is a new session, and the old one's heartbeats no
// longer keep it alive.
const WorkerSessionHeader = "Loadgend-Worker-Session"

// MaxWorkerNameLen bounds a worker's name, a DNS label's length: it goes in
// URLs, metrics labels and logs.
const MaxWorkerNameLen = 63

// WorkerState is a worker's state as the coordinator sees it.
type WorkerState string

// The worker states.
const (
	WorkerIdle WorkerState = "idle" // registered, heartbeating, no run
	WorkerBusy WorkerState = "busy" // picked for a run
	WorkerLost WorkerState = "lost" // no heartbeat for the worker timeout
)

// WorkerStates lists the states in openapi.yaml's order.
func WorkerStates() []WorkerState { return []WorkerState{WorkerIdle, WorkerBusy, WorkerLost} }

// WorkerRegistration is the body of POST /v1/workers.
type WorkerRegistration struct {
	// Name is unique among live workers: lower-case letters, digits, '-'
	// and '.', starting and ending with a letter or digit, at most 63.
	Name string `json:"name"`
	// Version is the worker's build (pkg/version.String()); it must be the
	// coordinator's.
	Version string `json:"version"`
	// Address is the worker's own /metrics and /healthz listen address, as
	// it sees it (informational: the coordinator never connects to it).
	Address string `json:"address,omitempty"`
}

// WorkerRegistered answers a registration: what the worker needs.
type WorkerRegistered struct {
	Name string `json:"name"`
	// Session goes in WorkerSessionHeader on the worker's later requests.
	Session string `json:"session"`
	// HeartbeatIntervalMs is how often to send a heartbeat; a worker
	// silent for WorkerTimeoutMs is lost.
	HeartbeatIntervalMs int64 `json:"heartbeat_interval_ms"`
	WorkerTimeoutMs     int64 `json:"worker_timeout_ms"`
	// PollWaitMs is the longest a GET .../work waits before its 204.
	PollWaitMs int64 `json:"poll_wait_ms"`
}

// WorkerHeartbeat is the body of POST /v1/workers/{name}/heartbeat.
type WorkerHeartbeat struct {
	// RunID is the assignment the worker is carrying out, "" when none.
	RunID string `json:"run_id,omitempty"`
	// Finished reports an assignment that ended since the last heartbeat.
	Finished *WorkerFinished `json:"finished,omitempty"`
}

// WorkerFinished is the end of an assignment, as the worker saw it.
type WorkerFinished struct {
	RunID string `json:"run_id"`
	// Error is what the executor returned, "" for none.
	Error string `json:"error,omitempty"`
}

// WorkerHeartbeatAck answers a heartbeat.
type WorkerHeartbeatAck struct {
	// HeartbeatIntervalMs may change (a run with a shorter
	// worker_timeout_ms): the worker takes it from here on.
	HeartbeatIntervalMs int64 `json:"heartbeat_interval_ms"`
	// StopRunID tells the worker to stop the assignment of that run now:
	// the run ended (another worker was lost, it was cancelled), or the
	// coordinator does not know it (it restarted).
	StopRunID string `json:"stop_run_id,omitempty"`
}

// WorkerAssignment is what a worker's GET .../work returns: a shard of a
// run to carry out, or an instruction to measure its clock again (or
// both: the clock first).
type WorkerAssignment struct {
	// RunID is the distributed run; "" when this is only SyncClock.
	RunID string `json:"run_id,omitempty"`
	// Spec is the run's api.RunSpec, as the coordinator decoded it.
	Spec json.RawMessage `json:"spec,omitempty"`
	// Shard of Shards: the worker issues the queries i of the run's trace
	// with i mod Shards = Shard.
	Shard  int `json:"shard"`
	Shards int `json:"shards"`
	// StartNs is when to issue the first query, in nanoseconds since the
	// Unix epoch on the worker's own clock.
	StartNs int64 `json:"start_ns,omitempty"`
	// SyncClock asks the worker to make its clock exchanges now.
	SyncClock bool `json:"sync_clock,omitempty"`
}

// WorkerClockRequest is one clock exchange, POST /v1/workers/{name}/clock.
// The worker sends its exchanges in sequence, Seq 0 first (which starts a
// new measurement); each request carries T3 of the one before, so the
// coordinator, which keeps its own T1 and T2, holds all four readings of
// every completed exchange. The last request (Final) only completes the
// one before and gets the estimate back.
type WorkerClockRequest struct {
	Seq int `json:"seq"`
	// T0Ns is the worker's clock when it sent this request.
	T0Ns int64 `json:"t0_ns"`
	// PrevT3Ns is the worker's clock when the answer to Seq-1 arrived.
	PrevT3Ns int64 `json:"prev_t3_ns,omitempty"`
	Final    bool  `json:"final,omitempty"`
}

// WorkerClockResponse answers a clock exchange.
type WorkerClockResponse struct {
	Seq int `json:"seq"`
	// T1Ns and T2Ns are the coordinator's clock when the request arrived
	// and when it answered.
	T1Ns int64 `json:"t1_ns"`
	T2Ns int64 `json:"t2_ns"`
	// Estimate is set on the answer to a Final request.
	Estimate *WorkerClock `json:"estimate,omitempty"`
}

// WorkerClock is a worker's clock as the coordinator measured it.
type WorkerClock struct {
	// OffsetNs is the worker's clock minus the coordinator's.
	OffsetNs int64 `json:"offset_ns"`
	// UncertaintyNs bounds OffsetNs's error: half the least round trip.
	UncertaintyNs int64 `json:"uncertainty_ns"`
	Exchanges     int   `json:"exchanges"`
}

// WorkerInfo is one worker in GET /v1/workers.
type WorkerInfo struct {
	Name    string      `json:"name"`
	Address string      `json:"address,omitempty"`
	Version string      `json:"version"`
	State   WorkerState `json:"state"`
	// RunID is the run the worker was picked for, while busy.
	RunID         string    `json:"run_id,omitempty"`
	RegisteredAt  time.Time `json:"registered_at"`
	LastHeartbeat time.Time `json:"last_heartbeat"`
	// The clock estimate; absent until the worker's first measurement.
	ClockOffsetNs      *int64     `json:"clock_offset_ns,omitempty"`
	ClockUncertaintyNs *int64     `json:"clock_uncertainty_ns,omitempty"`
	ClockMeasuredAt    *time.Time `json:"clock_measured_at,omitempty"`
}

// WorkerList is GET /v1/workers: the workers by name.
type WorkerList struct {
	Workers []WorkerInfo `json:"workers"`
}

// DecodeWorkerRegistration reads a registration strictly and checks its
// fields.
func DecodeWorkerRegistration(r io.Reader, lim Limits) (WorkerRegistration, error) {
	lim = lim.WithDefaults()
	var reg WorkerRegistration
	if err := decodeStrict(r, lim.MaxBodyBytes, &reg); err != nil {
		return WorkerRegistration{}, err
	}
	if err := CheckWorkerName(reg.Name); err != nil {
		return WorkerRegistration{}, &FieldError{Field: "name", Message: err.Error()}
	}
	if err := checkName("version", reg.Version, true); err != nil {
		return WorkerRegistration{}, err
	}
	if err := checkName("address", reg.Address, false); err != nil {
		return WorkerRegistration{}, err
	}
	return reg, nil
}

// DecodeWorkerHeartbeat reads a heartbeat strictly; an empty body is an
// empty heartbeat.
func DecodeWorkerHeartbeat(body []byte, lim Limits) (WorkerHeartbeat, error) {
	var hb WorkerHeartbeat
	if len(body) == 0 {
		return hb, nil
	}
	lim = lim.WithDefaults()
	if err := decodeStrict(bytes.NewReader(body), lim.MaxBodyBytes, &hb); err != nil {
		return WorkerHeartbeat{}, err
	}
	if err := checkName("run_id", hb.RunID, false); err != nil {
		return WorkerHeartbeat{}, err
	}
	if f := hb.Finished; f != nil {
		if err := checkName("finished.run_id", f.RunID, true); err != nil {
			return WorkerHeartbeat{}, err
		}
		if len(f.Error) > 4096 {
			f.Error = f.Error[:4096]
		}
	}
	return hb, nil
}

// DecodeWorkerClockRequest reads a clock exchange strictly.
func DecodeWorkerClockRequest(r io.Reader, lim Limits) (WorkerClockRequest, error) {
	lim = lim.WithDefaults()
	var c WorkerClockRequest
	if err := decodeStrict(r, lim.MaxBodyBytes, &c); err != nil {
		return WorkerClockRequest{}, err
	}
	switch {
	case c.Seq < 0 || c.Seq > MaxClockExchanges:
		return WorkerClockRequest{}, fieldErr("seq", "must be 0 to %d, got %d", MaxClockExchanges, c.Seq)
	case c.T0Ns <= 0 && !c.Final:
		return WorkerClockRequest{}, fieldErr("t0_ns", "must be the worker's clock in ns since the Unix epoch, got %d", c.T0Ns)
	case c.Seq > 0 && c.PrevT3Ns <= 0:
		return WorkerClockRequest{}, fieldErr("prev_t3_ns", "is required after seq 0 (the worker's clock when the answer to seq %d arrived)", c.Seq-1)
	}
	return c, nil
}

// MaxClockExchanges bounds one measurement's exchanges.
const MaxClockExchanges = 64

// CheckWorkerName says what is wrong with a worker name, nil when nothing:
// a DNS-label-like name (lower-case letters, digits, '-' and '.', from and
// to a letter or digit, 1 to 63 bytes), safe in a URL path, a metrics label
// and a log line.
func CheckWorkerName(name string) error {
	if name == "" {
		return errors.New("is required")
	}
	if len(name) > MaxWorkerNameLen {
		return fmt.Errorf("%d bytes, over %d", len(name), MaxWorkerNameLen)
	}
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !alnum(c) && c != '-' && c != '.' {
			return fmt.Errorf("%q has %q at byte %d: want lower-case letters, digits, '-' and '.'", name, rune(c), i)
		}
	}
	if !alnum(name[0]) || !alnum(name[len(name)-1]) {
		return fmt.Errorf("%q must start and end with a letter or digit", name)
	}
	return nil
}
