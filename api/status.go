package api

import (
	"math"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/serverview"
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
	// InvalidReasons are result.json's invalid_reasons: why an INVALID run
	// is, one per unmet criterion.
	InvalidReasons []string `json:"invalid_reasons,omitempty"`
	// Warnings are result.json's warnings: netloadgen's, not reasons of the
	// verdict (e.g. the load generator's issue lateness was a material share
	// of the latency bound: generator_bound).
	Warnings []string `json:"warnings,omitempty"`
	// Failures are result.json's failures: the failed samples by kind,
	// most first (absent when none failed).
	Failures []Failure `json:"failures,omitempty"`
	// TokenLatencies are result.json's token_latencies: a Server run with
	// use_token_latencies judged by TTFT and TPOT.
	TokenLatencies *TokenLatencies `json:"token_latencies,omitempty"`
	// AnsweredLatencyMs is result.json's sample_latency_answered in ms
	// (a search's: its peak trial's): the finished run's sample latencies
	// over its answered samples, with the failed ones counted beside them
	// (absent before the run ends and for a result.json without it).
	AnsweredLatencyMs *AnsweredLatency `json:"answered_latency_ms,omitempty"`
	// AchievedQPS is the rate the finished run achieved, from result.json
	// (a search's: its peak trial's), in the unit of the asked rate
	// (settings.target_qps): AchievedQPSOf says which figure (absent
	// before the run ends and for a run without result.json).
	AchievedQPS *float64 `json:"achieved_qps,omitempty"`
	// QueuePosition is set while queued: runs ahead of this one.
	QueuePosition *int `json:"queue_position,omitempty"`
	// Progress is live while running and the last snapshot afterwards
	// (absent for a run that never started).
	Progress *Progress `json:"progress,omitempty"`
	// Trials are a search's trials so far, in order.
	Trials []Trial `json:"trials,omitempty"`
	// Search is a peak search's answer (present for a search once its
	// first trial has finished).
	Search *SearchStatus `json:"search,omitempty"`
	// Files are the names under /v1/runs/{id}/files/ that exist.
	Files []string `json:"files,omitempty"`
}

// AnsweredLatency are a run's sample latencies in ms over the answered
// samples only (Count of them), and the Failed samples left out: a failed
// sample has no latency (result.json's sample_latency gives it LoadGen's
// INT64_MAX). The percentiles are 0 when none was answered.
type AnsweredLatency struct {
	Count  int     `json:"count"`
	Failed int     `json:"failed"`
	P50    float64 `json:"p50"`
	P90    float64 `json:"p90"`
	P99    float64 `json:"p99"`
	Max    float64 `json:"max"`
}

// AnsweredLatencyOf converts result.json's sample_latency_answered (nil
// stays nil).
func AnsweredLatencyOf(s *loadgen.LatencyStats) *AnsweredLatency {
	if s == nil {
		return nil
	}
	at := func(p float64) float64 {
		d, _ := s.At(p)
		return float64(d) / float64(time.Millisecond)
	}
	a := &AnsweredLatency{Count: s.Count, Failed: s.Failed, P50: at(0.50), P90: at(0.90), P99: at(0.99)}
	if s.Count > 0 {
		a.Max = float64(s.MaxNs) / float64(time.Millisecond)
	}
	return a
}

// AchievedQPSOf is the rate a result achieved, as LoadGen computes it for
// its scenario: Offline's result_samples_per_second, SingleStream's and
// MultiStream's result_qps_with_loadgen_overhead (queries a second),
// else (Server, a load shape, a closed loop) result_completed_samples_per_sec;
// where that figure is 0 (too few samples for LoadGen's formula), the
// answered samples over the run's duration. Nil for a nil result.
func AchievedQPSOf(res *loadgen.Result) *float64 {
	if res == nil {
		return nil
	}
	var v float64
	switch res.Scenario {
	case "Offline":
		v = res.SamplesPerSecond
	case "SingleStream", "MultiStream":
		v = res.QPSWithLoadgenOverhead
	default:
		v = res.CompletedSamplesPerSec
	}
	if v == 0 && res.DurationNs > 0 {
		v = float64(res.SamplesCompleted) / (float64(res.DurationNs) / 1e9)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		v = 0 // JSON has no NaN: a result that broke the formula shows 0
	}
	return &v
}

