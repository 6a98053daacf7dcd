//go:build !linux

package scrape

// lowPriority: only Linux sets a thread's priority; elsewhere a scrape
// runs at the process's.
func lowPriority() {}
