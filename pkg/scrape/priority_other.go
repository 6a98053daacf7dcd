//go:build !linux

package scrape

import "syscall"

// lowPriority: only Linux sets a thread's priority; elsewhere a scrape
// runs at the process's.
func lowPriority() {}

// smallWindow: elsewhere a scrape's socket keeps the system's receive
// buffer, and only the paced reads hold a body back.
func smallWindow(_, _ string, _ syscall.RawConn) error { return nil }
