package search

import (
	"slices"
	"time"

	"github.com/netloadgen/netloadgen/pkg/genai"
)

// Result is a search's record (search.json).
type Result struct {
	// Mode is ModeFindPeak or ModeSweep (absent from records written
	// before sweeps: a peak search).
	Mode      string `json:"mode,omitempty"`
	Ruleset   string `json:"ruleset"`
	Scenario  string `json:"scenario"`
	Algorithm string `json:"algorithm"`
	// Unit of targets: "queries/s" (Server) or "samples/query" (MultiStream).
	Unit  string `json:"unit"`
	Found bool   `json:"found"`
	// JudgedBy is how a trial passes (JudgedByLatency, JudgedByValidity);
	// Criterion says it in words, with the bound.
	JudgedBy  string `json:"judged_by"`
	Criterion string `json:"criterion"`
	// GoodputPercent and SLO are a goodput search's (JudgedByGoodput): a
	// trial passes when this share of its samples met the SLO.
	GoodputPercent float64    `json:"goodput_percent,omitempty"`
	SLO            *genai.SLO `json:"slo,omitempty"`
	// Peak is the highest target that passed as the algorithm requires.
	Peak float64 `json:"peak"`
	// Reported is the figure a submission would give: v0.5 Server the
	// minimum scheduled samples per second of the verifying runs, loadgen6
	// the peak trial's; MultiStream the stream count.
	Reported float64 `json:"reported"`
	// PeakTrial is the trial whose logs are the search's own (copied to the
	// search's directory): the verifying run with the minimum for v0.5.
	PeakTrial int   `json:"peak_trial,omitempty"`
	Verifying []int `json:"verifying_trials,omitempty"`
	// PeakRunVerdict is the peak trial's own validity as a single run
	// ("VALID" or "INVALID"); PeakRunNotMet the criteria it missed. A
	// loadgen6 peak judged by the latency constraint may be an INVALID
	// run.
	PeakRunVerdict string   `json:"peak_run_verdict,omitempty"`
	PeakRunNotMet  []string `json:"peak_run_not_met,omitempty"`
	// Lower and Upper are the last bracket (Upper 0: no trial failed).
	Lower     float64 `json:"lower"`
	Upper     float64 `json:"upper"`
	EndReason string  `json:"end_reason"`
	// TrialWarmupMs is each trial's warm-up before its timed run (0:
	// none); RetryFailedTrials how many times a trial that failed early
	// may run again (Config.Retry).
	TrialWarmupMs     uint64 `json:"trial_warmup_ms,omitempty"`
	RetryFailedTrials int    `json:"retry_failed_trials,omitempty"`
	// Strategy is StrategyFull or StrategyScout (absent from records
	// written before strategies: full). Stages are a scout search's time
	// in each stage; MinDurationS the full-length trial's minimum
	// duration, and FullLengthS what the timed runs of as many trials
	// would have taken at full length (trials × MinDurationS), beside
	// DurationS, the time spent.
	Strategy     string      `json:"strategy,omitempty"`
	Stages       []StageTime `json:"stages,omitempty"`
	MinDurationS float64     `json:"min_duration_s,omitempty"`
	FullLengthS  float64     `json:"full_length_equivalent_s,omitempty"`
	Trials       []Trial     `json:"trials"`
	Started      time.Time   `json:"started"`
	Ended        time.Time   `json:"ended"`
	DurationS    float64     `json:"duration_s"`
}

// Trial is one trial in the record.
type Trial struct {
	Index int   `json:"index"`
	Phase Phase `json:"phase"`
	// Stage is the trial's stage in a scout search: StageScout, a short
	// trial, or StageVerify, a full-length one (absent in a full search).
	// MinDurationS is the minimum duration it ran with (absent where not
	// known).
	Stage         string  `json:"stage,omitempty"`
	MinDurationS  float64 `json:"min_duration_s,omitempty"`
	Target        float64 `json:"target"`
	Dir           string  `json:"dir,omitempty"` // relative to the search's directory
	Pass          bool    `json:"pass"`
	Verdict       string  `json:"verdict"`
	Achieved      float64 `json:"achieved"`
	Metric        float64 `json:"metric"`
	TailLatencyMs float64 `json:"tail_latency_ms"`
	// TailLatencyAnsweredMs is TailLatencyMs over the answered samples
	// only (absent when none was answered, and from older records):
	// TailLatencyMs is LoadGen's, 9223372036854.775 when the percentile
	// lands on a failed sample.
	TailLatencyAnsweredMs *float64 `json:"tail_latency_answered_ms,omitempty"`
	Percentile            float64  `json:"percentile"`
	DurationS             float64  `json:"duration_s"`
	// RunS is the trial's timed run (the engine's duration, without
	// connecting or the warm-up): what a retry's "failed early" measures.
	RunS         float64 `json:"run_s,omitempty"`
	EarlyVerdict string  `json:"early_verdict,omitempty"`
	// LatencyBoundMs is the latency constraint's bound at Percentile
	// (Server).
	LatencyBoundMs float64 `json:"latency_bound_ms,omitempty"`
	// Criteria are the trial's run criterion by criterion (absent from
	// records written before they were kept).
	Criteria *Criteria `json:"criteria,omitempty"`
	// Latency is the trial's sample latency at p50, p90 and p99, and
	// OverBound its samples over the latency bound (Server), for a sweep's
	// latency-vs-load table (absent from older records).
	Latency   *Percentiles `json:"latency_ms,omitempty"`
	OverBound int64        `json:"over_bound_samples"`
	// LatencyAnswered is the trial's latency at p50, p90 and p99 over its
	// answered samples only, and FailedSamples how many failed: what the
	// tables show, where Latency (LoadGen's convention) has "failed" for
	// a percentile that lands on a failed sample (absent from older
	// records, and when no sample was answered).
	LatencyAnswered *Percentiles `json:"latency_answered_ms,omitempty"`
	FailedSamples   int64        `json:"failed_samples"`
	// TokenLatencies are a token-latency trial's TTFT and TPOT at the
	// percentile against their bounds; Goodput a trial's samples meeting
	// the SLO (with --slo). Absent otherwise.
	TokenLatencies *TokenFigures   `json:"token_latencies,omitempty"`
	Goodput        *GoodputFigures `json:"goodput,omitempty"`
	// RetryOf is the trial this one ran again (Config.Retry: it failed
	// early); RetriedAs the trial that ran this one again, whose verdict
	// the search took instead of this one's. 0: none.
	RetryOf   int `json:"retry_of,omitempty"`
	RetriedAs int `json:"retried_as,omitempty"`
}

// StageTime is a scout search's stage: its trials and the wall time they
// took.
type StageTime struct {
	Stage     string  `json:"stage"`
	Trials    int     `json:"trials"`
	DurationS float64 `json:"duration_s"`
}

// Percentiles are a trial's sample latencies in ms; FailedPercentile (-1)
// where the percentile lands on a failed sample.
type Percentiles struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
}

// PeakRecord is the peak trial's record; false when there is no peak.
func (r *Result) PeakRecord() (Trial, bool) {
	if !r.Found {
		return Trial{}, false
	}
	i := slices.IndexFunc(r.Trials, func(t Trial) bool { return t.Index == r.PeakTrial })
	if i < 0 {
		return Trial{}, false
	}
	return r.Trials[i], true
}
