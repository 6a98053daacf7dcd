package metrics

import (
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/outcome"
)

// Observer returns the engine hook feeding these metrics
// (loadgen.WithObserver).
func (m *Metrics) Observer() loadgen.Observer { return (*observer)(m) }

// observer is Metrics seen by the engine; a distinct type keeps the hook's
// methods out of Metrics' own API.
type observer Metrics

func (o *observer) Issued(_, samples int, lateness time.Duration) {
	o.queriesIssued.Inc()
	o.samplesIssued.Add(float64(samples))
	o.queriesInFlight.Inc()
	o.samplesInFlight.Add(float64(samples))
	o.lateness.Observe(max(lateness, 0).Seconds())
}

func (o *observer) Completed(_, samples int, latency time.Duration, err error) {
	n := float64(samples)
	o.samplesInFlight.Sub(n)
	if err != nil {
		// Classify walks the error chain: paid only by failures.
		oc, st := outcome.Classify(err)
		o.samplesFailed[oc].Add(n)
		o.failedByCode.WithLabelValues(st.Label()).Add(n)
		return
	}
	o.samplesCompleted.Add(n)
	o.okSamples.Add(int64(samples))
	// One observation per sample: the histogram's count is the sample
	// count, as the result's. The client has no weighted Observe.
	s := max(latency, 0).Seconds()
	for range samples {
		o.latency.Observe(s)
	}
}

// Resent implements loadgen.ResendObserver: the run's resends, once at its
// end.
func (o *observer) Resent(n uint64) { o.requestsResent.Add(float64(n)) }

func (o *observer) QueryDone(_ int, failed bool) {
	o.queriesInFlight.Dec()
	if failed {
		o.queriesFailed.Inc()
	} else {
		o.queriesCompleted.Inc()
	}
}