// Failure is one kind of failure a run saw (result.json's failures[]):
// loadgen.Failure on the wire, kept here so the contract does not move with
// the engine.
type Failure struct {
	// Outcome is one of unanswered, timeout, connection_closed, transport,
	// error, malformed, too_large, bad_response, other.
	Outcome string `json:"outcome"`
	// Status is the status the server answered with ("HTTP 500",
	// "gRPC UNAVAILABLE"), "" when none.
	Status string `json:"status"`
	Count  int64  `json:"count"`
	// Example is the first message of this kind.
	Example string `json:"example"`
}

// FailuresOf converts a result's failures to the wire's.
func FailuresOf(fs []loadgen.Failure) []Failure {
	var out []Failure
	for _, f := range fs {
		out = append(out, Failure(f))
	}
	return out
}

// TokenLatencies are a run's token-latency constraints (result.json's
// token_latencies; pkg/loadgen/RESULT.md): loadgen.TokenLatencies on the
// wire, kept here so the contract does not move with the engine.
type TokenLatencies struct {
	Percentile            float64    `json:"percentile"`
	Samples               int64      `json:"samples"`
	SamplesUnderTwoTokens int64      `json:"samples_under_two_tokens"`
	TTFT                  TokenBound `json:"ttft"`
	TPOT                  TokenBound `json:"tpot"`
	Met                   bool       `json:"met"`
	EarlyStoppingMet      *bool      `json:"early_stopping_met,omitempty"`
}

// TokenBound is one token constraint: the percentile against its bound.
type TokenBound struct {
	PercentileNs          int64  `json:"percentile_ns"`
	BoundNs               uint64 `json:"bound_ns"`
	Met                   bool   `json:"met"`
	OverBound             int64  `json:"over_bound"`
	EarlyStoppingMet      *bool  `json:"early_stopping_met,omitempty"`
	EarlyStoppingRequired int64  `json:"early_stopping_required,omitempty"`
	// AnsweredPercentileNs is the percentile over the answered samples
	// only (absent when none was answered, and for older results):
	// PercentileNs is LoadGen's, INT64_MAX when it lands on a failed
	// sample.
	AnsweredPercentileNs *int64 `json:"answered_percentile_ns,omitempty"`
}

// TokenLatenciesOf converts a result's token_latencies to the wire's (nil
// stays nil). Samples are the samples judged (none in Offline, which has
// no token constraint); a bound's early stopping is absent where LoadGen
// did not judge it (Offline; TTFT after TPOT's failed, as LoadGen's &&
// short-circuits).
func TokenLatenciesOf(t *loadgen.TokenLatencies) *TokenLatencies {
	if t == nil {
		return nil
	}
	out := &TokenLatencies{
		Percentile: t.Percentile, Samples: int64(t.TTFT.Count), SamplesUnderTwoTokens: t.FewTokenSamples,
		TTFT: tokenBoundOf(t.TTFTAtPercentileNs, t.TTFTBoundNs, t.TTFTMet, t.TTFTOverBound, t.TTFTEarlyStopping),
		TPOT: tokenBoundOf(t.TPOTAtPercentileNs, t.TPOTBoundNs, t.TPOTMet, t.TPOTOverBound, t.TPOTEarlyStopping),
		Met:  t.TTFTMet && t.TPOTMet,
	}
	out.TTFT.AnsweredPercentileNs = answeredAt(t.TTFTAnswered, t.Percentile)
	out.TPOT.AnsweredPercentileNs = answeredAt(t.TPOTAnswered, t.Percentile)
	if t.TPOTEarlyStopping != nil {
		met := t.EarlyStoppingMet
		out.EarlyStoppingMet = &met
	}
	return out
}

// answeredAt is an answered table's value at p, nil without one.
func answeredAt(s *loadgen.LatencyStats, p float64) *int64 {
	if s == nil {
		return nil
	}
	d, ok := s.At(p)
	if !ok {
		return nil
	}
	ns := int64(d)
	return &ns
}

