package loadgen

import (
	"fmt"
	"time"

	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/shape"
	"github.com/netloadgen/netloadgen/pkg/stats"
)

// StagedShape is a load shape made of stages (shape.Staged's): result.json
// then has stages[], and each query's trace.Query.Stage indexes Stages().
type StagedShape interface{ Stages() []shape.Stage }

// ModelShape is a load shape that names its queries' models (a mix, a
// trace file's model field): result.json then has models[], and each
// query's trace.Query.Model indexes Models().
type ModelShape interface{ Models() []string }

// Verdicts of a shaped run (LoadShape.VerdictBy).
const (
	// VerdictBySLO: the run's SLO bounds at their percentiles decide.
	VerdictBySLO = "slo"
	// VerdictByNone: no SLO, no verdict (result_validity N/A).
	VerdictByNone = "none"
)

// recSLO is the advice beside an unmet SLO bound.
const recSLO = "Lower the load (--stages' rates, --trace-speed) or speed up the server until the bound holds; failures count as over every bound."

// NAReason is the reason a shaped run without an SLO gives for its N/A.
const NAReason = "N/A: not a LoadGen scenario; give --slo for a verdict"

// LoadShape is what result.json says of a run with a load shape (stages, a
// trace file, a mix: issue 31), which is no LoadGen scenario: LoadGen's
// criteria (minimum duration and count, early stopping, the latency bound
// at its percentile, the early verdict) do not judge it. Its verdict is
// its SLO's, bound by bound, or none.
type LoadShape struct {
	// VerdictBy is VerdictBySLO or VerdictByNone.
	VerdictBy string `json:"verdict_by"`
	// SLO is --slo as given, empty without one.
	SLO string `json:"slo,omitempty"`
	// Bounds are the SLO's bounds as judged, in --slo's order.
	Bounds []SLOBoundResult `json:"bounds,omitempty"`
}

// SLOBoundResult is one SLO bound judged over a run's samples: the value
// at the percentile, sorted[floor(n·p)] of the samples it bounds with
// every failed sample counted as over (MeasuredNs -1 when that rank is a
// failed sample, or when no sample had the measurement).
type SLOBoundResult struct {
	Name       string  `json:"name"`
	Percentile float64 `json:"percentile"`
	BoundNs    int64   `json:"bound_ns"`
	MeasuredNs int64   `json:"measured_ns"`
	// Samples is how many samples the percentile was taken over, Failed
	// those among them that failed.
	Samples int64 `json:"samples"`
	Failed  int64 `json:"failed"`
	Met     bool  `json:"met"`
}

// partFiguresDoc: the figures of a part of a shaped run (a stage, a
// model), StageResult's and ModelResult's last fields, spelled out in each
// so that their JSON keys are plain fields for the OpenAPI schema: its
// counts; its sample latency over its answered samples (failed the failed
// ones), from an HDR histogram, within 0.1% of the exact value where
// result.json's sample_latency_answered is exact; its TTFT and TPOT (a
// generative run; the same histograms); and with an SLO the samples
// meeting it (genai.SLO.Met, per sample) and their rate over the part's
// time.

// StageResult is one stage of a staged run in result.json's stages[]. A
// sample belongs to the stage its query was scheduled in.
type StageResult struct {
	Stage  int     `json:"stage"`
	StartS float64 `json:"start_s"`
	EndS   float64 `json:"end_s"`
	// RateAsked is the stage's mean arrival rate (queries a second); a ramp
	// also gives its ends, RateFrom and RateTo.
	RateAsked float64  `json:"rate_asked"`
	RateFrom  *float64 `json:"rate_from,omitempty"`
	RateTo    *float64 `json:"rate_to,omitempty"`
	// RateAchieved is the samples issued in the stage over its length;
	// CompletedPerSecond the samples of the stage answered successfully
	// over its length.
	RateAchieved       float64 `json:"rate_achieved"`
	CompletedPerSecond float64 `json:"completed_per_second"`
	// The stage's figures (partFiguresDoc).
	SamplesIssued           int64        `json:"samples_issued"`
	SamplesCompleted        int64        `json:"samples_completed"`
	SamplesFailed           int64        `json:"samples_failed"`
	SampleLatency           LatencyStats `json:"sample_latency"`
	TTFT                    *TokenStats  `json:"ttft_ns,omitempty"`
	TPOT                    *TokenStats  `json:"tpot_ns,omitempty"`
	SamplesMeetingSLO       *int64       `json:"samples_meeting_slo,omitempty"`
	GoodputSamplesPerSecond *float64     `json:"goodput_samples_per_second,omitempty"`
}

