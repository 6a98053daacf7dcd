// Package offheap allocates pointer-free memory outside the Go heap, which
// the garbage collector neither scans nor counts toward its heap goal.
//
// A run's latency record is the one thing a run keeps for its whole length
// (issue 28: 8 bytes a sample, 480 MB for 60 million queries). On the Go
// heap it would set the collector's goal (GOGC=100: twice the live heap),
// so the garbage of the run's end could grow the process toward twice the
// record. Off the heap it costs exactly its pages.
//
// Memory comes from anonymous mmap on Unix (zeroed by the kernel) and from
// make elsewhere. It must hold no Go pointers, and no slice into it may be
// used after its free function is called.
package offheap

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// ErrInvalidSize: a negative or too large allocation.
var ErrInvalidSize = errors.New("offheap: invalid size")

// live counts the bytes allocated and not yet freed, for tests and
// metrics: the package's one piece of global state.
var live atomic.Int64

// Live returns the bytes allocated by this package and not yet freed.
func Live() int64 { return live.Load() }

// Bytes returns n zeroed bytes off the Go heap and the function that frees
// them (safe to call more than once; the bytes must not be used after).
func Bytes(n int) ([]byte, func(), error) {
	if n < 0 {
		return nil, nil, fmt.Errorf("%w: %d bytes", ErrInvalidSize, n)
	}
	if n == 0 {
		return nil, func() {}, nil
	}
	b, err := mapBytes(n)
	if err != nil {
		return nil, nil, fmt.Errorf("offheap: %d bytes: %w", n, err)
	}
	live.Add(int64(n))
	var once sync.Once
	free := func() {
		once.Do(func() {
			unmapBytes(b)
			live.Add(-int64(n))
		})
	}
	return b, free, nil
}

// Int64s returns n zeroed int64s off the Go heap and the function that
// frees them, as Bytes.
func Int64s(n int) ([]int64, func(), error) {
	if n < 0 || n > maxInt64s {
		return nil, nil, fmt.Errorf("%w: %d int64s", ErrInvalidSize, n)
	}
	b, free, err := Bytes(n * 8)
	if err != nil || n == 0 {
		return nil, free, err
	}
	// The mapping is page-aligned, so 8-byte aligned.
	return unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(b))), n), free, nil
}

// maxInt64s keeps n*8 within int.
const maxInt64s = int(^uint(0)>>1) / 8

// FreeWith frees memory (free, as Bytes or Int64s returned it) once owner
// has become unreachable: a record that owns its memory releases it when
// the record is dropped, however many runs a daemon makes. free must not
// refer to owner, or owner never becomes unreachable.
func FreeWith[T any](owner *T, free func()) {
	runtime.AddCleanup(owner, func(f func()) { f() }, free)
}