func tokenBoundOf(at int64, bound uint64, met bool, over int64, es *loadgen.EarlyStoppingResult) TokenBound {
	b := TokenBound{PercentileNs: at, BoundNs: bound, Met: met, OverBound: over}
	if es != nil {
		esMet := es.Met
		b.OverBound, b.EarlyStoppingMet, b.EarlyStoppingRequired = es.OverLatency, &esMet, es.Required
	}
	return b
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
	// Recent is latency per second: the percentiles of the samples
	// completed over about the last second (1 to 1.5 s: the difference of
	// two snapshots of the live histogram); absent until the run has gone
	// a second.
	Recent *RecentLatency `json:"recent,omitempty"`
	// ServerMetrics are the known metrics' values (serverview.KnownMetrics:
	// queue depth, batch size, KV-cache use, GPU utilisation...) in the
	// latest scrape of the server's metrics; absent when none is scraped.
	ServerMetrics []serverview.LiveValue `json:"server_metrics,omitempty"`
	// ServerQueueNs is the server's own mean queue time per request over
	// its last read (about a second), from its statistics extension, and
	// ServerQueueRunNs the run's so far; absent when the endpoint does not
	// offer the extension (or no_server_statistics), ServerQueueNs also
	// when no request was answered since the read before.
	ServerQueueNs    *float64 `json:"server_queue_ns,omitempty"`
	ServerQueueRunNs *float64 `json:"server_queue_run_ns,omitempty"`
	// Failures are the failed samples so far by kind, as result.json's
	// failures name them (outcome, status), most first; absent when none
	// failed.
	Failures []LiveFailure `json:"failures,omitempty"`
	// Tokens are a generative run's token figures so far; absent until a
	// sample is answered with tokens, and for other runs.
	Tokens *LiveTokens `json:"tokens,omitempty"`
	// SearchTrial is the search's trial this progress is of (a search's
	// run only): the event stream's progress says which trial, and in a
	// scout search which stage, is running.
	SearchTrial *SearchTrialProgress `json:"search_trial,omitempty"`
}

// LiveFailure is one kind of failure while the run goes: Failure without
// its example, which is read once the run has ended.
type LiveFailure struct {
	Outcome string `json:"outcome"`
	Status  string `json:"status"`
	Count   int64  `json:"count"`
}

// LiveTokens are a generative run's token figures so far, over the samples
// answered with tokens: TTFT and TPOT percentiles from histograms (within
// 0.1%; result.json's tokens are exact), in milliseconds, and the output
// tokens over the time since the start (the run so far, not a window).
type LiveTokens struct {
	Samples               int64   `json:"samples"`
	OutputTokens          int64   `json:"output_tokens"`
	OutputTokensPerSecond float64 `json:"output_tokens_per_second"`
	TTFTP50Ms             float64 `json:"ttft_p50_ms"`
	TTFTP99Ms             float64 `json:"ttft_p99_ms"`
	TPOTP50Ms             float64 `json:"tpot_p50_ms"`
	TPOTP99Ms             float64 `json:"tpot_p99_ms"`
}

// RecentLatency is a progress event's latency per second.
type RecentLatency struct {
	// P50Ms and P99Ms are 0 when no sample completed in the window.
	P50Ms   float64 `json:"p50_ms"`
	P99Ms   float64 `json:"p99_ms"`
	Samples int64   `json:"samples"`
	WindowS float64 `json:"window_s"`
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
		Failures:           liveFailures(p.Failures),
		Tokens:             liveTokens(p.Tokens),
	}
}

func liveFailures(fs []loadgen.Failure) []LiveFailure {
	var out []LiveFailure
	for _, f := range fs {
		out = append(out, LiveFailure{Outcome: f.Outcome, Status: f.Status, Count: f.Count})
	}
	return out
}

