package mlperflog

import (
	"strconv"
	"strings"

	"github.com/netloadgen/netloadgen/pkg/stats"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// The texts below are LoadGen 6.0.17's (results.cc EarlyStopping,
// MinDurationMet, PerfConstraintsMet, LogSummary), word for word, because
// people and scripts compare them across runs.

const (
	perfConstraintsRecommendation = "Reduce target QPS to improve latency."
	ttftRecommendation            = "TTFT constrain not met: Reduce target QPS to improve latency."
	tpotRecommendation            = "TPOT constrain not met: Reduce target QPS to improve latency."
	minQueriesSummaryText         = "The test exited early, before enough queries were issued.\n" +
		"   See the detailed log for why this may have occurred."
	minQueriesDetailText = "The test exited early, before enough queries were issued."
)

func minDurationRecommendation(sc trace.Scenario) string {
	switch sc {
	case trace.Server:
		return "Increase the target QPS so the loadgen pre-generates more queries."
	case trace.Offline:
		return "Increase expected QPS so the loadgen pre-generates a larger (coalesced) query."
	}
	return "Decrease the expected latency so the loadgen pre-generates more queries."
}

// earlyStoppingText is the block under "Early Stopping Result:" (lines joined
// by '\n'); empty for Offline, which has none.
func earlyStoppingText(s *Summary) string {
	es := s.EarlyStopping
	switch s.Settings.Scenario {
	case trace.Server:
		return serverEarlyStoppingText(es.Server)
	case trace.SingleStream, trace.MultiStream:
		return estimateText(s.Settings.Scenario, s.Settings.TargetLatencyPercentile, &es)
	}
	return ""
}

// estimateText is a SingleStream or MultiStream early-stopping block at
// percentile p; empty for a verdict not judged (nil).
func estimateText(sc trace.Scenario, p float64, es *EarlyStopping) string {
	if es == nil || es.Estimate == nil {
		return ""
	}
	itoa := func(v int64) string { return strconv.FormatInt(v, 10) }
	e := es.Estimate
	if !e.Met {
		return " * Only processed " + itoa(e.Queries) + " queries.\n" +
			" * Need to process at least " + itoa(e.MinQueries) + " queries for early stopping."
	}
	text := " * Processed at least " + itoa(e.MinQueries) + " queries (" + itoa(e.Queries) + ").\n" +
		" * Would discard " + itoa(e.Discarded) + " highest latency queries.\n" +
		" * Early stopping " + percentileLabel(p, 1) +
		"th percentile estimate: " + itoa(int64(e.Latency))
	if sc == trace.MultiStream {
		return text
	}
	// SingleStream also estimates p99, to infer MultiStream from it.
	e99 := es.Estimate99
	if !e99.Met {
		return text + "\n * Not enough queries processed for 99.0th percentile\n" +
			" early stopping estimate (would need to process at\n least " +
			itoa(e99.MinQueries) + " total queries)."
	}
	return text + "\n * Early stopping 99.0th percentile estimate: " + itoa(int64(e99.Latency))
}

// serverEarlyStoppingText is a Server early-stopping block; empty for a
// verdict not judged (nil).
func serverEarlyStoppingText(es *stats.ServerEarlyStopping) string {
	if es == nil {
		return ""
	}
	if es.Met {
		return " * Run successful."
	}
	itoa := func(v int64) string { return strconv.FormatInt(v, 10) }
	return " * Run unsuccessful.\n * Processed " + itoa(es.Queries) + " queries.\n" +
		" * Would need to run at least " + itoa(es.MoreNeeded()) + " more queries,\n" +
		" with the run being successful if every additional\n query were under latency."
}

// tokenEarlyStoppingTexts are the TTFT and TPOT blocks of a run with token
// latencies; both empty for Offline, which has none.
func tokenEarlyStoppingTexts(s *Summary) (ttft, tpot string) {
	t, st := s.Tokens, &s.Settings
	switch st.Scenario {
	case trace.Server:
		return serverEarlyStoppingText(t.TTFTEarlyStopping), serverEarlyStoppingText(t.TPOTEarlyStopping)
	case trace.SingleStream, trace.MultiStream:
		p := st.TargetLatencyPercentile
		return estimateText(st.Scenario, p, t.TTFTEstimate), estimateText(st.Scenario, p, t.TPOTEstimate)
	}
	return "", ""
}

// perfRecommendations are LoadGen's perf-constraint texts: the latency
// one, or with token latencies the TTFT and/or TPOT ones.
func perfRecommendations(s *Summary) []string {
	t := s.Tokens
	if t == nil {
		return []string{perfConstraintsRecommendation}
	}
	var out []string
	if !t.TTFTMet {
		out = append(out, ttftRecommendation)
	}
	if !t.TPOTMet {
		out = append(out, tpotRecommendation)
	}
	if len(out) == 0 {
		// PerfConstraintsMet false with both met: the caller's mapping is
		// inconsistent; say what LoadGen says of a latency miss.
		out = append(out, perfConstraintsRecommendation)
	}
	return out
}

// recommendations lists the reasons of an INVALID result for the summary,
// LoadGen's first (perf constraints, min duration, min queries), then
// netloadgen's.
func recommendations(s *Summary) []string {
	var out []string
	note := ""
	if s.Network.InvalidNote != "" {
		note = "netloadgen: " + neutral(s.Network.InvalidNote)
	}
	if s.Settings.Scenario == trace.Server && !s.PerfConstraintsMet {
		out = append(out, perfRecommendations(s)...)
		if note != "" {
			out, note = append(out, note), ""
		}
	}
	if !s.MinDurationMet {
		out = append(out, minDurationRecommendation(s.Settings.Scenario))
		if n := s.Network.MinDurationNote; n != "" {
			out = append(out, "netloadgen: "+neutral(n))
		}
	}
	if !s.MinQueriesMet {
		out = append(out, minQueriesSummaryText)
	}
	out = append(out, networkRecommendations(s)...)
	if note != "" {
		out = append(out, note)
	}
	return out
}

// networkRecommendations are netloadgen's own INVALID reasons.
func networkRecommendations(s *Summary) []string {
	var out []string
	if n := s.Network.FailedSamples; n > 0 {
		out = append(out, "netloadgen: "+strconv.FormatInt(n, 10)+
			" samples failed (network or server errors); a run with failed samples is invalid.")
	}
	for _, c := range s.Network.Constraints {
		if c.Met {
			continue
		}
		r := c.Recommendation
		if r == "" {
			r = c.Name + " not met."
		}
		out = append(out, "netloadgen: "+neutral(r))
	}
	return out
}

// invalidReason is result_invalid_reason: LoadGen's reasons joined as
// LoadGen joins them (perf and duration followed by a space, min queries
// last without one), then netloadgen's, separated by spaces; line breaks
// become spaces.
func invalidReason(s *Summary) string {
	var b strings.Builder
	if s.Settings.Scenario == trace.Server && !s.PerfConstraintsMet {
		// LoadGen joins the TTFT and TPOT texts with "\n * ".
		b.WriteString(strings.Join(perfRecommendations(s), "\n * ") + " ")
	}
	if !s.MinDurationMet {
		b.WriteString(minDurationRecommendation(s.Settings.Scenario) + " ")
	}
	if !s.MinQueriesMet {
		b.WriteString(minQueriesDetailText)
	}
	for _, r := range networkRecommendations(s) {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), " ") {
			b.WriteByte(' ')
		}
		b.WriteString(r)
	}
	return strings.ReplaceAll(b.String(), "\n", " ")
}
