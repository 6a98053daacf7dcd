// Package atomicfile writes files so that a reader, or the file system after
// a crash, sees either the previous file or the complete new one: a
// temporary file in the same directory, fsynced, renamed over the name, and
// the directory fsynced so the rename itself survives a crash.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// TempPrefix starts the name of every temporary file Write creates: a crash
// leaves files recognisably ours, never mistaken for real ones (the run
// store removes them at start-up).
const TempPrefix = ".atomic-tmp-"

// IsTemp reports whether a file name is one of Write's temporary files.
func IsTemp(name string) bool { return strings.HasPrefix(name, TempPrefix) }

// Write writes dir/name through fill, mode 0644 (meant to be read by people
// and tools, not only this process's user). It does not fsync dir: a caller
// writing several files syncs it once with SyncDir.
func Write(dir, name string, fill func(w io.Writer) error) (err error) {
	f, err := os.CreateTemp(dir, TempPrefix+name+"-*")
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
	if err = f.Chmod(0o644); err != nil {
		return fmt.Errorf("chmod %s: %w", name, err)
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	if err = fill(bw); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err = bw.Flush(); err != nil {
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
	return nil
}

// WriteFile writes data to dir/name as Write does, then fsyncs dir: for a
// caller writing a single file.
func WriteFile(dir, name string, data []byte) error {
	if err := Write(dir, name, func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
		return err
	}
	return SyncDir(dir)
}

// SyncDir makes the renames and creations in dir durable: without it a crash
// can lose a rename even though the file's data was synced.
func SyncDir(dir string) error {
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
