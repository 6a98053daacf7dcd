package loadgen

import (
	"container/heap"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/netloadgen/netloadgen/pkg/stats"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// This file runs multi-turn sessions (issue 31): session starts are a
// schedule, walked open loop; within a session, turn k+1 is due at turn
// k's answer end plus a think time, so its time is known only once that
// answer has come. A follow-up's latency, TTFT and TPOT count from that
// due time. Query indices follow the issue order (the issue log is read
// back in index order), and each query's session and turn are kept beside
// the record; while the run goes the engine holds only the sessions in
// flight: the follow-ups due and the turns awaiting their answer.

// Sessions is a run's multi-turn sessions (pkg/shape.Sessions): the
// session starts, and the think time before each later turn.
type Sessions interface {
	SessionStarts() trace.SessionIter
	// Think is the time between the answer to turn−1 and turn (1-based).
	Think(session, turn int) time.Duration
}

// turnRef places one turn: its session, its index (1-based), the turns
// the session plans and the session's first turn's due time (ns since
// the start).
type turnRef struct {
	session, turn, turns int
	first                int64
}

// followUp is a later turn waiting for its due time (ns since the start).
type followUp struct {
	due int64
	turnRef
}

type followUps []followUp

func (h followUps) Len() int           { return len(h) }
func (h followUps) Less(i, j int) bool { return h[i].due < h[j].due }
func (h followUps) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *followUps) Push(x any)        { *h = append(*h, x.(followUp)) }
func (h *followUps) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// sessionState is a run's sessions in flight, fed by the issuer (turns
// issued) and the completions (answers), and what the result counts.
type sessionState struct {
	sched Sessions
	// sessOf and turnOf are each query's session and turn, by index:
	// written by the one issuer before the query goes out, read after the
	// run.
	sessOf []int32
	turnOf []uint16

	mu       sync.Mutex
	due      followUps
	inflight map[int]turnRef // by query index: the turns awaiting their answer
	// active: sessions started and not ended (by their last answer or a
	// failed turn).
	active                     int
	started, completed, failed int64
	durations                  *stats.LiveHistogram // of sessions completed
}

func newSessionState(s Settings, n int) (*sessionState, error) {
	switch {
	case s.Shape == nil:
		return nil, fmt.Errorf("%w: sessions need their shape (Settings.Shape) to size the run", trace.ErrInvalidSettings)
	case s.Engine.Issuers > 1:
		return nil, fmt.Errorf("%w: --sessions runs on one issuer (a session's later turns follow its answers); leave --issuers out or set it to 1", trace.ErrInvalidSettings)
	}
	return &sessionState{sched: s.Sessions, sessOf: make([]int32, n), turnOf: make([]uint16, n),
		inflight: map[int]turnRef{}, durations: stats.NewLiveHistogram()}, nil
}

// next is the earliest follow-up due, if any, and the sessions active.
func (ss *sessionState) next() (followUp, bool, int) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if len(ss.due) == 0 {
		return followUp{}, false, ss.active
	}
	return ss.due[0], true, ss.active
}

// pop takes the earliest follow-up.
func (ss *sessionState) pop() followUp {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return heap.Pop(&ss.due).(followUp)
}

// issued notes query q as turn t, before it goes out (its answer may come
// at once).
func (ss *sessionState) issued(q int, t turnRef) {
	ss.sessOf[q], ss.turnOf[q] = int32(t.session), uint16(t.turn)
	ss.mu.Lock()
	ss.inflight[q] = t
	if t.turn == 1 {
		ss.active++
		ss.started++
	}
	ss.mu.Unlock()
}

// answered is query q's answer, at off ns since the start: a failed turn
// ends its session (its later turns are never issued), a last turn
// completes it, any other makes the next turn due after the think time.
func (ss *sessionState) answered(q int, off int64, failed bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	t, ok := ss.inflight[q]
	if !ok {
		return
	}
	delete(ss.inflight, q)
	switch {
	case failed:
		ss.failed++
		ss.active--
	case t.turn >= t.turns:
		ss.completed++
		ss.active--
		ss.durations.Record(time.Duration(max(off-t.first, 0)))
	default:
		t.turn++
		heap.Push(&ss.due, followUp{due: off + int64(ss.sched.Think(t.session, t.turn)), turnRef: t})
	}
}

// issueSessions is the issue loop of a run with sessions: the next start
// or the earliest follow-up, whichever is due first, each issued at its
// due time; when neither is left, the run waits for the answers of the
// turns in flight (which may make more due), and ends when no session is
// active.
func (r *Run) issueSessions(ctx, sutCtx context.Context, is *issuer) StopReason {
	ss := r.sess
	starts := r.settings.Sessions.SessionStarts()
	start, more := starts.Next()
	for issued := 0; ; {
		doneQ := is.doneQ.Load() // before next: an answer after it is not missed
		f, haveF, active := ss.next()
		if !more && !haveF {
			if active == 0 {
				return StopCompleted
			}
			if stop := is.w.wait(ctx, doneQ+1); stop != "" {
				return r.stopAll(stop)
			}
			continue
		}
		takeStart := more && (!haveF || int64(start.At) <= f.due)
		at := f.due
		if takeStart {
			at = int64(start.At)
		}
		if r.clock.Now().Before(r.startTime.Add(time.Duration(at))) && is.sleepOrWake(ctx, r.startTime.Add(time.Duration(at))) {
			continue // an answer came: a follow-up may be due first
		}
		if cancelled(ctx.Done()) {
			return StopCancelled
		}
		var t turnRef
		if takeStart {
			t = turnRef{session: start.Session, turn: 1, turns: start.Turns, first: at}
			start, more = starts.Next()
		} else {
			f = ss.pop() // the earliest now, due by now
			t, at = f.turnRef, f.due
		}
		q, ok := is.next()
		if !ok {
			return StopRanOut
		}
		// The turn's sample from the seeds, not the cursor's next draw:
		// the issue order follows the server's answers.
		q.Samples = r.tr.SessionSample(t.session, t.turn)
		now := r.clock.Now()
		is.issueTurn(sutCtx, q, t, r.startTime.Add(time.Duration(at)), now)
		issued++
		if stop := r.limits(issued, now); stop != "" {
			return r.stopAll(stop)
		}
	}
}

// issueTurn is issue for a session's turn.
func (is *issuer) issueTurn(ctx context.Context, q trace.Query, t turnRef, sched, now time.Time) {
	r := is.r
	r.sess.issued(q.Index, t)
	is.noteIssued(q, int64(sched.Sub(r.startTime)), int64(now.Sub(r.startTime)))
	i := q.Index
	is.sut.IssueQuery(ctx, Query{ID: i, FirstSample: i * r.spq, Samples: q.Samples, Scheduled: sched, Issued: now,
		Session: t.session, Turn: t.turn, Turns: t.turns}, is.done)
}

// sleepOrWake sleeps until t unless an answer comes first (true): a run
// with sessions must not sleep past a follow-up it has just made due.
func (is *issuer) sleepOrWake(ctx context.Context, t time.Time) bool {
	select {
	case <-is.notify:
		return true
	default:
	}
	if is.poller != nil {
		// Completions come from inside the poll, which returns after one.
		is.poller.PollUntil(ctx, t)
		return is.r.clock.Now().Before(t)
	}
	wctx, cancel := context.WithCancel(ctx)
	woke := make(chan bool, 1)
	go func() {
		select {
		case <-is.notify:
			cancel()
			woke <- true
		case <-wctx.Done():
			woke <- false
		}
	}()
	is.r.clock.SleepUntil(wctx, t)
	cancel()
	return <-woke
}
