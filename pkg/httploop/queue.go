package httploop

// pending is a request not yet answered.
type pending struct {
	raw      []byte
	tag      uint64
	deadline int64 // ns on the loop's clock; 0: none
	since    int64 // when it began to wait for a connection (loop's clock)
	retried  bool
}

// fifo holds requests waiting for a connection: a ring that grows when a
// backlog outruns it and then keeps its size, so steady state allocates
// nothing.
type fifo struct {
	buf        []pending
	head, size int
}

func (q *fifo) len() int { return q.size }

func (q *fifo) grow() {
	nb := make([]pending, max(2*len(q.buf), 64))
	for i := range q.size {
		nb[i] = q.buf[(q.head+i)%len(q.buf)]
	}
	q.buf, q.head = nb, 0
}

func (q *fifo) pushBack(p pending) {
	if q.size == len(q.buf) {
		q.grow()
	}
	q.buf[(q.head+q.size)%len(q.buf)] = p
	q.size++
}

// pushFront puts a request that must go first: a retry, older than
// everything queued.
func (q *fifo) pushFront(p pending) {
	if q.size == len(q.buf) {
		q.grow()
	}
	q.head = (q.head - 1 + len(q.buf)) % len(q.buf)
	q.buf[q.head] = p
	q.size++
}

func (q *fifo) front() *pending { return &q.buf[q.head] }

func (q *fifo) popFront() pending {
	p := q.buf[q.head]
	q.buf[q.head] = pending{} // drop the reference to the request bytes
	q.head = (q.head + 1) % len(q.buf)
	q.size--
	return p
}
