package shardrun

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
)

// TestStartOnTheWorkersClock: a start given on the worker's clock (here
// 250 ms ahead of the system's, as LOADGEND_TEST_CLOCK_SHIFT makes it) is
// as far ahead on the engine's system clock as on the worker's: 100 ms,
// not 100 ms less or more the shift.
func TestStartOnTheWorkersClock(t *testing.T) {
	for _, shift := range []time.Duration{250 * time.Millisecond, -250 * time.Millisecond, 0} {
		sh := &shard{cfg: Config{Now: func() time.Time { return time.Now().Add(shift) }}.withDefaults()}
		sh.log = sh.cfg.Log
		startNs := sh.cfg.Now().Add(100 * time.Millisecond).UnixNano()
		got, err := sh.startOf(api.WorkerStart{StartNs: startNs})
		if err != nil {
			t.Fatal(err)
		}
		// The conversion reads the two clocks a few ns apart; the bound
		// only tells 100 ms from 100 ms ± 250.
		if ahead := time.Until(got); ahead <= 50*time.Millisecond || ahead > 100*time.Millisecond {
			t.Errorf("shift %v: the start is %v ahead on the system clock, want 100ms", shift, ahead)
		}
		if !strings.Contains(got.String(), " m=") { // the monotonic reading time.String shows
			t.Errorf("shift %v: the start has no monotonic reading", shift)
		}
	}
	sh := &shard{cfg: Config{MaxStartAhead: time.Second}.withDefaults()}
	sh.log = sh.cfg.Log
	for _, ns := range []int64{0, -5, time.Now().Add(time.Minute).UnixNano()} {
		if _, err := sh.startOf(api.WorkerStart{StartNs: ns}); !errors.Is(err, ErrStart) {
			t.Errorf("start_ns %d: %v, want ErrStart", ns, err)
		}
	}
}

// TestRetryBounds: a 202's retry_ms is taken within bounds.
func TestRetryBounds(t *testing.T) {
	for _, c := range []struct {
		ms   int64
		want time.Duration
	}{{0, defaultRetry}, {-1, defaultRetry}, {1, minRetry}, {250, 250 * time.Millisecond}, {1 << 40, maxRetry}} {
		if got := retryOf(c.ms); got != c.want {
			t.Errorf("retryOf(%d) = %v, want %v", c.ms, got, c.want)
		}
	}
}
