package loadgen

import (
	"fmt"
	"math"
	"time"

	"github.com/netloadgen/netloadgen/pkg/stats"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// Preset is one task's official constraints: for the vision and
// translation tasks from the MLPerf Inference papers (MLPERF.md, "Per-task
// presets"): the Server latency bound, the v0.5 MultiStream interval
// (which is also its latency bound) and the tail percentile; for the LLM
// tasks from LoadGen 6.0.17's mlperf.conf (official.conf, which
// TestLLMPresetsAreOfficialConf compares them with): token latencies, the
// TTFT and TPOT bounds, equal-issue mode and the Offline sample count.
//
// The v0.5 rules' table swaps the MultiStream intervals of MobileNet (66 ms
// there) and SSD-ResNet34 (50 ms there); the presets follow the papers
// (MobileNet 50 ms, SSD-ResNet34 66 ms), as MLPERF.md decides
// (SEEDS-DIGEST X-04).
type Preset struct {
	Task                string        `json:"task"`
	ServerLatencyBound  time.Duration `json:"server_latency_bound_ns"`
	MultiStreamInterval time.Duration `json:"multi_stream_interval_ns"`
	// TailPercentile is the Server and v0.5 MultiStream percentile: 0.99
	// for vision, 0.97 for translation.
	TailPercentile float64 `json:"tail_percentile"`

	// LoadGen6Only: the task came after v0.5 (the LLMs); its preset
	// needs the loadgen6 ruleset.
	LoadGen6Only bool `json:"loadgen6_only,omitempty"`
	// ConfModel is the task's model name in mlperf.conf when it is not
	// Task ("llama3_1-405b" for llama3.1-405b).
	ConfModel string `json:"conf_model,omitempty"`
	// UseTokenLatencies, TTFTLatency and TPOTLatency: a Server run is
	// judged by time to first token and time per output token
	// (ServerLatencyBound is then 0, as mlperf.conf sets it).
	UseTokenLatencies bool          `json:"use_token_latencies,omitempty"`
	TTFTLatency       time.Duration `json:"ttft_latency_ns,omitempty"`
	TPOTLatency       time.Duration `json:"tpot_latency_ns,omitempty"`
	// InferTokenLatencies and TokenLatencyScalingFactor: gptj's token
	// figures, inferred as that many tokens per sample.
	InferTokenLatencies       bool   `json:"infer_token_latencies,omitempty"`
	TokenLatencyScalingFactor uint64 `json:"token_latency_scaling_factor,omitempty"`
	// SampleConcatenatePermutation is equal-issue mode, for tasks whose
	// samples differ in length.
	SampleConcatenatePermutation bool `json:"sample_concatenate_permutation,omitempty"`
	// OfflineSamples is the Offline query's official minimum sample
	// count when mlperf.conf sets one for the task (0: the generic
	// 24,576).
	OfflineSamples uint64 `json:"offline_samples,omitempty"`
}

// llmPreset is an LLM task's preset: loadgen6 only, p99, equal issue.
func llmPreset(p Preset) Preset {
	p.LoadGen6Only, p.TailPercentile, p.SampleConcatenatePermutation = true, 0.99, true
	return p
}

var presets = []Preset{
	{Task: "resnet50", ServerLatencyBound: 15 * time.Millisecond, MultiStreamInterval: 50 * time.Millisecond, TailPercentile: 0.99},
	{Task: "mobilenet", ServerLatencyBound: 10 * time.Millisecond, MultiStreamInterval: 50 * time.Millisecond, TailPercentile: 0.99},
	{Task: "ssd-resnet34", ServerLatencyBound: 100 * time.Millisecond, MultiStreamInterval: 66 * time.Millisecond, TailPercentile: 0.99},
	{Task: "ssd-mobilenet", ServerLatencyBound: 10 * time.Millisecond, MultiStreamInterval: 50 * time.Millisecond, TailPercentile: 0.99},
	{Task: "gnmt", ServerLatencyBound: 250 * time.Millisecond, MultiStreamInterval: 100 * time.Millisecond, TailPercentile: 0.97},
	// LoadGen 6.0.17 mlperf.conf: <model>.Server.ttft_latency / tpot_latency,
	// <model>.Offline.min_query_count.
	llmPreset(Preset{Task: "llama2-70b", UseTokenLatencies: true, TTFTLatency: 2000 * time.Millisecond, TPOTLatency: 200 * time.Millisecond, OfflineSamples: 24_576}),
	llmPreset(Preset{Task: "llama2-70b-interactive", UseTokenLatencies: true, TTFTLatency: 450 * time.Millisecond, TPOTLatency: 40 * time.Millisecond}),
	llmPreset(Preset{Task: "llama3.1-405b", ConfModel: "llama3_1-405b", UseTokenLatencies: true, TTFTLatency: 6000 * time.Millisecond, TPOTLatency: 175 * time.Millisecond, OfflineSamples: 8313}),
	llmPreset(Preset{Task: "mixtral-8x7b", UseTokenLatencies: true, TTFTLatency: 2000 * time.Millisecond, TPOTLatency: 200 * time.Millisecond, OfflineSamples: 15_000}),
	// gptj is judged by query latency (20 s); its token figures are inferred.
	llmPreset(Preset{Task: "gptj", ServerLatencyBound: 20 * time.Second, InferTokenLatencies: true, TokenLatencyScalingFactor: 69, OfflineSamples: 13_368}),
}

// ConfName is the task's model name in mlperf.conf.
func (p Preset) ConfName() string {
	if p.ConfModel != "" {
		return p.ConfModel
	}
	return p.Task
}

// Presets returns every task preset.
func Presets() []Preset { return append([]Preset(nil), presets...) }

// LookupPreset returns the preset of a task (resnet50, mobilenet,
// ssd-resnet34, ssd-mobilenet, gnmt; under loadgen6 also llama2-70b,
// llama2-70b-interactive, llama3.1-405b, mixtral-8x7b, gptj).
func LookupPreset(task string) (Preset, error) {
	for _, p := range presets {
		if p.Task == task {
			return p, nil
		}
	}
	names := make([]string, len(presets))
	for i, p := range presets {
		names[i] = p.Task
	}
	return Preset{}, fmt.Errorf("%w: task: unknown preset %q (want one of %v)", trace.ErrInvalidSettings, task, names)
}

// Official minimum durations: 60 s in the v0.5 rules (002:57), 600 s in
// LoadGen 6.0's mlperf.conf.
const (
	officialMinDurationV05      = 60_000
	officialMinDurationLoadGen6 = 600_000
	// Offline: one query of at least 24,576 samples (000:533, 002:79;
	// mlperf.conf resnet50.Offline.min_query_count).
	officialOfflineSamples = 24_576
	// v0.5 SingleStream: 1,024 queries (002:57).
	officialSingleStreamQueriesV05 = 1_024
	// loadgen6 MultiStream: mlperf.conf's min_query_count = h(1)+1 at p99.
	officialMultiStreamQueriesLoadGen6 = 662
)

// Minimums returns the official minimum duration (ms) and query count of a
// scenario under a ruleset with tail percentile p. For Offline the count is
// the minimum number of samples of its one query. Counts derived from the
// percentile use stats.NumQueries (270,336 at 0.99, 90,112 at 0.97).
func Minimums(r Ruleset, scenario trace.Scenario, p float64) (minDurationMs, minCount uint64) {
	numQueries := func() uint64 {
		n, err := stats.NumQueries(p, 0.99)
		if err != nil {
			return math.MaxUint64 // an impossible percentile can never be compliant
		}
		return uint64(n)
	}
	if r == RulesetV05 {
		switch scenario {
		case trace.SingleStream:
			return officialMinDurationV05, officialSingleStreamQueriesV05
		case trace.MultiStream, trace.Server:
			return officialMinDurationV05, numQueries()
		default:
			return officialMinDurationV05, officialOfflineSamples
		}
	}
	switch scenario {
	case trace.SingleStream, trace.Server:
		// mlperf.conf sets no count: early stopping decides the queries needed.
		return officialMinDurationLoadGen6, 0
	case trace.MultiStream:
		return officialMinDurationLoadGen6, officialMultiStreamQueriesLoadGen6
	default:
		return officialMinDurationLoadGen6, officialOfflineSamples
	}
}

// NewSettings returns DefaultSettings(r) for the scenario with the task's
// preset applied (task "" applies none; see ApplyPreset).
func NewSettings(r Ruleset, scenario trace.Scenario, task string) (Settings, error) {
	s := DefaultSettings(r)
	s.Scenario = scenario
	if r != RulesetV05 && r != RulesetLoadGen6 {
		return s, fmt.Errorf("%w: ruleset: %q is not %q or %q", trace.ErrInvalidSettings, r, RulesetV05, RulesetLoadGen6)
	}
	if err := s.ApplyPreset(task); err != nil {
		return s, err
	}
	return s, nil
}

// ApplyPreset applies a task's preset to the settings' ruleset and
// scenario (task "" applies none): the official bound, interval,
// percentile, minimum duration and count. Expected latency or target QPS,
// which only size the trace or set the load, stay as they are for the
// caller to set.
func (s *Settings) ApplyPreset(task string) error {
	if task == "" {
		return nil
	}
	p, err := LookupPreset(task)
	if err != nil {
		return err
	}
	if p.LoadGen6Only && s.Ruleset != RulesetLoadGen6 {
		return fmt.Errorf("%w: task: preset %q is a LoadGen 6.0 task (v0.5 had no LLM benchmarks); use ruleset %q", trace.ErrInvalidSettings, task, RulesetLoadGen6)
	}
	s.Task = task
	s.ServerTargetLatencyNs = uint64(p.ServerLatencyBound)
	if p.LoadGen6Only {
		s.applyTokenPreset(p)
	}
	s.ServerTargetLatencyPercentile = p.TailPercentile
	s.SingleStreamTargetLatencyPercentile = 0.90
	if s.Ruleset == RulesetV05 {
		s.MultiStreamTargetLatencyPercentile = p.TailPercentile
		s.MultiStreamTargetQPS = float64(time.Second) / float64(p.MultiStreamInterval)
		s.MultiStreamMaxAsyncQueries = 1
		s.MultiStreamSamplesPerQuery = 4 // v0.5 mlperf.conf; the stream count under test
	} else {
		s.MultiStreamTargetLatencyPercentile = 0.99
		s.MultiStreamSamplesPerQuery = 8
		s.MultiStreamExpectedLatencyNs = 80_000_000 // mlperf.conf *.MultiStream.target_latency = 80
		s.SingleStreamExpectedLatencyNs = 10_000_000
	}
	minMs, minCount := p.minimums(s.Ruleset, s.Scenario, s.TargetPercentile())
	s.MinDurationMs = minMs
	if minCount > 0 {
		s.MinQueryCount = minCount
	}
	return nil
}

// applyTokenPreset sets the LLM settings mlperf.conf sets for an LLM
// task, each of them (LoadGen's default where the task sets none: gptj's
// TTFT and TPOT). Other presets leave them as the confs gave them.
// performance_sample_count_override is left to the data, as for every
// preset: the QSL decides its size.
func (s *Settings) applyTokenPreset(p Preset) {
	d := DefaultSettings(s.Ruleset)
	s.UseTokenLatencies, s.ServerTTFTLatencyNs, s.ServerTPOTLatencyNs = p.UseTokenLatencies, d.ServerTTFTLatencyNs, d.ServerTPOTLatencyNs
	if p.UseTokenLatencies {
		s.ServerTTFTLatencyNs, s.ServerTPOTLatencyNs = uint64(p.TTFTLatency), uint64(p.TPOTLatency)
	}
	s.InferTokenLatencies, s.TokenLatencyScalingFactor = p.InferTokenLatencies, p.TokenLatencyScalingFactor
	s.SampleConcatenatePermutation = p.SampleConcatenatePermutation
}

// minimums are Minimums with the task's own Offline sample count.
func (p Preset) minimums(r Ruleset, scenario trace.Scenario, pct float64) (minDurationMs, minCount uint64) {
	minMs, minCount := Minimums(r, scenario, pct)
	if scenario == trace.Offline && p.OfflineSamples > 0 {
		minCount = p.OfflineSamples
	}
	return minMs, minCount
}

// compliance lists why the settings are shorter than the official run of
// their ruleset and scenario; empty means a compliant length.
func (s Settings) compliance(e trace.Effective) []string {
	p := s.TargetPercentile()
	var pr Preset
	if s.Task != "" {
		var err error
		if pr, err = LookupPreset(s.Task); err == nil && (s.Scenario == trace.Server || (s.Scenario == trace.MultiStream && s.Ruleset == RulesetV05)) {
			p = pr.TailPercentile
		}
	}
	minMs, minCount := pr.minimums(s.Ruleset, s.Scenario, p)
	var why []string
	if s.MinDurationMs < minMs {
		why = append(why, fmt.Sprintf("min_duration_ms %d is below the official %d", s.MinDurationMs, minMs))
	}
	if s.Scenario == trace.Offline {
		if e.SamplesPerQuery < minCount {
			why = append(why, fmt.Sprintf("the Offline query has %d samples, below the official %d", e.SamplesPerQuery, minCount))
		}
	} else if e.MinQueryCount < minCount {
		why = append(why, fmt.Sprintf("min_query_count %d is below the official %d", e.MinQueryCount, minCount))
	}
	return why
}
