package loadgen

import (
	"strconv"
	"time"

	"github.com/netloadgen/netloadgen/pkg/stats"
)

// SessionsResult is result.json's sessions: what a run with multi-turn
// sessions did, session by session and turn index by turn index.
type SessionsResult struct {
	// Sessions started; of them, completed (every turn answered), failed
	// (a turn failed: its later turns were not issued), and unfinished
	// (the run ended first: its stop, or the drain).
	Sessions   int64 `json:"sessions"`
	Completed  int64 `json:"sessions_completed"`
	Failed     int64 `json:"sessions_failed"`
	Unfinished int64 `json:"sessions_unfinished"`
	// Turns planned by every session of the schedule, issued, and not
	// issued (a failed turn's later ones, and those a stop left).
	TurnsPlanned   int64 `json:"turns_planned"`
	TurnsIssued    int64 `json:"turns_issued"`
	TurnsNotIssued int64 `json:"turns_not_issued"`
	// DurationNs: a completed session's first turn's due time to its
	// last answer's end, from a histogram (within 0.1%).
	DurationNs TokenStats `json:"duration_ns"`
	// Turns has a row per turn index, in order.
	Turns []TurnResult `json:"turns"`
}

// TurnResult is the figures of every session's turn Turn (1-based):
// TTFT and TPOT as the run's tokens count them, from the turn's due time,
// exact; E2E the answered turns' latency.
type TurnResult struct {
	Turn      int        `json:"turn"`
	Issued    int64      `json:"issued"`
	Completed int64      `json:"completed"`
	Failed    int64      `json:"failed"`
	TTFT      TokenStats `json:"ttft_ns"`
	TPOT      TokenStats `json:"tpot_ns"`
	E2E       TokenStats `json:"e2e_ns"`
}

// turnValues are one turn index's exact values, gathered at the end.
type turnValues struct {
	row             TurnResult
	ttft, tpot, e2e []time.Duration
}

// sessionResult is the run's SessionsResult, nil without sessions. Read
// after the run: the record, the token record and each query's turn.
func (r *Run) sessionResult() *SessionsResult {
	ss := r.sess
	if ss == nil {
		return nil
	}
	issued := r.queriesIssued()
	ss.mu.Lock()
	out := &SessionsResult{Sessions: ss.started, Completed: ss.completed, Failed: ss.failed,
		TurnsPlanned: int64(r.n), TurnsIssued: issued, TurnsNotIssued: int64(r.n) - issued}
	ss.mu.Unlock()
	out.Unfinished = out.Sessions - out.Completed - out.Failed
	out.DurationNs = histogramStats(ss.durations)
	var turns []turnValues
	t := r.tok.Load()
	r.samples.Each(0, int(issued), func(seq int, d time.Duration) {
		k := int(ss.turnOf[seq])
		for len(turns) < k {
			turns = append(turns, turnValues{row: TurnResult{Turn: len(turns) + 1}})
		}
		v := &turns[k-1]
		v.row.Issued++
		if d == stats.FailedLatency {
			v.row.Failed++
			return
		}
		v.row.Completed++
		v.e2e = append(v.e2e, d)
		if t == nil || t.tokens[seq] == 0 {
			return
		}
		ttft := min(max(time.Duration(t.first[seq]), 0), d)
		v.ttft = append(v.ttft, ttft)
		if n := int64(t.tokens[seq]); n >= 2 {
			v.tpot = append(v.tpot, samplePOT(int64(d), int64(ttft), n))
		}
	})
	out.Turns = make([]TurnResult, len(turns))
	for i := range turns {
		v := &turns[i]
		v.row.TTFT, v.row.TPOT, v.row.E2E = tokenStatsOf(v.ttft), tokenStatsOf(v.tpot), tokenStatsOf(v.e2e)
		out.Turns[i] = v.row
	}
	return out
}

// appendSession appends sample seq's "session" (0-based) and "turn"
// (1-based) to its samples.jsonl line, in a run with sessions.
func (r *Run) appendSession(b []byte, seq int) []byte {
	if r.sess == nil {
		return b
	}
	b = append(b, `,"session":`...)
	b = strconv.AppendInt(b, int64(r.sess.sessOf[seq]), 10)
	b = append(b, `,"turn":`...)
	return strconv.AppendInt(b, int64(r.sess.turnOf[seq]), 10)
}
