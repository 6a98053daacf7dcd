package rxstamp

import (
	"context"
	"time"
)

// ContextKey is the context key of a request's arrival time. A server that
// cannot wrap its context (fasthttp's RequestCtx answers Value from its user
// values) stores the time under ContextKey{} itself.
type ContextKey struct{}

// NewContext returns ctx carrying the arrival time of its request.
func NewContext(ctx context.Context, arrival time.Time) context.Context {
	return context.WithValue(ctx, ContextKey{}, arrival)
}

// FromContext returns the arrival time ctx carries.
func FromContext(ctx context.Context) (time.Time, bool) {
	t, ok := ctx.Value(ContextKey{}).(time.Time)
	return t, ok
}
