package runstore

import (
	"fmt"
	"strings"

	"github.com/netloadgen/netloadgen/pkg/atomicfile"
)

// tempPrefix starts the name of every temporary file and directory the
// store creates, so that Open can tell a crash's leftovers from real files.
const tempPrefix = ".runstore-tmp-"

// isTemp reports whether a file name is a temporary file left by a writer:
// the store's own (run directories being created) or pkg/atomicfile's (every
// file written into a run directory, by the store, pkg/runlog, pkg/runner or
// pkg/search).
func isTemp(name string) bool {
	return strings.HasPrefix(name, tempPrefix) || atomicfile.IsTemp(name)
}

// writeFile writes data to dir/name with atomicfile.WriteFile once name is
// known to be a plain file name: a path could leave the run directory, and a
// temporary file's name would be deleted by the next Open as a crash's
// leftover.
func (s *Store) writeFile(dir, name string, data []byte) error {
	if err := checkFileName(name); err != nil {
		return err
	}
	return s.write(dir, name, data)
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
