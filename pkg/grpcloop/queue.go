package grpcloop

import "github.com/netloadgen/netloadgen/internal/ring"

// pending is a call not yet on a stream.
type pending struct {
	req      *Request
	tag      uint64
	deadline int64 // ns on the loop's clock; 0: none
	retried  bool
	unsent   bool // its connection failed before any frame of it was written
}

// fifo holds the requests waiting for a connection (a stream, for
// grpcloop), in order; a retry goes first.
type fifo = ring.Deque[pending]
