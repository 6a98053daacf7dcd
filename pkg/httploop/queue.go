package httploop

import "github.com/netloadgen/netloadgen/internal/ring"

// pending is a request not yet answered.
type pending struct {
	raw      []byte
	tag      uint64
	deadline int64 // ns on the loop's clock; 0: none
	since    int64 // when it began to wait for a connection (loop's clock)
	retried  bool
}

// fifo holds the requests waiting for a connection (a stream, for
// grpcloop), in order; a retry goes first.
type fifo = ring.Deque[pending]
