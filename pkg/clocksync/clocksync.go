// Package clocksync estimates another host's clock offset from timed
// request/response exchanges, the way NTP does: of several exchanges, the one
// with the smallest round trip bounds the offset most tightly. Pure math: the
// exchanges are made by the caller.
package clocksync

import (
	"errors"
	"fmt"
	"time"
)

// MinExchanges is how many exchanges an estimate takes at least (issue 29
// asks eight): one round trip can fall on a scheduler hiccup, and the
// least of several is less likely to.
const MinExchanges = 8

// Exchange is one request/response between a client (the worker, which
// sends) and a server (the coordinator, which answers), each time read on the
// clock of the host that took it, in nanoseconds since the Unix epoch:
//
//	T0 client sends   T1 server receives   T2 server answers   T3 client receives
type Exchange struct {
	T0, T1, T2, T3 int64
}

// RoundTrip is the time on the wire both ways: the client's whole wait less
// the server's own time.
func (e Exchange) RoundTrip() time.Duration {
	return time.Duration((e.T3 - e.T0) - (e.T2 - e.T1))
}

// Offset is the client's clock minus the server's, NTP's
// ((T1−T0)+(T2−T3))/2 with the sign turned so that a client whose clock is
// ahead has a positive offset: a client time minus Offset is a server time.
// It is exact when both directions take as long; otherwise it is off by at
// most half the round trip (Uncertainty).
func (e Exchange) Offset() time.Duration {
	// Halves taken apart so that the sum cannot overflow for any clock
	// readings of this era.
	return -time.Duration((e.T1-e.T0)/2 + (e.T2-e.T3)/2)
}

// Uncertainty bounds |true offset − Offset|: half the round trip.
func (e Exchange) Uncertainty() time.Duration { return e.RoundTrip() / 2 }

// ErrExchange marks exchanges that cannot be estimated from.
var ErrExchange = errors.New("clocksync")

// check refuses an exchange whose own readings contradict it: each host's
// two readings must go forward.
func (e Exchange) check() error {
	if e.T3 < e.T0 {
		return fmt.Errorf("%w: the client received (%d) before it sent (%d)", ErrExchange, e.T3, e.T0)
	}
	if e.T2 < e.T1 {
		return fmt.Errorf("%w: the server answered (%d) before it received (%d)", ErrExchange, e.T2, e.T1)
	}
	if e.RoundTrip() < 0 {
		return fmt.Errorf("%w: the server's time (%v) exceeds the client's wait (%v)", ErrExchange,
			time.Duration(e.T2-e.T1), time.Duration(e.T3-e.T0))
	}
	return nil
}

// Estimate is a client's clock offset as measured.
type Estimate struct {
	// Offset is the client's clock minus the server's.
	Offset time.Duration
	// Uncertainty bounds the error of Offset (half the best round trip).
	Uncertainty time.Duration
	// Exchanges is how many exchanges were taken; Best the one used.
	Exchanges int
	Best      Exchange
}

// Estimated takes the exchange with the smallest round trip, of at least
// MinExchanges, each checked for consistency.
func Estimated(xs []Exchange) (Estimate, error) {
	if len(xs) < MinExchanges {
		return Estimate{}, fmt.Errorf("%w: %d exchanges, want at least %d", ErrExchange, len(xs), MinExchanges)
	}
	best := -1
	for i, x := range xs {
		if err := x.check(); err != nil {
			return Estimate{}, fmt.Errorf("exchange %d: %w", i, err)
		}
		if best < 0 || x.RoundTrip() < xs[best].RoundTrip() {
			best = i
		}
	}
	b := xs[best]
	return Estimate{Offset: b.Offset(), Uncertainty: b.Uncertainty(), Exchanges: len(xs), Best: b}, nil
}

// ClientTime is server time t (ns since the Unix epoch) on the client's
// clock: what a worker is told to start at.
func (e Estimate) ClientTime(t int64) int64 { return t + int64(e.Offset) }

// ServerTime is client time t on the server's clock.
func (e Estimate) ServerTime(t int64) int64 { return t - int64(e.Offset) }

// ErrTooUncertain marks an estimate too loose for a run.
var ErrTooUncertain = errors.New("clock offset too uncertain")

// Check refuses an estimate whose uncertainty exceeds max (the run's
// max_clock_uncertainty_ms), saying by how much and what to do.
func (e Estimate) Check(who string, max time.Duration) error {
	if e.Exchanges == 0 {
		return fmt.Errorf("%w: worker %s: its clock was not measured", ErrTooUncertain, who)
	}
	if e.Uncertainty > max {
		return fmt.Errorf("%w: worker %s: offset %v ± %v (best round trip %v of %d exchanges), over max_clock_uncertainty_ms %v: "+
			"bring the worker nearer the coordinator, or raise max_clock_uncertainty_ms",
			ErrTooUncertain, who, e.Offset, e.Uncertainty, e.Best.RoundTrip(), e.Exchanges, ms(max))
	}
	return nil
}

// ms writes a duration as the milliseconds a spec field holds.
func ms(d time.Duration) string {
	return fmt.Sprintf("%g", float64(d)/float64(time.Millisecond))
}
