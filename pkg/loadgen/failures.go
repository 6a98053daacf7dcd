package loadgen

import (
	"cmp"
	"errors"
	"slices"
	"sync/atomic"
	"unicode/utf8"

	"github.com/netloadgen/netloadgen/pkg/stats"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// FailureClassifier says why a sample failed: an outcome from a small fixed
// set ("error", "timeout", ...) and the protocol status the server answered
// with ("HTTP 500", "gRPC UNAVAILABLE"; "" when none). The engine knows no
// transport, so the runner sets it (pkg/outcome.Names); it is called once
// per failed completion, from the SUT's goroutines, and must be safe for
// concurrent use.
type FailureClassifier func(err error) (outcome, status string)

// WithFailureClassifier makes the run count its failures by c's kinds
// (Result.Failures). Without one a failure is "unanswered" or "other", with
// no status.
func WithFailureClassifier(c FailureClassifier) Option {
	return func(r *Run) { r.classify = c }
}

// Failure is one kind of failure a run saw: result.json's failures[].
type Failure struct {
	Outcome string `json:"outcome"`
	Status  string `json:"status"`
	Count   int64  `json:"count"`
	// Example is the first failure's message of this kind.
	Example string `json:"example"`
}

const (
	// MaxFailureKinds bounds Result.Failures: a server answering with ever
	// new statuses cannot grow it. Kinds past the bound are counted under
	// OverflowOutcome with no status, and that entry is within the bound.
	MaxFailureKinds = 32
	// OverflowOutcome is the outcome failures past MaxFailureKinds count under.
	OverflowOutcome = "other"
	// maxExampleBytes bounds an example message: a server's error text is
	// its own to make as long as it likes.
	maxExampleBytes = 512
)

func defaultClassifier(err error) (outcome, status string) {
	if errors.Is(err, ErrUnanswered) {
		return "unanswered", ""
	}
	return "other", ""
}

// WithTextScrubber makes the run keep a failure's text (its kind's
// Example, Result.Errors) only as scrub returns it: the runner takes the
// run's credentials out of what the server said (secret.Scrubber), before
// the engine keeps it, so nothing written or shown from the result holds
// them. scrub is called only for the texts kept, under the run's error
// lock, and must be safe for concurrent use.
func WithTextScrubber(scrub func(string) string) Option {
	return func(r *Run) { r.scrub = scrub }
}

// scrubbed is text as the run keeps it.
func (r *Run) scrubbed(text string) string {
	if r.scrub == nil {
		return text
	}
	return r.scrub(text)
}

type failureKey struct{ outcome, status string }

// failureTally counts failures by kind; the run's errMu guards it, but for
// live, which Progress reads without the lock: a completion that fails
// must not wait for a poller, nor a poller for it.
type failureTally struct {
	index map[failureKey]int
	kinds []Failure
	// live mirrors kinds' keys and counts: live[i] is kinds[i]. A kind's
	// key is stored before liveN counts it, both under errMu, so a reader
	// that loads liveN first finds every key it counts.
	live  [MaxFailureKinds]liveKind
	liveN atomic.Int32
}

type liveKind struct {
	key   atomic.Pointer[failureKey]
	count atomic.Int64
}

// add counts n failed samples of kind k, err the failure; the text of a
// new kind's example is scrub(err.Error()), scrubbed before it is clipped
// so that a cut cannot leave part of a secret behind.
func (f *failureTally) add(k failureKey, err error, n int64, scrub func(string) string) {
	i, ok := f.index[k]
	if !ok && len(f.kinds) >= MaxFailureKinds-1 {
		k = failureKey{OverflowOutcome, ""}
		i, ok = f.index[k]
	}
	if !ok {
		if f.index == nil {
			f.index = map[failureKey]int{}
		}
		i = len(f.kinds)
		f.index[k] = i
		f.kinds = append(f.kinds, Failure{Outcome: k.outcome, Status: k.status, Example: clip(scrub(err.Error()))})
		key := k
		f.live[i].key.Store(&key)
		f.liveN.Store(int32(i + 1))
	}
	f.kinds[i].Count += n
	f.live[i].count.Add(n)
}

// snapshot is the kinds so far, sorted as sorted sorts them, without their
// examples (they are the result's, read under the lock); nil when none.
// Safe without errMu: a count may trail the result's by the failures being
// added at that moment.
func (f *failureTally) snapshot() []Failure {
	n := int(f.liveN.Load())
	if n == 0 {
		return nil
	}
	var out []Failure
	for i := range n {
		k, c := f.live[i].key.Load(), f.live[i].count.Load()
		if c > 0 { // a kind being added: counted next time
			out = append(out, Failure{Outcome: k.outcome, Status: k.status, Count: c})
		}
	}
	slices.SortStableFunc(out, func(a, b Failure) int { return cmp.Compare(b.Count, a.Count) })
	return out
}

// sorted returns the kinds, most failures first (first seen first on ties).
func (f *failureTally) sorted() []Failure {
	out := slices.Clone(f.kinds)
	slices.SortStableFunc(out, func(a, b Failure) int { return cmp.Compare(b.Count, a.Count) })
	return out
}

// clip cuts s to maxExampleBytes on a rune boundary, marking the cut.
func clip(s string) string {
	if len(s) <= maxExampleBytes {
		return s
	}
	cut := maxExampleBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// FailuresNotLatency reports whether failures, not latency, broke one of
// the result's criteria: its advice was replaced by the failures'.
func (r *Result) FailuresNotLatency() bool {
	return slices.ContainsFunc(r.Recommendations, func(rec string) bool { return rec == recFailedLatency || rec == recFailedEarly })
}

// failureAdvice decides whether failures, not latency, made a run INVALID,
// so that its advice does not send the user to change the rate or the
// latency of a run whose answered samples were fast enough.
type failureAdvice struct {
	// latency: samples failed, and the answered ones alone meet the
	// Server latency bound at the target percentile: failed samples count
	// as over it, and they alone put the run over.
	latency bool
	// earlyStopping: likewise for loadgen6's Server early stopping.
	earlyStopping bool
	// stopped: the early verdict stopped the run because samples failed,
	// so it fell short of its minimum duration and queries.
	stopped bool
}

func (r *Run) failureAdvice(res *Result, samples stats.Latencies, reason StopReason) failureAdvice {
	var fa failureAdvice
	if res.SamplesFailed == 0 {
		return fa
	}
	fa.stopped = reason == StopEarlyVerdict && r.verdict.Stopped && r.verdict.FailedSamples > 0
	if r.settings.Scenario != trace.Server || r.bound <= 0 || samples.Len() == 0 {
		return fa
	}
	n := samples.Len()
	p := r.tr.Settings.TargetLatencyPercentile
	// The percentile is sorted[min(floor(n·p), n−1)]: it is within the
	// bound when no more than the samples above that rank are over it.
	allowed := int64(n - 1 - min(int(float64(n)*p), n-1))
	answeredOver := int64(samples.CountOver(r.bound) - samples.Failed())
	fa.latency = answeredOver <= allowed
	if f, err := stats.NewMinPassingFinder(p, stats.EarlyStoppingConfidence); err == nil {
		fa.earlyStopping = f.Server(r.queriesIssued(), answeredOver).Met
	}
	return fa
}

// advise is rec, or the advice to fix the failures when they alone made its
// criterion unmet.
func (fa failureAdvice) advise(rec string) string {
	switch {
	case rec == recPerfServer && (fa.latency || fa.stopped):
		return recFailedLatency
	case rec == recEarlyStopping && (fa.earlyStopping || fa.stopped):
		return recFailedLatency
	case (rec == recMinDurationServer || rec == recMinQueries) && fa.stopped:
		return recFailedEarly
	}
	return rec
}

// note is appended to the latency criterion's reason when failures alone
// broke it.
func (fa failureAdvice) note() string {
	if fa.latency {
		return " because of failed samples (the answered ones are within it)"
	}
	return ""
}
