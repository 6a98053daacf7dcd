package serverstats

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/netloadgen/netloadgen/pkg/serverview"
)

// LiveInterval is how often a run's statistics are read while it lasts.
const LiveInterval = time.Second

// Live is the running server-queue figure: the server's mean queue time
// per successful request over the last interval and over the run so far.
type Live struct {
	// QueueNs is the last interval's mean (0 when no request succeeded
	// in it); Requests the requests it averages.
	QueueNs  float64
	Requests uint64
	// RunQueueNs and RunRequests are the run's so far.
	RunQueueNs  float64
	RunRequests uint64
}

// Run is one run's statistics: the snapshot before it, the live reads
// while it lasts and the summary after it.
type Run struct {
	r         *Reader
	before    []serverview.ModelStats
	beforeErr error
	// skipped counts live reads not made because the one before outlasted
	// the interval.
	skipped atomic.Int64
	// Scrub, when set, takes secrets out of an error's text before a note
	// quotes it, and so before it is cut to maxNote: cut first, a secret
	// the server echoed across the cut would keep its first part.
	Scrub func(string) string
}

// Begin reads the statistics before a run (after its probe and untimed
// setup, before its first timed query).
func Begin(ctx context.Context, r *Reader) *Run {
	before, err := r.Read(ctx)
	return &Run{r: r, before: before, beforeErr: err}
}

// Offered reports whether the read before the run answered.
func (x *Run) Offered() bool { return x.beforeErr == nil }

// Skipped is how many live reads were skipped because the one before them
// took longer than the interval.
func (x *Run) Skipped() int64 { return x.skipped.Load() }

// Live reads the statistics every interval (≤ 0: LiveInterval) on a
// goroutine of its own until stop is called, and reports each read that
// answered to report (from that goroutine). Reads are one at a time: a
// read slower than the interval makes the ticks it outlasted skipped, not
// queued. When the read before the run failed, there is nothing to read
// against and Live does nothing. stop cancels a read in progress and
// returns once the goroutine has.
func (x *Run) Live(ctx context.Context, interval time.Duration, report func(Live)) (stop func()) {
	if !x.Offered() || report == nil {
		return func() {}
	}
	if interval <= 0 {
		interval = LiveInterval
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { x.live(ctx, interval, report) })
	return sync.OnceFunc(func() {
		cancel()
		wg.Wait()
	})
}

func (x *Run) live(ctx context.Context, interval time.Duration, report func(Live)) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	last := x.before
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		began := time.Now()
		now, err := x.r.Read(ctx)
		if took := time.Since(began); took > interval {
			// The ticker dropped the ticks this read outlasted.
			x.skipped.Add(int64(took / interval))
		}
		if err != nil {
			continue
		}
		var l Live
		l.QueueNs, l.Requests = serverview.QueueSince(last, now)
		l.RunQueueNs, l.RunRequests = serverview.QueueSince(x.before, now)
		last = now
		report(l)
	}
}

// End reads the statistics after the run (after its drain) and summarises
// the delta; meanLatencyNs is the run's mean request latency (0: unknown;
// see serverview.Summarize). It never fails: a read that did not answer is
// the result's note.
func (x *Run) End(ctx context.Context, meanLatencyNs float64) *serverview.Statistics {
	switch {
	case NotOffered(x.beforeErr):
		return serverview.NotOfferedStatistics()
	case x.beforeErr != nil:
		return &serverview.Statistics{Model: x.r.model, Version: x.r.version, Delta: []serverview.ModelStats{},
			Note: "statistics not read before the run: " + clip(x.scrub(x.beforeErr.Error()))}
	}
	after, err := x.r.Read(ctx)
	if err != nil {
		return &serverview.Statistics{Offered: !NotOffered(err), Model: x.r.model, Version: x.r.version, Delta: []serverview.ModelStats{},
			Note: "statistics not read after the run: " + clip(x.scrub(err.Error()))}
	}
	delta, note := serverview.Delta(x.before, after)
	return serverview.Summarize(x.r.model, x.r.version, delta, note, meanLatencyNs)
}

func (x *Run) scrub(s string) string {
	if x.Scrub == nil {
		return s
	}
	return x.Scrub(s)
}

// maxNote bounds the part of a note an error gives: a server's text can
// be long (a parser's error quotes what it read).
const maxNote = 300

func clip(s string) string {
	if len(s) <= maxNote {
		return s
	}
	return strings.ToValidUTF8(s[:maxNote], "") + "…"
}
