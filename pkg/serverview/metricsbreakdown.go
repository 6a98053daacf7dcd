package serverview

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// kvFull and kvNearlyFull are the KV cache shares the breakdown names: a
// cache this full makes requests wait for blocks or be preempted.
const (
	kvFull       = 0.95
	kvNearlyFull = 0.90
)

// metricsSentence is what the known metrics say of where the time went:
// the queue gauge that grew most, the server's queue time per request, a
// KV cache near full, the running batch; "" when no known metric is there.
func metricsSentence(m *Metrics) string {
	if m == nil {
		return ""
	}
	byKind := map[Kind][]Series{}
	for _, s := range m.Series {
		if k, ok := LookUp(s.Name); ok {
			byKind[k.Kind] = append(byKind[k.Kind], s)
		}
	}
	var clauses []string
	for _, f := range []func(map[Kind][]Series) string{queueClause, queueTimeClause, kvClause, batchClause} {
		if c := f(byKind); c != "" {
			clauses = append(clauses, c)
		}
	}
	return strings.Join(clauses, "; ")
}

// queueClause: the queue gauge that reached the most.
func queueClause(byKind map[Kind][]Series) string {
	s, ok := largestBy(byKind[KindQueue], func(s Series) *float64 { return s.Max })
	if !ok {
		return ""
	}
	name, peak := seriesLabel(s, byKind[KindQueue]), *s.Max
	if peak < 1 {
		if len(byKind[KindQueue]) > 1 {
			// The largest of several zeros is any of them: one series
			// named (another model's, say) would read as the only one.
			return fmt.Sprintf("every queue gauge (%s) stayed at %s: the server did not queue", queueNames(byKind[KindQueue]), metricNum(peak))
		}
		return fmt.Sprintf("%s stayed at %s: the server did not queue", name, metricNum(peak))
	}
	// The mean tells a queue that held from one that came and went.
	mean, says := deref(s.Mean), "the server queues"
	if mean < 1 {
		says = "the server queued at times"
	}
	if first := deref(s.First); first < peak {
		return fmt.Sprintf("%s rose from %s to %s (mean %s): %s", name, metricNum(first), metricNum(peak), metricNum(mean), says)
	}
	return fmt.Sprintf("%s stayed at %s: %s", name, metricNum(peak), says)
}

// queueNames are the gauges' names, each once, in order.
func queueNames(ss []Series) string {
	var names []string
	for _, s := range ss {
		if !slices.Contains(names, s.Name) {
			names = append(names, s.Name)
		}
	}
	return strings.Join(names, ", ")
}

// queueTimeClause: the server's own mean queue time per request, from a
// histogram (its mean) or a counter of time over the requests counter of
// the same server (Triton's nv_inference_queue_duration_us over
// nv_inference_request_success).
func queueTimeClause(byKind map[Kind][]Series) string {
	for _, s := range byKind[KindQueueTime] {
		if s.Type == Histogram && s.Mean != nil && deref(s.Count) > 0 {
			return fmt.Sprintf("%s mean %s per request", seriesLabel(s, byKind[KindQueueTime]), FormatMs(*s.Mean*unitNs(s.Name)))
		}
	}
	for _, s := range byKind[KindQueueTime] {
		if s.Type != Counter {
			continue
		}
		k, _ := LookUp(s.Name)
		spent, reqs := sumDelta(byKind[KindQueueTime], s.Name), 0.0
		for _, r := range byKind[KindRequests] {
			if kr, _ := LookUp(r.Name); kr.Server == k.Server && r.Type == Counter {
				reqs += deref(r.Delta)
			}
		}
		if reqs > 0 {
			return fmt.Sprintf("%s mean %s per request", s.Name, FormatMs(spent/reqs*unitNs(s.Name)))
		}
	}
	return ""
}

// kvClause: a KV cache at least nearly full (a share, or a per cent where
// the value passes 1).
func kvClause(byKind map[Kind][]Series) string {
	s, ok := largestBy(byKind[KindKVCache], func(s Series) *float64 { return s.Max })
	if !ok {
		return ""
	}
	share := *s.Max
	if share > 1 {
		share /= 100
	}
	switch {
	case share >= kvFull:
		return fmt.Sprintf("%s reached %s: the KV cache is full", seriesLabel(s, byKind[KindKVCache]), metricNum(*s.Max))
	case share >= kvNearlyFull:
		return fmt.Sprintf("%s reached %s: the KV cache is nearly full", seriesLabel(s, byKind[KindKVCache]), metricNum(*s.Max))
	}
	return ""
}

// batchClause: the running batch's mean (and a gauge's maximum).
func batchClause(byKind map[Kind][]Series) string {
	s, ok := largestBy(byKind[KindBatch], func(s Series) *float64 { return s.Mean })
	if !ok {
		return ""
	}
	if s.Type == Histogram {
		if deref(s.Count) == 0 {
			return ""
		}
		return fmt.Sprintf("%s mean %s", seriesLabel(s, byKind[KindBatch]), metricNum(*s.Mean))
	}
	return fmt.Sprintf("%s averaged %s (max %s)", seriesLabel(s, byKind[KindBatch]), metricNum(*s.Mean), metricNum(deref(s.Max)))
}

// largestBy is the series whose field f is largest (and finite); the first
// of equals.
func largestBy(ss []Series, f func(Series) *float64) (Series, bool) {
	var best Series
	found := false
	for _, s := range ss {
		v := f(s)
		if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
			continue
		}
		if !found || *v > *f(best) {
			best, found = s, true
		}
	}
	return best, found
}

// seriesLabel is a series' name, with its labels when others of that name are
// among ss (per model, per engine).
func seriesLabel(s Series, ss []Series) string {
	n := 0
	for _, o := range ss {
		if o.Name == s.Name {
			n++
		}
	}
	if n < 2 || len(s.Labels) == 0 {
		return s.Name
	}
	keys := make([]string, 0, len(s.Labels))
	for k := range s.Labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + strconv.Quote(s.Labels[k])
	}
	return s.Name + "{" + strings.Join(parts, ",") + "}"
}

func sumDelta(ss []Series, name string) float64 {
	t := 0.0
	for _, s := range ss {
		if s.Name == name {
			t += deref(s.Delta)
		}
	}
	return t
}

// unitNs is the ns in one unit of a time metric, by its name's suffix
// (Prometheus's convention is seconds; Triton's counters say _us).
func unitNs(name string) float64 {
	switch {
	case strings.HasSuffix(name, "_us"):
		return 1e3
	case strings.HasSuffix(name, "_ms"):
		return 1e6
	}
	return 1e9
}

// metricNum writes a metric's value: whole numbers as such, others to three
// significant figures.
func metricNum(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
