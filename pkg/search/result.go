package search

import "time"

// Result is a search's record (search.json).
type Result struct {
	Ruleset   string `json:"ruleset"`
	Scenario  string `json:"scenario"`
	Algorithm string `json:"algorithm"`
	// Unit of targets: "queries/s" (Server) or "samples/query" (MultiStream).
	Unit  string `json:"unit"`
	Found bool   `json:"found"`
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
	// Lower and Upper are the last bracket (Upper 0: no trial failed).
	Lower     float64   `json:"lower"`
	Upper     float64   `json:"upper"`
	EndReason string    `json:"end_reason"`
	Trials    []Trial   `json:"trials"`
	Started   time.Time `json:"started"`
	Ended     time.Time `json:"ended"`
	DurationS float64   `json:"duration_s"`
}

// Trial is one trial in the record.
type Trial struct {
	Index         int     `json:"index"`
	Phase         Phase   `json:"phase"`
	Target        float64 `json:"target"`
	Dir           string  `json:"dir,omitempty"` // relative to the search's directory
	Pass          bool    `json:"pass"`
	Verdict       string  `json:"verdict"`
	Achieved      float64 `json:"achieved"`
	Metric        float64 `json:"metric"`
	TailLatencyMs float64 `json:"tail_latency_ms"`
	Percentile    float64 `json:"percentile"`
	DurationS     float64 `json:"duration_s"`
	EarlyVerdict  string  `json:"early_verdict,omitempty"`
}
