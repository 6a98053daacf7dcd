package offheap

import (
	"errors"
	"runtime"
	"runtime/metrics"
	"testing"
)

func TestInt64sZeroedWritableAndCounted(t *testing.T) {
	before := Live()
	s, free, err := Int64s(1 << 16)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 1<<16 || Live()-before != 8<<16 {
		t.Fatalf("len %d, live +%d", len(s), Live()-before)
	}
	for i, v := range s {
		if v != 0 {
			t.Fatalf("s[%d] = %d, want fresh zero", i, v)
		}
		s[i] = int64(i)
	}
	if s[12345] != 12345 {
		t.Error("write lost")
	}
	free()
	free() // a second free is a no-op, not a double unmap
	if Live() != before {
		t.Errorf("live %d after free, want %d", Live(), before)
	}
}

func TestBadSizes(t *testing.T) {
	for _, n := range []int{-1, maxInt64s + 1} {
		if _, _, err := Int64s(n); !errors.Is(err, ErrInvalidSize) {
			t.Errorf("Int64s(%d): %v", n, err)
		}
	}
	if _, _, err := Bytes(-1); !errors.Is(err, ErrInvalidSize) {
		t.Errorf("Bytes(-1): %v", err)
	}
	b, free, err := Bytes(0)
	if err != nil || len(b) != 0 {
		t.Errorf("Bytes(0) = %d bytes, %v", len(b), err)
	}
	free()
}

// The memory is not the heap's: the collector's goal does not grow by it.
func TestNotCountedByTheCollector(t *testing.T) {
	const n = 64 << 20 / 8 // 64 MiB
	goal := func() uint64 {
		runtime.GC()
		s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	before := goal()
	s, free, err := Int64s(n)
	if err != nil {
		t.Fatal(err)
	}
	defer free()
	for i := 0; i < len(s); i += 512 {
		s[i] = 1
	}
	if after := goal(); after > before+8<<20 {
		t.Errorf("heap goal %d → %d with 64 MiB off the heap", before, after)
	}
	runtime.KeepAlive(s)
}

type owner struct{ _ int }

// FreeWith frees the memory once its owner is unreachable.
func TestFreeWithOwner(t *testing.T) {
	runtime.GC()
	before := Live()
	o := &owner{}
	_, free, err := Bytes(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	FreeWith(o, free)
	if Live() != before+1<<20 {
		t.Fatalf("live +%d", Live()-before)
	}
	runtime.KeepAlive(o)
	o = nil
	// Cleanups run on their own goroutine after the collection that finds
	// the owner unreachable: collect and yield until it has run.
	for i := 0; i < 100 && Live() != before; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	if Live() != before {
		t.Errorf("live +%d after the owner was collected", Live()-before)
	}
}