func liveTokens(t *loadgen.LiveTokens) *LiveTokens {
	if t == nil {
		return nil
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return &LiveTokens{Samples: t.Samples, OutputTokens: t.OutputTokens, OutputTokensPerSecond: t.OutputTokensPerSecond,
		TTFTP50Ms: ms(t.TTFTP50), TTFTP99Ms: ms(t.TTFTP99), TPOTP50Ms: ms(t.TPOTP50), TPOTP99Ms: ms(t.TPOTP99)}
}

// Trial is one run of a peak search.
type Trial struct {
	// Index numbers the trials from 1.
	Index int    `json:"index"`
	RunID string `json:"run_id"`
	// Target is the QPS the trial asked for (a sweep of a trace's speeds:
	// the speed); Achieved the completed samples per second it measured.
	Target   float64 `json:"target"`
	Achieved float64 `json:"achieved"`
	// TailLatencyMs is the latency at Percentile (the scenario's target
	// percentile); -1 where it lands on a failed sample, as in LatencyMs
	// (search.json keeps LoadGen's INT64_MAX ns there: 9223372036854.775).
	TailLatencyMs float64 `json:"tail_latency_ms"`
	Percentile    float64 `json:"percentile"`
	// Verdict is "VALID" or "INVALID", or "" while the trial runs.
	Verdict   string  `json:"verdict,omitempty"`
	DurationS float64 `json:"duration_s"`
	// Phase says why the trial ran: base, boundary, bisect or verify.
	Phase string `json:"phase,omitempty"`
	// Stage is the trial's stage in a scout search (SearchStatus.Strategy
	// "scout"): "scout", a short trial, or "verify", a full-length one;
	// absent in a full search. MinDurationS is the minimum duration the
	// trial ran with (absent where not known): a scout's is short.
	Stage        string  `json:"stage,omitempty"`
	MinDurationS float64 `json:"min_duration_s,omitempty"`
	// Pass is the search's verdict on the trial (SearchStatus.JudgedBy),
	// which may differ from Verdict: loadgen6 passes an INVALID run that
	// meets the latency constraint.
	Pass bool `json:"pass"`
	// LatencyBoundMs is the latency constraint's bound at Percentile.
	LatencyBoundMs float64 `json:"latency_bound_ms,omitempty"`
	// Criteria are the trial's run criterion by criterion.
	Criteria *TrialCriteria `json:"criteria,omitempty"`
	// LatencyMs are the trial's sample latencies at p50, p90 and p99 (-1:
	// a failed sample), OverBoundSamples its samples over the bound: a
	// sweep's latency-vs-load figures.
	LatencyMs        *TrialLatency `json:"latency_ms,omitempty"`
	OverBoundSamples int64         `json:"over_bound_samples"`
	// TailLatencyAnsweredMs and LatencyAnsweredMs are TailLatencyMs and
	// LatencyMs over the answered samples only (absent when none was
	// answered, and for older records), FailedSamples the samples that
	// failed: TailLatencyMs is LoadGen's, 9223372036854.775 when the
	// percentile lands on a failed sample.
	TailLatencyAnsweredMs *float64      `json:"tail_latency_answered_ms,omitempty"`
	LatencyAnsweredMs     *TrialLatency `json:"latency_answered_ms,omitempty"`
	FailedSamples         int64         `json:"failed_samples"`
	// TokenLatencies are a token-latency trial's TTFT and TPOT at
	// Percentile against their bounds; Goodput its samples meeting the
	// SLO (search.json's, absent otherwise).
	TokenLatencies *TrialTokenLatencies `json:"token_latencies,omitempty"`
	Goodput        *TrialGoodput        `json:"goodput,omitempty"`
	// RetryOf is the trial this one ran again (it failed early and would
	// have bounded the search); RetriedAs the trial that ran this one
	// again, whose verdict the search took. 0: none.
	RetryOf   int `json:"retry_of,omitempty"`
	RetriedAs int `json:"retried_as,omitempty"`
}

// TrialTokenLatencies are a trial's TTFT and TPOT at the percentile, in ms,
// against their bounds.
type TrialTokenLatencies struct {
	TTFTMs      float64 `json:"ttft_ms"`
	TTFTBoundMs float64 `json:"ttft_bound_ms"`
	TTFTMet     bool    `json:"ttft_met"`
	TPOTMs      float64 `json:"tpot_ms"`
	TPOTBoundMs float64 `json:"tpot_bound_ms"`
	TPOTMet     bool    `json:"tpot_met"`
	// TTFTAnsweredMs and TPOTAnsweredMs are TTFT and TPOT at the
	// percentile over the answered samples only (absent when none was
	// answered, and for older records).
	TTFTAnsweredMs *float64 `json:"ttft_answered_ms,omitempty"`
	TPOTAnsweredMs *float64 `json:"tpot_answered_ms,omitempty"`
}

// TrialGoodput are a trial's samples meeting the SLO among those issued.
type TrialGoodput struct {
	SamplesIssued     int64   `json:"samples_issued"`
	SamplesMeetingSLO int64   `json:"samples_meeting_slo"`
	Percent           float64 `json:"percent"`
}

// TrialLatency are a trial's sample latencies in ms.
type TrialLatency struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
}

