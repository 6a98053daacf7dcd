//go:build linux

package main

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// isTerminal reports whether w is a terminal: a file the terminal ioctl
// answers for. A character device is not enough: /dev/null is one, and a
// run with 2>/dev/null drew its progress line there every half second.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	tty := false
	_ = rc.Control(func(fd uintptr) {
		_, err := unix.IoctlGetTermios(int(fd), unix.TCGETS)
		tty = err == nil
	})
	return tty
}
