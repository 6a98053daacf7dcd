package api

import (
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
)

// RunCreated is the 202 answer to POST /v1/runs.
type RunCreated struct {
	ID    string `json:"id"`
	URL   string `json:"url"` // /v1/runs/{id}
	State State  `json:"state"`
	// QueuePosition is how many runs are ahead of this one (running or
	// queued before it): 0 means it starts next, or has started.
	QueuePosition int `json:"queue_position"`
}

// RunStatus is GET /v1/runs/{id}, and one entry of GET /v1/runs.
type RunStatus struct {
	ID        string     `json:"id"`
	URL       string     `json:"url"`
	State     State      `json:"state"`
	Spec      RunSpec    `json:"spec"`
	CreatedAt time.Time  `json:"created_at"`
	StartedAt *time.Time `json:"started_at,omitempty"`
	EndedAt   *time.Time `json:"ended_at,omitempty"`
	// EndReason is why the run ended: the engine's end_reason
	// (pkg/loadgen.StopReason: completed, max_duration, cancelled, ...)
	// for a run that reached the engine; "error" for a failed run;
	// "interrupted" when the daemon stopped under it.
	EndReason string `json:"end_reason,omitempty"`
	// Error says why a failed run failed.
	Error string `json:"error,omitempty"`
	// Validity is "VALID" or "INVALID" once the engine gave a verdict.
	Validity string `json:"validity,omitempty"`
	// QueuePosition is set while queued: runs ahead of this one.
	QueuePosition *int `json:"queue_position,omitempty"`
	// Progress is live while running and the last snapshot afterwards
	// (absent for a run that never started).
	Progress *Progress `json:"progress,omitempty"`
	// Trials are a search's trials so far, in order.
	Trials []Trial `json:"trials,omitempty"`
	// Files are the names under /v1/runs/{id}/files/ that exist.
	Files []string `json:"files,omitempty"`
}

// Progress is a live snapshot of a run (also the data of an SSE progress
// event). Counts are queries unless named samples.
type Progress struct {
	PlannedQueries   int   `json:"planned_queries"`
	Issued           int64 `json:"issued"`
	Completed        int64 `json:"completed"`
	InFlight         int64 `json:"in_flight"`
	CompletedSamples int64 `json:"completed_samples"`
	// Failed counts failed samples (errors, timeouts, unanswered).
	Failed int64 `json:"failed"`
	// OverLatency counts Server samples over the latency bound.
	OverLatency int64 `json:"over_latency"`
	// ElapsedS is time since the run's clock started; ExpectedEndS when
	// issuing should end, on the same clock.
	ElapsedS     float64 `json:"elapsed_s"`
	ExpectedEndS float64 `json:"expected_end_s"`
	// CurrentQPS is the completion rate over the last few seconds.
	CurrentQPS float64 `json:"current_qps"`
	// Live latency percentiles over the completed samples (HDR histogram,
	// 3 significant digits), in milliseconds.
	P50Ms              float64 `json:"p50_ms"`
	P90Ms              float64 `json:"p90_ms"`
	P99Ms              float64 `json:"p99_ms"`
	MaxIssueLatenessMs float64 `json:"max_issue_lateness_ms"`
}

// ProgressFrom converts the engine's snapshot; currentQPS is the caller's
// windowed completion rate (the engine keeps none).
func ProgressFrom(p loadgen.Progress, currentQPS float64) Progress {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return Progress{
		PlannedQueries:     p.PlannedQueries,
		Issued:             p.IssuedQueries,
		Completed:          p.CompletedQueries,
		InFlight:           p.InFlightQueries,
		CompletedSamples:   p.CompletedSamples,
		Failed:             p.FailedSamples,
		OverLatency:        p.OverLatencySamples,
		ElapsedS:           p.Elapsed.Seconds(),
		ExpectedEndS:       p.ExpectedEnd.Seconds(),
		CurrentQPS:         currentQPS,
		P50Ms:              ms(p.P50),
		P90Ms:              ms(p.P90),
		P99Ms:              ms(p.P99),
		MaxIssueLatenessMs: ms(p.MaxIssueLateness),
	}
}

// Trial is one run of a peak search.
type Trial struct {
	// Index numbers the trials from 1.
	Index int    `json:"index"`
	RunID string `json:"run_id"`
	// Target is the QPS the trial asked for; Achieved the completed
	// samples per second it measured.
	Target   float64 `json:"target"`
	Achieved float64 `json:"achieved"`
	// TailLatencyMs is the latency at Percentile (the scenario's target
	// percentile).
	TailLatencyMs float64 `json:"tail_latency_ms"`
	Percentile    float64 `json:"percentile"`
	// Verdict is "VALID" or "INVALID", or "" while the trial runs.
	Verdict   string  `json:"verdict,omitempty"`
	DurationS float64 `json:"duration_s"`
}

// RunList is GET /v1/runs: newest first.
type RunList struct {
	Runs []RunStatus `json:"runs"`
	// NextPageToken fetches the next page; empty on the last.
	NextPageToken string `json:"next_page_token,omitempty"`
}

// StateEvent is the data of an SSE state event.
type StateEvent struct {
	ID        string    `json:"id"`
	State     State     `json:"state"`
	At        time.Time `json:"at"`
	EndReason string    `json:"end_reason,omitempty"`
	Error     string    `json:"error,omitempty"`
	Validity  string    `json:"validity,omitempty"`
}

// Server-sent event names of GET /v1/runs/{id}/events. The stream sends a
// state event first, progress events while the run goes, and a state event
// for each change; it ends after a terminal state.
const (
	EventProgress = "progress" // data: Progress
	EventState    = "state"    // data: StateEvent
)

// Version is GET /v1/version.
type Version struct {
	Version   string `json:"version"`    // pkg/version.String()
	GoVersion string `json:"go_version"` // runtime.Version()
	API       string `json:"api"`        // APIVersion
}

// APIVersion is the control API's version: the /v1 prefix and openapi.yaml's info.version major.
const APIVersion = "v1"
