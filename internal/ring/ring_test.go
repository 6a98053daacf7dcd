package ring

import (
	"slices"
	"testing"
)

func drain(q *Deque[int]) []int {
	var out []int
	for q.Len() > 0 {
		out = append(out, q.PopFront())
	}
	return out
}

// Order survives growth and wrapping: pushes at both ends, interleaved
// with pops, past several buffer sizes.
func TestDequeOrder(t *testing.T) {
	var q Deque[int]
	var want []int
	next := 0
	for round := range 300 {
		q.PushBack(next)
		want = append(want, next)
		next++
		if round%7 == 0 {
			q.PushFront(-round)
			want = append([]int{-round}, want...)
		}
		if round%3 == 0 {
			if got := q.PopFront(); got != want[0] {
				t.Fatalf("round %d: popped %d, want %d", round, got, want[0])
			}
			want = want[1:]
		}
		if q.Len() != len(want) {
			t.Fatalf("round %d: Len %d, want %d", round, q.Len(), len(want))
		}
		if q.Len() > 0 && (*q.Front() != want[0] || *q.At(q.Len() - 1) != want[len(want)-1]) {
			t.Fatalf("round %d: front %d / back %d, want %d / %d", round, *q.Front(), *q.At(q.Len() - 1), want[0], want[len(want)-1])
		}
	}
	if got := drain(&q); !slices.Equal(got, want) {
		t.Fatalf("drained %v, want %v", got, want)
	}
}

func TestDequeSteadyStateDoesNotAllocate(t *testing.T) {
	var q Deque[*int]
	for range 64 {
		q.PushBack(new(int))
	}
	drainP := func() {
		for q.Len() > 0 {
			q.PopFront()
		}
	}
	drainP()
	v := new(int)
	if a := testing.AllocsPerRun(100, func() {
		for range 64 {
			q.PushBack(v)
		}
		drainP()
	}); a != 0 {
		t.Errorf("%v allocations per fill and drain within capacity", a)
	}
	q.PushBack(v)
	q.PopFront()
	if q.buf[(q.head-1+len(q.buf))%len(q.buf)] != nil {
		t.Error("a popped slot still holds its element")
	}
}