// TrialCriteria are a trial's run judged criterion by criterion (the run is
// VALID when all hold).
type TrialCriteria struct {
	LatencyMet       bool `json:"latency_met"`
	EarlyStoppingMet bool `json:"early_stopping_met"`
	MinDurationMet   bool `json:"min_duration_met"`
	MinQueriesMet    bool `json:"min_queries_met"`
	NoFailedSamples  bool `json:"no_failed_samples"`
}

// SearchStatus is a peak search's answer, or its state while it runs.
type SearchStatus struct {
	// Mode is the search's: "find-peak" or "sweep" (which finds no peak).
	Mode      string `json:"mode,omitempty"`
	Algorithm string `json:"algorithm"`
	// Unit of the targets: "queries/s" or "samples/query".
	Unit string `json:"unit"`
	// JudgedBy is how a trial passes: "latency_constraint" (loadgen6, as
	// LoadGen's FindPeakPerformance: the latency constraint only, with no
	// failed samples), "valid_run" (v0.5), "token_latency_constraint"
	// (use_token_latencies: TTFT and TPOT in place of the latency) or
	// "goodput" (search.goodput_percent); Criterion says it in words,
	// with the bound.
	JudgedBy  string `json:"judged_by"`
	Criterion string `json:"criterion"`
	// GoodputPercent is a goodput search's share (judged_by "goodput").
	GoodputPercent float64 `json:"goodput_percent,omitempty"`
	// Ended: the search is over; EndReason says why.
	Ended     bool   `json:"ended"`
	EndReason string `json:"end_reason,omitempty"`
	// Found: a peak passed as the search requires. Peak is the highest
	// target that did; Reported the figure a submission gives; Trial the
	// trial whose logs are the run's own (TrialRunID its run id).
	Found      bool    `json:"found"`
	Peak       float64 `json:"peak,omitempty"`
	Reported   float64 `json:"reported,omitempty"`
	Trial      int     `json:"trial,omitempty"`
	TrialRunID string  `json:"trial_run_id,omitempty"`
	// PeakRunValidity is the peak trial's own verdict as a single run;
	// PeakRunNotMet the criteria it missed ("early stopping", ...). A
	// loadgen6 peak judged by the latency constraint may be INVALID.
	PeakRunValidity string   `json:"peak_run_validity,omitempty"`
	PeakRunNotMet   []string `json:"peak_run_not_met,omitempty"`
	// Lower and Upper are the bracket on the peak (Upper 0: no trial
	// failed yet).
	Lower float64 `json:"lower"`
	Upper float64 `json:"upper"`
	// Strategy is "full" (every trial at full length, as LoadGen) or
	// "scout" (short trials scout the peak, full-length ones verify it);
	// absent for a search recorded before strategies: full.
	Strategy string `json:"strategy,omitempty"`
	// Stage is the stage of the scout search's trial running now
	// ("scout" or "verify"; absent between trials, once the search has
	// ended, and in a full search).
	Stage string `json:"stage,omitempty"`
	// Stages are a scout search's trials and time in each stage so far;
	// MinDurationS a full-length trial's minimum duration, and
	// FullLengthEquivalentS what the timed runs of as many trials would
	// have taken at full length (trials × min_duration_s), to set beside
	// the time the search took.
	Stages                []SearchStage `json:"stages,omitempty"`
	MinDurationS          float64       `json:"min_duration_s,omitempty"`
	FullLengthEquivalentS float64       `json:"full_length_equivalent_s,omitempty"`
}

// SearchStage is one stage of a scout search: its trials so far and the
// wall time they took.
type SearchStage struct {
	Stage     string  `json:"stage"`
	Trials    int     `json:"trials"`
	DurationS float64 `json:"duration_s"`
}

// SearchTrialProgress is the search trial a progress snapshot is of: its
// index (from 1), target, phase and, in a scout search, stage.
type SearchTrialProgress struct {
	Index  int     `json:"index"`
	Target float64 `json:"target"`
	Phase  string  `json:"phase,omitempty"`
	Stage  string  `json:"stage,omitempty"`
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