// ModelResult is one model of a run whose shape names models, in
// result.json's models[].
type ModelResult struct {
	Model string `json:"model"`
	// The model's figures (partFiguresDoc).
	SamplesIssued           int64        `json:"samples_issued"`
	SamplesCompleted        int64        `json:"samples_completed"`
	SamplesFailed           int64        `json:"samples_failed"`
	SampleLatency           LatencyStats `json:"sample_latency"`
	TTFT                    *TokenStats  `json:"ttft_ns,omitempty"`
	TPOT                    *TokenStats  `json:"tpot_ns,omitempty"`
	SamplesMeetingSLO       *int64       `json:"samples_meeting_slo,omitempty"`
	GoodputSamplesPerSecond *float64     `json:"goodput_samples_per_second,omitempty"`
}

// Shaped says whether the result is a shaped run's (LoadShape set).
func (r *Result) Shaped() bool { return r.LoadShape != nil }

// Passed is the run's success as an exit status reads it: VALID, or for a
// run without a verdict (a closed loop, a shaped run without an SLO: N/A)
// every sample it sent answered.
func (r *Result) Passed() bool {
	if r.Valid {
		return true
	}
	return r.Validity == ValidityNA && r.SamplesFailed == 0 && r.SamplesCompleted > 0
}

// shapedResult turns a shaped run's result into what it is: its stages'
// and models' figures, and its SLO's verdict in place of LoadGen's.
func (r *Run) shapedResult(res *Result) {
	sh := r.tr.Shape()
	if sh == nil {
		return
	}
	var stages []shape.Stage
	var models []string
	if s, ok := sh.(StagedShape); ok {
		stages = s.Stages()
	}
	if m, ok := sh.(ModelShape); ok {
		models = m.Models()
	}
	if len(stages) > 0 || len(models) > 0 {
		b := r.breakdown(len(stages), len(models))
		if b.err != nil {
			res.Warnings = append(res.Warnings, "stages[] and models[] left out: "+b.err.Error())
		} else {
			res.Stages, res.Models = b.stages(stages), b.models(models)
			res.Warnings = append(res.Warnings, b.warnings()...)
		}
	}
	r.judgeShaped(res)
}

// judgeShaped sets a shaped run's verdict: VALID when every bound of its
// SLO holds at its percentile, INVALID naming those that do not, N/A
// without an SLO. Failures stay failures (samples_failed, failures), and
// count as over every bound.
func (r *Run) judgeShaped(res *Result) {
	slo := r.settings.Engine.SLO
	ls := &LoadShape{VerdictBy: VerdictByNone}
	res.LoadShape = ls
	res.EarlyStopping, res.Recommendations = nil, nil
	// The rate asked is the shape's, whose mean is the effective target
	// (server_target_qps, which the shape replaced, asked for nothing).
	res.TargetQPS = res.Effective.TargetQPS
	// No official length applies to what is no LoadGen scenario.
	res.CompliantLength, res.NonCompliant = false, []string{"a load shape (stages, a trace file, a mix) is not a LoadGen scenario"}
	if !slo.Set() {
		res.Valid, res.Validity, res.InvalidReasons = false, ValidityNA, nil
		res.Metric = Metric{Name: "Completed samples per second (load shape; no verdict)", Value: res.CompletedSamplesPerSec, Unit: "samples/s"}
		return
	}
	ls.VerdictBy, ls.SLO = VerdictBySLO, slo.String()
	var reasons []string
	for _, b := range slo.Bounds() {
		br := r.judgeBound(b)
		ls.Bounds = append(ls.Bounds, br)
		if !br.Met {
			reasons = append(reasons, boundReason(br))
			res.Recommendations = append(res.Recommendations, recSLO)
		}
	}
	res.Valid, res.InvalidReasons = len(reasons) == 0, reasons
	res.Validity = "INVALID"
	if res.Valid {
		res.Validity = "VALID"
	}
	res.Metric = Metric{Name: "Completed samples per second (load shape)", Value: res.CompletedSamplesPerSec, Unit: "samples/s"}
}

