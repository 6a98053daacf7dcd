//go:build !linux

package main

import (
	"io"
	"os"
)

// isTerminal reports whether w is a character device, the nearest test
// without a platform's terminal ioctl.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
