package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/stats"
)

// stopper is a loadgen6 trial's early verdict on the latency constraint
// alone: once more samples are over the bound (failed ones included) than
// the percentile allows for the trial's planned samples, no later sample
// can bring the percentile back under it, so the trial is cancelled. A
// shorter run only allows fewer, so ending early cannot turn a fail into a
// pass either (stats.Decide).
//
// With token latencies (tokens set) the constraint is on TTFT and TPOT
// instead: each sample over either bound counts against the same allowance,
// each bound on its own, and query latency decides nothing.
type stopper struct {
	cancel context.CancelFunc
	bound  time.Duration
	next   loadgen.Observer

	tokens               bool
	ttftBound, tpotBound time.Duration
	overTTFT, overTPOT   atomic.Int64

	planned, allowed int64
	armed            atomic.Bool
	over, done       atomic.Int64
	fired            atomic.Bool
	mu               sync.Mutex
	at               record
}

type record struct {
	Stopped        bool   `json:"stopped"`
	Reason         string `json:"reason"`
	OverLatency    int64  `json:"over_latency"`
	Completed      int64  `json:"completed_samples"`
	PlannedSamples int64  `json:"planned_samples"`
	Allowed        int64  `json:"allowed_over_percentile"`
	Note           string `json:"note"`
}

// plan fixes the allowance from the trial's trace, before its clock starts.
func (s *stopper) plan(r *loadgen.Run) error {
	tr := r.Trace()
	if tr == nil || tr.Len() == 0 {
		return errNoPlan
	}
	q := int64(tr.Len())
	if m := r.Settings().MaxQueryCount; m > 0 && int64(m) < q {
		q = int64(m)
	}
	s.planned = q * int64(tr.SamplesPerQuery)
	a, err := stats.MaxOverForPercentile(s.planned, r.Settings().ServerTargetLatencyPercentile)
	if err != nil {
		return err
	}
	s.allowed = a
	s.armed.Store(true)
	return nil
}

func (s *stopper) Issued(query, samples int, lateness time.Duration) {
	if s.next != nil {
		s.next.Issued(query, samples, lateness)
	}
}

func (s *stopper) Completed(query, samples int, latency time.Duration, err error) {
	if s.next != nil {
		s.next.Completed(query, samples, latency, err)
	}
	done := s.done.Add(int64(samples))
	if err == nil && (s.tokens || latency <= s.bound) {
		return
	}
	over := s.over.Add(int64(samples))
	if !s.armed.Load() || errors.Is(err, loadgen.ErrUnanswered) {
		return
	}
	if err != nil {
		s.fire("a failed sample ("+err.Error()+") fails the trial", over, done)
		return
	}
	if stats.Decide(s.allowed, s.planned, done, over) == stats.Fail {
		s.fire(fmt.Sprintf("%d samples over the latency bound exceed the %d the percentile allows for %d planned samples", over, s.allowed, s.planned), over, done)
	}
}

// fire stops the trial, once, saying why.
func (s *stopper) fire(why string, over, done int64) {
	if !s.fired.CompareAndSwap(false, true) {
		return
	}
	s.mu.Lock()
	s.at = record{Stopped: true, Reason: why, OverLatency: over, Completed: done, PlannedSamples: s.planned, Allowed: s.allowed,
		Note: "the search stopped this loadgen6 trial on the latency constraint alone; its logs show it as cancelled"}
	s.mu.Unlock()
	s.cancel()
}

// overTokens counts a sample over a token bound; the trial fails once
// more are over it than the percentile allows (a failed sample has
// already failed it).
func (s *stopper) overTokens(name string, n *atomic.Int64) {
	over := n.Add(1)
	if s.armed.Load() && over > s.allowed {
		s.fire(fmt.Sprintf("%d samples over the %s bound exceed the %d the percentile allows for %d planned samples", over, name, s.allowed, s.planned), over, s.done.Load())
	}
}

// Tokens passes a generative sample's token measurements on to the
// observer it wraps (the live metrics), when that one watches tokens.
func (s *stopper) Tokens(query, output, input int, ttft, tpot time.Duration, gaps []time.Duration) {
	if t, ok := s.next.(loadgen.TokenObserver); ok {
		t.Tokens(query, output, input, ttft, tpot, gaps)
	}
	if !s.tokens {
		return
	}
	// A sample of fewer than two tokens has LoadGen's negative TPOT.
	if ttft > s.ttftBound {
		s.overTokens("TTFT", &s.overTTFT)
	}
	if output >= 2 && tpot > s.tpotBound {
		s.overTokens("TPOT", &s.overTPOT)
	}
}

func (s *stopper) QueryDone(query int, failed bool) {
	if s.next != nil {
		s.next.QueryDone(query, failed)
	}
}

func (s *stopper) reason() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.at.Reason
}

func (s *stopper) record() record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.at
}
