package metrics

import (
	"sync"
	"time"
)

// rateWindow turns a counter into a rate at scrape time. It keeps the
// counter's value at each scrape and answers the increase since the newest
// reading at least span old (or the oldest it has) per second. Measuring
// between scrapes costs the hot path nothing and needs no goroutine; the
// look-back is span rounded up to the scrape interval.
type rateWindow struct {
	span time.Duration
	now  func() time.Time

	mu       sync.Mutex
	readings []reading // oldest first; readings[0] is the one the rate is from
}

type reading struct {
	at    time.Time
	count int64
}

// maxReadings bounds the memory a scraper polling far faster than span
// could pin: past it, the oldest readings go first.
const maxReadings = 256

func newRateWindow(span time.Duration, now func() time.Time) *rateWindow {
	return &rateWindow{span: span, now: now}
}

// restart forgets every reading but count now: a run's start, so the
// rate early in a run is measured from its start, not over the idle time
// before it.
func (w *rateWindow) restart(count int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.readings = append(w.readings[:0], reading{w.now(), count})
}

// observe records count now and returns the rate over the window.
func (w *rateWindow) observe(count int64) float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := reading{w.now(), count}
	w.add(now)
	// Drop readings older than the newest one that is at least span old.
	keep := 0
	for i, r := range w.readings {
		if now.at.Sub(r.at) >= w.span {
			keep = i
		}
	}
	w.readings = append(w.readings[:0], w.readings[keep:]...)
	from := w.readings[0]
	dt := now.at.Sub(from.at).Seconds()
	if dt <= 0 || now.count < from.count {
		return 0
	}
	return float64(now.count-from.count) / dt
}

func (w *rateWindow) add(r reading) {
	if len(w.readings) == maxReadings {
		w.readings = append(w.readings[:0], w.readings[1:]...)
	}
	w.readings = append(w.readings, r)
}
