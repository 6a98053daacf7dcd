package rxstamp

import (
	"context"
	"time"
)

// ContextKey is the context key of a request's *Stamp. A server that cannot
// wrap its context (fasthttp's RequestCtx answers Value from its user
// values) stores the stamp under ContextKey{} itself.
type ContextKey struct{}

// Stamp is what a server knows of a request's passage through its
// connection: when it arrived, and a way to learn when the answer leaves.
type Stamp struct {
	Arrival time.Time
	conn    *Conn
}

// NewStamp is the stamp of a request that arrived at arrival on c (c may be
// nil: no departures then).
func NewStamp(arrival time.Time, c *Conn) *Stamp { return &Stamp{Arrival: arrival, conn: c} }

// OnDeparture asks for f to be called when the next write on the request's
// connection starts; false (and f never called) when that is unknown.
func (s *Stamp) OnDeparture(f func(start time.Time)) bool {
	if s == nil || s.conn == nil {
		return false
	}
	s.conn.OnNextWrite(f)
	return true
}

// NewContext returns ctx carrying s.
func NewContext(ctx context.Context, s *Stamp) context.Context {
	return context.WithValue(ctx, ContextKey{}, s)
}

// FromContext returns the stamp ctx carries, or nil.
func FromContext(ctx context.Context) *Stamp {
	s, _ := ctx.Value(ContextKey{}).(*Stamp)
	return s
}