// boundReason is why an unmet bound makes the run INVALID.
func boundReason(b SLOBoundResult) string {
	at := fmt.Sprintf("%s %s is %s", genai.PercentileName(b.Percentile), b.Name, time.Duration(b.MeasuredNs))
	switch {
	case b.Samples == 0:
		at = fmt.Sprintf("no sample measured %s (a generative run's bound)", b.Name)
	case b.MeasuredNs < 0:
		at = fmt.Sprintf("%s %s is a failed sample (%d of %d failed)", genai.PercentileName(b.Percentile), b.Name, b.Failed, b.Samples)
	}
	return fmt.Sprintf("SLO %s=%s@%s not met: %s", b.Name, time.Duration(b.BoundNs), genai.PercentileName(b.Percentile), at)
}

// judgeBound measures one bound at its percentile over the run's samples:
// latency and e2e over every issued sample (the record, failures sorted
// last), ttft over the generative samples with tokens, tpot over those of
// two tokens or more, each with the failed samples as over. Exact, and
// read from the record in place: no per-sample copy (issue 28).
func (r *Run) judgeBound(b genai.SLOBound) SLOBoundResult {
	out := SLOBoundResult{Name: b.Name, Percentile: b.Percentile, BoundNs: int64(b.Bound), MeasuredNs: -1}
	var l stats.Latencies
	switch b.Name {
	case "latency", "e2e":
		l = r.samples.Latencies()
	default:
		t := r.tok.Load()
		if t == nil {
			return out
		}
		var err error
		if l, err = r.tokenLatencies(t, b.Name == "tpot"); err != nil {
			return out
		}
	}
	out.Samples, out.Failed = int64(l.Len()), int64(l.Failed())
	if out.Samples == out.Failed {
		// Nothing measured: no sample, or none answered.
		return out
	}
	if v, err := l.Percentile(b.Percentile); err == nil && v != stats.FailedLatency {
		out.MeasuredNs = int64(v)
	}
	out.Met = out.MeasuredNs >= 0 && out.MeasuredNs <= out.BoundNs
	return out
}

// tokenLatencies are the TTFT (tpot false) or TPOT of every sample that
// has one, and every failed sample as FailedLatency, scanned from the
// record and the token record whenever the selection asks.
func (r *Run) tokenLatencies(t *tokenRecord, tpot bool) (stats.Latencies, error) {
	scan := func(yield func(time.Duration) bool) {
		stopped := false
		r.samples.Each(0, r.n*r.spq, func(seq int, d time.Duration) {
			if stopped {
				return
			}
			n := t.tokens[seq]
			switch {
			case d == stats.FailedLatency:
			case n <= 0, tpot && n < 2:
				return
			case tpot:
				ttft := min(max(time.Duration(t.first[seq]), 0), d)
				d = samplePOT(int64(d), int64(ttft), int64(n))
			default:
				d = min(max(time.Duration(t.first[seq]), 0), d)
			}
			stopped = !yield(max(d, 0))
		})
	}
	n := 0
	for range scan {
		n++
	}
	return stats.LatenciesOf(n, scan)
}
