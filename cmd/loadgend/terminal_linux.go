//go:build linux

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// fileIsTerminal reports whether the terminal ioctl answers for f. A
// character device is not enough: /dev/null is one, and a run with
// 2>/dev/null drew its progress line there every half second.
func fileIsTerminal(f *os.File) bool {
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
