package loadgen

import (
	"fmt"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/netloadgen/netloadgen/pkg/shape"
	"github.com/netloadgen/netloadgen/pkg/stats"
)

// groupAcc accumulates one stage's or one model's figures in a pass over
// the record: counts and histograms, never a per-sample copy, so that the
// memory a breakdown takes is the parts' count times a few histograms,
// whatever the run's length.
type groupAcc struct {
	issued, completed, failed, met int64
	lat, ttft, tpot                *hdrhistogram.Histogram
}

// partSample is one sample as a breakdown reads it.
type partSample struct {
	d, ttft, tpot time.Duration
	tokens        int
	failed        bool
}

// shapeBreakdown is a shaped run's record split by stage and by model.
type shapeBreakdown struct {
	st, mo []groupAcc
	// stray counts samples whose query named a stage (model) the shape's
	// list has not: a shape that disagrees with itself, reported.
	strayStage, strayModel int64
	slo                    bool
	runSecs                float64
	err                    error
}

// breakdown walks the run's issued queries with a cursor beside the
// record, as WriteSamples does (the shape's pass gives each query's stage
// and model), and adds each sample to its stage's and its model's part.
func (r *Run) breakdown(nStages, nModels int) *shapeBreakdown {
	b := &shapeBreakdown{st: make([]groupAcc, nStages), mo: make([]groupAcc, nModels), slo: r.settings.Engine.SLO.Set()}
	slo := r.settings.Engine.SLO
	t := r.tok.Load()
	cur := r.tr.Cursor()
	defer cur.Close()
	r.times.each(func(q int, _, _ int64) bool {
		tq, ok := cur.Next()
		for ok && tq.Index < q {
			tq, ok = cur.Next()
		}
		if !ok {
			b.err = fmt.Errorf("the load shape's pass ended before query %d: %w", q, cur.Err())
			return false
		}
		r.samples.Each(q*r.spq, (q+1)*r.spq, func(seq int, d time.Duration) {
			s := partSample{d: d, failed: d == stats.FailedLatency}
			if t != nil && !s.failed && t.tokens[seq] > 0 {
				s.tokens = int(t.tokens[seq])
				s.ttft = min(max(time.Duration(t.first[seq]), 0), d)
				s.tpot = samplePOT(int64(d), int64(s.ttft), int64(s.tokens))
			}
			// A sample without a first token has no TTFT: it meets no ttft
			// bound, as the verdict's judgeBound leaves it out of the TTFTs.
			met := b.slo && !s.failed && (slo.TTFT == 0 || s.tokens > 0) && slo.Met(s.ttft, s.tpot, s.d, s.tokens)
			b.strayStage += add(b.st, tq.Stage, s, met, t != nil)
			b.strayModel += add(b.mo, tq.Model, s, met, t != nil)
		})
		return true
	})
	if ns := r.lastDoneNs(); ns > 0 {
		b.runSecs = float64(ns) / 1e9
	}
	return b
}

// add adds s to part i of parts; 1 when there is no part i (and the parts
// are not empty: a shape without that list has no parts), else 0.
func add(parts []groupAcc, i int, s partSample, met, generative bool) int64 {
	if len(parts) == 0 {
		return 0
	}
	if i < 0 || i >= len(parts) {
		return 1
	}
	g := &parts[i]
	g.issued++
	if s.failed {
		g.failed++
		return 0
	}
	g.completed++
	if met {
		g.met++
	}
	record(&g.lat, s.d)
	if generative && s.tokens > 0 {
		record(&g.ttft, s.ttft)
		if s.tokens >= 2 {
			record(&g.tpot, s.tpot)
		}
	}
	return 0
}

// record records d in *h, made on first use (a part's token histograms
// only exist in a generative run), clamped into its range.
func record(h **hdrhistogram.Histogram, d time.Duration) {
	if *h == nil {
		*h = stats.NewHistogram()
	}
	_ = (*h).RecordValue(min(max(int64(d), 0), stats.HistogramMax)) // within range: cannot fail
}

