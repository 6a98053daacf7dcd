package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// newTest returns metrics on a fresh registry with the runtime collectors.
func newTest(t testing.TB) (*Metrics, *prometheus.Registry) {
	t.Helper()
	reg := NewRegistry()
	m, err := New(reg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return m, reg
}

// series returns the gathered series of name whose labels include want
// (name=value pairs), or nil.
func series(t testing.TB, g prometheus.Gatherer, name string, want ...string) []*dto.Metric {
	t.Helper()
	fams, err := g.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	var out []*dto.Metric
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	metrics:
		for _, m := range f.GetMetric() {
			for i := 0; i+1 < len(want); i += 2 {
				if labelValue(m, want[i]) != want[i+1] {
					continue metrics
				}
			}
			out = append(out, m)
		}
	}
	return out
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// value returns the counter or gauge value of the one series of name with
// the given labels.
func value(t testing.TB, g prometheus.Gatherer, name string, labels ...string) float64 {
	t.Helper()
	ms := series(t, g, name, labels...)
	if len(ms) != 1 {
		t.Fatalf("%s%v: %d series, want 1", name, labels, len(ms))
	}
	switch m := ms[0]; {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	}
	t.Fatalf("%s is neither a counter nor a gauge", name)
	return 0
}

func hist(t testing.TB, g prometheus.Gatherer, name string) *dto.Histogram {
	t.Helper()
	ms := series(t, g, name)
	if len(ms) != 1 || ms[0].Histogram == nil {
		t.Fatalf("%s: %d series, want one histogram", name, len(ms))
	}
	return ms[0].Histogram
}
