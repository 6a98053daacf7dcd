package runstore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// tempPrefix starts the name of every temporary file and directory the
// store creates, so that Open can tell a crash's leftovers from real files.
const tempPrefix = ".runstore-tmp-"

// foreignTempPrefixes are the temporary-file prefixes of other writers into
// a run directory (pkg/runlog's), removed at Open like ours.
var foreignTempPrefixes = []string{".runlog-tmp-"}

// isTemp reports whether a file name is a temporary file left by a writer.
func isTemp(name string) bool {
	if strings.HasPrefix(name, tempPrefix) {
		return true
	}
	for _, p := range foreignTempPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
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
func writeAtomic(dir, name string, fill func(w io.Writer) error) (err error) {
	if err := checkFileName(name); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, tempPrefix+name+"-*")
	if err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	// CreateTemp makes 0600 files; the run's files are meant to be read by
	// people and the official tools as well (the data directory is 0700).
	if err = f.Chmod(0o644); err != nil {
		return fmt.Errorf("chmod %s: %w", name, err)
	}
	if err = fill(f); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", name, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", name, err)
	}
	if err = os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("rename %s: %w", name, err)
	}
	return syncDir(dir)
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

// syncDir makes the renames and creations in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open dir: %w", err)
	}
	err = d.Sync()
	// Some file systems refuse fsync on a directory; their renames are then
	// as durable as they make them and there is nothing more to do.
	if errors.Is(err, os.ErrInvalid) {
		err = nil
	}
	if cerr := d.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("fsync dir %s: %w", dir, err)
	}
	return nil
}
