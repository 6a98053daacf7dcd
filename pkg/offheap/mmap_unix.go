//go:build unix

package offheap

import "syscall"

// mapBytes maps n bytes of anonymous, private memory: zero-filled pages the
// kernel provides on first touch.
func mapBytes(n int) ([]byte, error) {
	return syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
}

// unmapBytes returns b's pages to the kernel. It cannot fail for a mapping
// mapBytes made; an error would mean a bug, and the pages stay mapped.
func unmapBytes(b []byte) { _ = syscall.Munmap(b) }
