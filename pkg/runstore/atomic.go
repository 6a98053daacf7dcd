package runstore

import (
	"fmt"
	"io"
	"strings"

	"github.com/netloadgen/netloadgen/pkg/atomicfile"
)

// tempPrefix starts the name of every temporary file and directory the
// store creates, so that Open can tell a crash's leftovers from real files.
const tempPrefix = ".runstore-tmp-"

// isTemp reports whether a file name is a temporary file left by a writer:
// the store's own (run directories being created) or pkg/atomicfile's (every
// file written into a run directory, by the store or by pkg/runlog).
func isTemp(name string) bool {
	return strings.HasPrefix(name, tempPrefix) || atomicfile.IsTemp(name)
}

// WriteFileAtomic writes data to dir/name so that a reader, or the file
// system after a crash, sees either the previous file or the complete new
// one: it writes a temporary file in dir, fsyncs it, renames it over name
// and fsyncs dir (without which a crash can lose the rename).
// name must be a plain file name, not a path.
func WriteFileAtomic(dir, name string, data []byte) error {
	return writeAtomic(dir, name, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// writeAtomic is WriteFileAtomic with the content produced by fill, which
// lets tests fail a write midway.
func writeAtomic(dir, name string, fill func(w io.Writer) error) error {
	if err := checkFileName(name); err != nil {
		return err
	}
	if err := atomicfile.Write(dir, name, fill); err != nil {
		return err
	}
	return atomicfile.SyncDir(dir)
}

// checkFileName refuses anything but a plain, non-temporary file name.
func checkFileName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) || strings.ContainsRune(name, 0) {
		return fmt.Errorf("%w: %q is not a plain file name", ErrFileName, name)
	}
	if isTemp(name) {
		return fmt.Errorf("%w: %q is reserved for temporary files", ErrFileName, name)
	}
	return nil
}

func syncDir(dir string) error { return atomicfile.SyncDir(dir) }
