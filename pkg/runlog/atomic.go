package runlog

import (
	"fmt"
	"io"
	"os"

	"github.com/netloadgen/netloadgen/pkg/atomicfile"
)

// writeFileAtomic writes dir/name through fill atomically; the directory is
// fsynced by the caller once every file is in place (one fsync instead of
// one per file).
func writeFileAtomic(dir, name string, fill func(w io.Writer) error) error {
	return atomicfile.Write(dir, name, fill)
}

func syncDir(dir string) error { return atomicfile.SyncDir(dir) }

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
