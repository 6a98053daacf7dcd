package runstore

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/atomicfile"
)

func TestWriteAtomicKeepsOldFileOnFailure(t *testing.T) {
	errDisk := errors.New("disk full")
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string) // makes the write fail
		fill  func(w io.Writer) error
	}{
		{
			name: "content fails midway",
			fill: func(w io.Writer) error {
				if _, err := w.Write([]byte(`{"issued": 1`)); err != nil {
					return err
				}
				return errDisk
			},
		},
		{
			name: "rename fails",
			// A directory in the way of a temporary file's rename.
			setup: func(t *testing.T, dir string) {
				if err := os.Mkdir(filepath.Join(dir, "f.json", "sub"), 0o700); err != nil {
					t.Fatal(err)
				}
			},
			fill: func(w io.Writer) error { _, err := w.Write([]byte("new")); return err },
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			target := filepath.Join(dir, "f.json")
			old := []byte(`{"issued": 0}`)
			if c.setup != nil {
				// The rename case replaces the file by a non-empty
				// directory: rename(2) cannot put a file over it.
				if err := os.Mkdir(target, 0o700); err != nil {
					t.Fatal(err)
				}
				c.setup(t, dir)
			} else if err := WriteFileAtomic(dir, "f.json", old); err != nil {
				t.Fatal(err)
			}
			before := hashTree(t, dir)
			if err := writeAtomic(dir, "f.json", c.fill); err == nil {
				t.Fatal("write succeeded, want an error")
			}
			if tmp := tempFiles(t, dir); len(tmp) != 0 {
				t.Errorf("temporary files left: %v", tmp)
			}
			after := hashTree(t, dir)
			if len(after) != len(before) {
				t.Fatalf("files %v, want %v", after, before)
			}
			for k, v := range before {
				if after[k] != v {
					t.Errorf("%s changed by a failed write", k)
				}
			}
			if c.setup == nil {
				b, _ := os.ReadFile(target)
				if !bytes.Equal(b, old) {
					t.Errorf("file %q after a failed write, want the old %q", b, old)
				}
			}
		})
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	for i, content := range []string{"first version, long enough to be truncated", "second", ""} {
		if err := WriteFileAtomic(dir, "progress.json", []byte(content)); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "progress.json"))
		if err != nil || string(b) != content {
			t.Fatalf("write %d: read %q, %v; want %q", i, b, err, content)
		}
		if tmp := tempFiles(t, dir); len(tmp) != 0 {
			t.Fatalf("temporary files left after success: %v", tmp)
		}
	}
	fi, err := os.Stat(filepath.Join(dir, "progress.json"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
}

func TestWriteFileAtomicRefusesNames(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"", ".", "..", "../x", "a/b", `a\b`, "/abs", "x\x00y", tempPrefix + "x", atomicfile.TempPrefix + "x"} {
		if err := WriteFileAtomic(dir, name, []byte("x")); !errors.Is(err, ErrFileName) {
			t.Errorf("WriteFileAtomic(%q): %v, want ErrFileName", name, err)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 0 {
		t.Errorf("refused writes left %d entries", len(ents))
	}
	if err := WriteFileAtomic(filepath.Join(dir, "missing"), "f", []byte("x")); err == nil {
		t.Error("write into a missing directory succeeded")
	}
}
