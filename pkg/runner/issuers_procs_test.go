package runner

import (
	"log/slog"
	"runtime"
	"testing"
)

// TestEnoughProcs: a run of n issuers has at least n+1 Ps while it runs,
// and the process's own count after; one issuer changes nothing unless
// the run scrapes the server's metrics.
func TestEnoughProcs(t *testing.T) {
	was := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(was)
	log := slog.New(slog.DiscardHandler)
	restore := enoughProcs(1, false, log)
	if p := runtime.GOMAXPROCS(0); p != 1 {
		t.Errorf("one issuer: GOMAXPROCS %d, want 1 untouched", p)
	}
	restore()
	restore = enoughProcs(1, true, log)
	if p := runtime.GOMAXPROCS(0); p != 2 {
		t.Errorf("one issuer and a scraper: GOMAXPROCS %d, want 2", p)
	}
	restore()
	restore = enoughProcs(3, false, log)
	if p := runtime.GOMAXPROCS(0); p != 4 {
		t.Errorf("three issuers: GOMAXPROCS %d during the run, want 4", p)
	}
	restore()
	if p := runtime.GOMAXPROCS(0); p != 1 {
		t.Errorf("after the run: GOMAXPROCS %d, want 1 again", p)
	}
	runtime.GOMAXPROCS(8)
	restore = enoughProcs(3, true, log)
	if p := runtime.GOMAXPROCS(0); p != 8 {
		t.Errorf("three issuers with 8 Ps: GOMAXPROCS %d, want 8 untouched", p)
	}
	restore()
}
