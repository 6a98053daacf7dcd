//go:build !linux

package grpcloop

import (
	"context"
	"time"
)

// Loop is unavailable here; New always fails.
type Loop struct{}

// New returns ErrUnsupported: the loop needs Linux's epoll and timerfd.
func New(Config) (*Loop, error) { return nil, ErrUnsupported }

func (*Loop) Send(*Request, uint64)                          {}
func (*Loop) PollUntil(context.Context, time.Time) bool      { return false }
func (*Loop) PollQuietUntil(context.Context, time.Time) bool { return false }
func (*Loop) Preconnect(context.Context, int) error          { return ErrUnsupported }
func (*Loop) GiveOwnP()                                      {}
func (*Loop) Outstanding() int                               { return 0 }
func (*Loop) Retries() uint64                                { return 0 }
func (*Loop) Conns() int                                     { return 0 }
func (*Loop) Close() error                                   { return nil }
