//go:build linux

package grpcloop

// A server's PING waits a little for its ACK to go with the next call on
// the connection. grpc-go's servers ping after the DATA of calls to
// estimate the bandwidth-delay product, and with small calls the estimate
// never reaches its limit, so they never stop: at 20,000 calls/s one write
// in three was a PING ACK of its own (perf: a loopback write costs the
// sender the receiver's TCP processing too), and one read more for the
// server. Riding along with a call costs neither. The ACK is still sent
// within ackDelay, and at once before a longer wait (RFC 7540 §6.7 wants
// it "with higher priority", and only for keepalive, whose timeouts are
// seconds, does its time matter).

// ackDelay is the longest a PING ACK waits for a call to go with.
const ackDelay = 1_000_000 // ns

// ackLater notes that c holds a PING ACK that waits.
func (l *Loop) ackLater(c *conn) {
	if !c.lazy {
		c.lazy = true
		l.lazy = append(l.lazy, c)
	}
	if l.lazyAt == 0 {
		l.lazyAt = l.now()
	}
}

// flushLazy writes the connections whose ACKs wait.
func (l *Loop) flushLazy() {
	was := l.inHandle
	l.inHandle = true // a failed write's callbacks may send: they queue behind
	for i := 0; i < len(l.lazy); i++ {
		if c := l.lazy[i]; c.lazy {
			c.lazy = false
			if c.state == stateReady || c.state == stateHandshake {
				l.write(c)
			}
		}
		l.lazy[i] = nil
	}
	l.lazy, l.lazyAt = l.lazy[:0], 0
	l.inHandle = was
	if !was {
		l.flush()
	}
}
