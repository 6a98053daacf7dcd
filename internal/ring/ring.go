// Package ring is a double-ended queue on a ring buffer: it grows when a
// backlog outruns it and then keeps its size, so a steady state allocates
// nothing. The event loops queue requests waiting for a connection in it.
package ring

// Deque is a FIFO that can also take an element at its front (a retry,
// older than everything queued). The zero value is empty and ready.
type Deque[T any] struct {
	buf        []T
	head, size int
}

// Len is the number of elements queued.
func (q *Deque[T]) Len() int { return q.size }

func (q *Deque[T]) grow() {
	nb := make([]T, max(2*len(q.buf), 64))
	for i := range q.size {
		nb[i] = q.buf[(q.head+i)%len(q.buf)]
	}
	q.buf, q.head = nb, 0
}

// PushBack queues v last.
func (q *Deque[T]) PushBack(v T) {
	if q.size == len(q.buf) {
		q.grow()
	}
	q.buf[(q.head+q.size)%len(q.buf)] = v
	q.size++
}

// PushFront queues v first.
func (q *Deque[T]) PushFront(v T) {
	if q.size == len(q.buf) {
		q.grow()
	}
	q.head = (q.head - 1 + len(q.buf)) % len(q.buf)
	q.buf[q.head] = v
	q.size++
}

// At is the i-th element from the front (0 ≤ i < Len()).
func (q *Deque[T]) At(i int) *T { return &q.buf[(q.head+i)%len(q.buf)] }

// Front is the first element; the queue must not be empty.
func (q *Deque[T]) Front() *T { return &q.buf[q.head] }

// PopFront removes and returns the first element; the queue must not be
// empty. Its slot is zeroed so the queue keeps no reference to it.
func (q *Deque[T]) PopFront() T {
	v := q.buf[q.head]
	var zero T
	q.buf[q.head] = zero
	q.head = (q.head + 1) % len(q.buf)
	q.size--
	return v
}