// warnings name the samples that fell outside the shape's lists.
func (b *shapeBreakdown) warnings() []string {
	var w []string
	if b.strayStage > 0 {
		w = append(w, fmt.Sprintf("%d samples' queries named a stage past the load shape's %d stages: left out of stages[]", b.strayStage, len(b.st)))
	}
	if b.strayModel > 0 {
		w = append(w, fmt.Sprintf("%d samples' queries named a model past the load shape's %d models: left out of models[]", b.strayModel, len(b.mo)))
	}
	return w
}

// stages are result.json's stages[] from the parts and the stages' list.
func (b *shapeBreakdown) stages(list []shape.Stage) []StageResult {
	if len(b.st) == 0 {
		return nil
	}
	out := make([]StageResult, len(list))
	var start time.Duration
	for i, s := range list {
		g := &b.st[i]
		secs := s.Duration.Seconds()
		sr := StageResult{Stage: i, StartS: start.Seconds(), EndS: (start + s.Duration).Seconds(), RateAsked: (s.From + s.To) / 2}
		if s.From != s.To {
			from, to := s.From, s.To
			sr.RateFrom, sr.RateTo = &from, &to
		}
		if secs > 0 {
			sr.RateAchieved, sr.CompletedPerSecond = float64(g.issued)/secs, float64(g.completed)/secs
		}
		sr.SamplesIssued, sr.SamplesCompleted, sr.SamplesFailed = g.issued, g.completed, g.failed
		sr.SampleLatency, sr.TTFT, sr.TPOT = g.figures()
		sr.SamplesMeetingSLO, sr.GoodputSamplesPerSecond = b.goodput(g, secs)
		out[i] = sr
		start += s.Duration
	}
	return out
}

// models are result.json's models[]; a model's goodput counts over the
// run's time to its last completion, as tokens' does.
func (b *shapeBreakdown) models(names []string) []ModelResult {
	if len(b.mo) == 0 {
		return nil
	}
	out := make([]ModelResult, len(names))
	for i, name := range names {
		g := &b.mo[i]
		mr := ModelResult{Model: name, SamplesIssued: g.issued, SamplesCompleted: g.completed, SamplesFailed: g.failed}
		mr.SampleLatency, mr.TTFT, mr.TPOT = g.figures()
		mr.SamplesMeetingSLO, mr.GoodputSamplesPerSecond = b.goodput(g, b.runSecs)
		out[i] = mr
	}
	return out
}

// goodput is a part's samples meeting the SLO and their rate over secs;
// nil without an SLO.
func (b *shapeBreakdown) goodput(g *groupAcc, secs float64) (*int64, *float64) {
	if !b.slo {
		return nil, nil
	}
	met, rate := g.met, 0.0
	if secs > 0 {
		rate = float64(met) / secs
	}
	return &met, &rate
}

// figures are a part's latency table (answered samples, the failed
// counted beside) and token tables.
func (g *groupAcc) figures() (LatencyStats, *TokenStats, *TokenStats) {
	ls := LatencyStats{Count: int(g.completed), Failed: int(g.failed)}
	if h := g.lat; h != nil && h.TotalCount() > 0 {
		ls.MinNs, ls.MaxNs, ls.MeanNs = h.Min(), h.Max(), int64(h.Mean())
		for _, p := range reportedPercentiles {
			ls.Percentiles = append(ls.Percentiles, Percentile{P: p, LatencyNs: h.ValueAtQuantile(p * 100)})
		}
	}
	return ls, hdrTokenStats(g.ttft), hdrTokenStats(g.tpot)
}

// hdrTokenStats summarises a histogram as TokenStats; nil for none.
func hdrTokenStats(h *hdrhistogram.Histogram) *TokenStats {
	if h == nil || h.TotalCount() == 0 {
		return nil
	}
	at := func(p float64) int64 { return h.ValueAtQuantile(p * 100) }
	return &TokenStats{Count: h.TotalCount(), Mean: int64(h.Mean()), P50: at(0.5), P90: at(0.9), P99: at(0.99), Max: h.Max()}
}
