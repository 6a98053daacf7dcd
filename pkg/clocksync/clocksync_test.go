package clocksync

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// exchange simulates one exchange with a client clock ahead of the
// server's by offset, the request taking up and the answer down on the
// wire, the server busy for serve.
func exchange(start int64, offset, up, serve, down time.Duration) Exchange {
	t0 := start + int64(offset)            // client clock
	t1 := start + int64(up)                // server clock
	t2 := t1 + int64(serve)                // server clock
	t3 := t2 + int64(down) + int64(offset) // client clock
	return Exchange{T0: t0, T1: t1, T2: t2, T3: t3}
}

func TestSymmetricExchangeIsExact(t *testing.T) {
	for _, off := range []time.Duration{0, 250 * time.Millisecond, -250 * time.Millisecond, 3 * time.Hour} {
		x := exchange(1_700_000_000_000_000_000, off, 40*time.Microsecond, 15*time.Microsecond, 40*time.Microsecond)
		if x.Offset() != off {
			t.Errorf("offset %v: got %v", off, x.Offset())
		}
		if x.RoundTrip() != 80*time.Microsecond || x.Uncertainty() != 40*time.Microsecond {
			t.Errorf("offset %v: round trip %v, uncertainty %v; want 80µs, 40µs", off, x.RoundTrip(), x.Uncertainty())
		}
	}
}

// TestAsymmetryWithinUncertainty: however the round trip splits between
// the two directions, the true offset is within Uncertainty of Offset.
func TestAsymmetryWithinUncertainty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 10000; i++ {
		off := time.Duration(r.Int64N(int64(time.Second))) - 500*time.Millisecond
		up := time.Duration(r.Int64N(int64(5 * time.Millisecond)))
		down := time.Duration(r.Int64N(int64(5 * time.Millisecond)))
		x := exchange(1_700_000_000_000_000_000, off, up, time.Duration(r.Int64N(1000)), down)
		if d := (x.Offset() - off).Abs(); d > x.Uncertainty()+1 {
			t.Fatalf("offset %v up %v down %v: estimate %v off by %v, beyond its uncertainty %v", off, up, down, x.Offset(), d, x.Uncertainty())
		}
	}
}

func TestEstimatedTakesSmallestRoundTrip(t *testing.T) {
	off := 250 * time.Millisecond
	var xs []Exchange
	for i := 0; i < MinExchanges; i++ {
		// Slow, lopsided exchanges but one: the estimate is that one's.
		up, down := time.Duration(i+3)*time.Millisecond, time.Millisecond
		if i == 5 {
			up, down = 30*time.Microsecond, 30*time.Microsecond
		}
		xs = append(xs, exchange(int64(i)*int64(time.Second), off, up, 10*time.Microsecond, down))
	}
	e, err := Estimated(xs)
	if err != nil {
		t.Fatal(err)
	}
	if e.Offset != off || e.Uncertainty != 30*time.Microsecond || e.Best != xs[5] || e.Exchanges != MinExchanges {
		t.Errorf("estimate %+v: want offset %v ± 30µs from exchange 5", e, off)
	}
}

func TestEstimatedRefuses(t *testing.T) {
	good := exchange(0, 0, time.Millisecond, 0, time.Millisecond)
	few := []Exchange{good, good, good}
	if _, err := Estimated(few); !errors.Is(err, ErrExchange) || !strings.Contains(err.Error(), "3 exchanges, want at least 8") {
		t.Errorf("3 exchanges: %v", err)
	}
	bad := []struct {
		name string
		x    Exchange
		want string
	}{
		{"client backwards", Exchange{T0: 10, T1: 5, T2: 6, T3: 9}, "client received"},
		{"server backwards", Exchange{T0: 0, T1: 6, T2: 5, T3: 9}, "server answered"},
		{"server slower than the wait", Exchange{T0: 0, T1: 0, T2: 100, T3: 9}, "exceeds the client's wait"},
	}
	for _, b := range bad {
		xs := []Exchange{good, good, good, good, good, good, good, b.x}
		if _, err := Estimated(xs); !errors.Is(err, ErrExchange) || !strings.Contains(err.Error(), b.want) || !strings.Contains(err.Error(), "exchange 7") {
			t.Errorf("%s: %v, want %q naming exchange 7", b.name, err, b.want)
		}
	}
}

func TestCheck(t *testing.T) {
	e := Estimate{Offset: 250 * time.Millisecond, Uncertainty: 1500 * time.Microsecond, Exchanges: 8,
		Best: Exchange{T0: 0, T1: 0, T2: 0, T3: 3_000_000}}
	err := e.Check("w-1", time.Millisecond)
	if !errors.Is(err, ErrTooUncertain) {
		t.Fatalf("1.5 ms against 1 ms: %v", err)
	}
	for _, want := range []string{"worker w-1", "250ms ± 1.5ms", "3ms", "8 exchanges", "max_clock_uncertainty_ms 1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	if err := e.Check("w-1", 2*time.Millisecond); err != nil {
		t.Errorf("1.5 ms against 2 ms: %v", err)
	}
	if err := (Estimate{}).Check("w-2", time.Second); !errors.Is(err, ErrTooUncertain) || !strings.Contains(err.Error(), "not measured") {
		t.Errorf("no estimate: %v", err)
	}
}

func TestClientServerTime(t *testing.T) {
	e := Estimate{Offset: 250 * time.Millisecond}
	const start = int64(1_700_000_000_000_000_000)
	if got := e.ClientTime(start); got != start+250_000_000 {
		t.Errorf("ClientTime: %d", got)
	}
	if got := e.ServerTime(e.ClientTime(start)); got != start {
		t.Errorf("ServerTime(ClientTime): %d", got)
	}
}
