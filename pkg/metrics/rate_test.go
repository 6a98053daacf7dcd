package metrics

import (
	"math"
	"testing"
	"time"
)

type stepClock struct{ t time.Time }

func (c *stepClock) now() time.Time { return c.t }

// The window answers the increase since the newest reading at least span
// old, per second of the time between them.
func TestRateWindow(t *testing.T) {
	type step struct {
		advance time.Duration
		count   int64
		want    float64
	}
	cases := []struct {
		name  string
		start int64 // restart count; -1: none
		steps []step
	}{
		{"first scrape without a start", -1, []step{{0, 100, 0}}},
		{"measured from the run's start", 0, []step{{500 * time.Millisecond, 50, 100}, {500 * time.Millisecond, 100, 100}}},
		{"window slides at 1 s scrapes", 0, []step{
			{time.Second, 100, 100}, {time.Second, 200, 100}, {time.Second, 300, 100}, {time.Second, 400, 100},
			{time.Second, 500, 100},  // 5 s: from the start
			{time.Second, 1500, 280}, // 6 s: (1500-100)/5
			{time.Second, 1500, 260}, // (1500-200)/5
		}},
		{"idle after a run decays to zero", 0, []step{{time.Second, 1000, 1000}, {10 * time.Second, 1000, 0}}},
		{"slow scrapes widen the window", 0, []step{{15 * time.Second, 1500, 100}, {15 * time.Second, 4500, 200}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk := &stepClock{t: time.Unix(1000, 0)}
			w := newRateWindow(5*time.Second, clk.now)
			if c.start >= 0 {
				w.restart(c.start)
			}
			for i, s := range c.steps {
				clk.t = clk.t.Add(s.advance)
				if got := w.observe(s.count); math.Abs(got-s.want) > 1e-9 {
					t.Errorf("step %d: rate %v, want %v", i, got, s.want)
				}
			}
		})
	}
}

// A scraper far faster than the window cannot grow it without bound.
func TestRateWindowBounded(t *testing.T) {
	clk := &stepClock{t: time.Unix(1000, 0)}
	w := newRateWindow(time.Hour, clk.now)
	for i := range 10 * maxReadings {
		clk.t = clk.t.Add(time.Millisecond)
		w.observe(int64(i))
	}
	if len(w.readings) > maxReadings {
		t.Errorf("%d readings kept", len(w.readings))
	}
}
