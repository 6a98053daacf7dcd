package loadgen

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/netloadgen/netloadgen/pkg/stats"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// Sample statuses in the per-sample export besides a failure's outcome.
const (
	SampleOK     = "ok"
	SampleFailed = "failed" // failed, its outcome unknown (no token record yet)
)

// WriteSamples writes the per-sample export (`--samples-out`): one JSON
// object a line for every issued sample, in sequence order:
//
//	{"sample":0,"index":17,"scheduled":1000,"sent":1020,"first_token":5100,"last_token":90200,"tokens":128,"input_tokens":512,"status":"ok"}
//
// Times are ns since the run's start (result.json's start_time): the
// query's scheduled time, when it was handed to the SUT (sent), the first
// token-bearing response and the last response (null when there was none:
// a failed sample has no last_token, a sample without tokens no
// first_token). A failed sample keeps what was measured: its first token,
// the tokens it received, its input tokens. status is "ok", or a failed
// sample's outcome ("timeout", "malformed", "unanswered", ...; "failed"
// when the run knew of no tokens yet). A distributed run's lines (a merged
// run whose workers NameWorkers named) end with "worker", the name of the
// worker that issued the sample. A shaped run's lines (issue 31) carry,
// before "worker", "stage" (the index of its query's stage, in
// result.json's stages[]) when the shape has stages and "model" (its
// query's model's name) when it names models. Call it after Execute has
// returned.
func (r *Run) WriteSamples(w io.Writer) error {
	t := r.tok.Load()
	parts := r.sampleParts()
	buf := make([]byte, 0, 64<<10)
	cur := r.tr.Cursor()
	defer cur.Close() // a shaped run's pass may hold a trace file
	var err error
	r.times.each(func(q int, sched, issued int64) bool {
		// The log holds issued queries only, in trace order; with several
		// shards a stop may have left gaps.
		tq, ok := cur.Next()
		for ok && tq.Index < q {
			tq, ok = cur.Next()
		}
		if !ok {
			// A shaped pass that could not open or ended early (its file
			// changed): no line is made up for the queries it lost.
			err = fmt.Errorf("loadgen: samples export: the load shape's pass ended before query %d: %w", q, cur.Err())
			return false
		}
		samples := tq.Samples
		if r.sess != nil {
			// What issueSessions sent: the turn's own sample.
			samples = r.tr.SessionSample(int(r.sess.sessOf[q]), int(r.sess.turnOf[q]))
		}
		r.samples.Each(q*r.spq, (q+1)*r.spq, func(seq int, d time.Duration) {
			buf = r.appendSample(buf, t, seq, samples[seq%r.spq], sched, issued, d, parts.of(tq))
		})
		if len(buf) > 60<<10 {
			_, err = w.Write(buf)
			buf = buf[:0]
		}
		return err == nil
	})
	if err == nil && len(buf) > 0 {
		_, err = w.Write(buf)
	}
	return err
}

// appendSample appends sample seq's line: index is its QSL index, sched
// and issued its query's times, d its latency (FailedLatency for a failed
// sample), part its query's stage and model when the run is shaped.
func (r *Run) appendSample(b []byte, t *tokenRecord, seq, index int, sched, issued int64, d time.Duration, part samplePart) []byte {
	b = append(b, `{"sample":`...)
	b = strconv.AppendInt(b, int64(seq), 10)
	b = append(b, `,"index":`...)
	b = strconv.AppendInt(b, int64(index), 10)
	b = append(b, `,"scheduled":`...)
	b = strconv.AppendInt(b, sched, 10)
	b = append(b, `,"sent":`...)
	b = strconv.AppendInt(b, issued, 10)
	var tokens, input int64
	first := int64(-1)
	status := SampleOK
	if t != nil {
		tokens, input = int64(t.tokens[seq]), int64(t.input[seq])
		if tokens > 0 {
			first = sched + t.first[seq]
		}
		if s := t.status[seq]; s > 0 {
			status = t.outcomes[s-1]
		}
	}
	failed := d == stats.FailedLatency
	if failed && status == SampleOK {
		status = SampleFailed
	}
	b = appendOptInt(append(b, `,"first_token":`...), first, first >= 0)
	b = appendOptInt(append(b, `,"last_token":`...), sched+int64(d), !failed)
	b = append(b, `,"tokens":`...)
	b = strconv.AppendInt(b, tokens, 10)
	b = append(b, `,"input_tokens":`...)
	b = strconv.AppendInt(b, input, 10)
	b = append(b, `,"status":`...)
	b = strconv.AppendQuote(b, status)
	if part.hasStage {
		b = append(b, `,"stage":`...)
		b = strconv.AppendInt(b, int64(part.stage), 10)
	}
	if part.hasModel {
		b = append(b, `,"model":`...)
		b = strconv.AppendQuote(b, part.model)
	}
	b = r.appendSession(b, seq)
	if w, ok := r.workerOf(seq); ok {
		// A distributed run's line names the worker that issued it.
		b = append(b, `,"worker":`...)
		b = strconv.AppendQuote(b, w)
	}
	return append(b, "}\n"...)
}

func appendOptInt(b []byte, v int64, ok bool) []byte {
	if !ok {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, v, 10)
}

// sampleParts are what a shaped run's sample lines name: the stages'
// presence and the models' names (none for a run without a shape).
type sampleParts struct {
	stages bool
	models []string
}

// samplePart is one line's stage and model.
type samplePart struct {
	stage              int
	model              string
	hasStage, hasModel bool
}

func (r *Run) sampleParts() sampleParts {
	var p sampleParts
	sh := r.tr.Shape()
	if s, ok := sh.(StagedShape); ok && len(s.Stages()) > 0 {
		p.stages = true
	}
	if m, ok := sh.(ModelShape); ok {
		p.models = m.Models()
	}
	return p
}

// of is q's part; a model index outside the list is left out.
func (p sampleParts) of(q trace.Query) samplePart {
	sp := samplePart{stage: q.Stage, hasStage: p.stages}
	if q.Model >= 0 && q.Model < len(p.models) {
		sp.model, sp.hasModel = p.models[q.Model], true
	}
	return sp
}
