//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

func TestIsTerminal(t *testing.T) {
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for name, out := range map[string]io.Writer{"/dev/null (a character device)": devNull, "a pipe": w, "a buffer": &bytes.Buffer{}} {
		if isTerminal(out) {
			t.Errorf("%s taken for a terminal", name)
		}
	}

	// A pseudo-terminal's far side is one.
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	defer ptmx.Close()
	var n int
	var ioErr error
	rc, _ := ptmx.SyscallConn()
	_ = rc.Control(func(fd uintptr) {
		if ioErr = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); ioErr == nil {
			n, ioErr = unix.IoctlGetInt(int(fd), unix.TIOCGPTN)
		}
	})
	if ioErr != nil {
		t.Skipf("pseudo-terminal set-up: %v", ioErr)
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("pseudo-terminal /dev/pts/%d: %v", n, err)
	}
	defer tty.Close()
	if !isTerminal(tty) {
		t.Error("a pseudo-terminal not taken for a terminal")
	}
}
