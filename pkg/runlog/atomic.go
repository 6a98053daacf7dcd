package runlog

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// tempPrefix starts the name of every temporary file Write creates, so a
// crash leaves files that are recognisably ours and never mistaken for logs.
const tempPrefix = ".runlog-tmp-"

// writeFileAtomic writes dir/name through fill: a temporary file in dir,
// flushed and fsynced, then renamed over name. Readers see the old file or
// the complete new one, never a torn write; a crash before the rename leaves
// only the temporary file. The directory itself is fsynced by the caller once
// every file is in place (one fsync instead of one per file).
func writeFileAtomic(dir, name string, fill func(w io.Writer) error) (err error) {
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
	// CreateTemp makes 0600 files; the logs are meant to be read by people
	// and the official tools, not only by this process's user.
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

// syncDir makes the renames in dir durable: without it a crash can lose a
// rename even though the file's data was synced.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open dir: %w", err)
	}
	err = d.Sync()
	// Some file systems refuse fsync on a directory; the renames are then
	// as durable as that file system makes them, and there is nothing more
	// to do.
	if errors.Is(err, os.ErrInvalid) {
		err = nil
	}
	if cerr := d.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("fsync dir: %w", err)
	}
	return nil
}

// copyFileAtomic copies src into dir/name atomically.
func copyFileAtomic(dir, name, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("open %s: %w", src, err)
	}
	defer in.Close()
	return writeFileAtomic(dir, name, func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	})
}
