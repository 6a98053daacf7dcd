package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// A write that fails part-way leaves the previous file as it was and no
// temporary file; one that succeeds replaces it whole.
func TestWrite(t *testing.T) {
	errFill := errors.New("fill failed")
	cases := []struct {
		name    string
		fill    func(w io.Writer) error
		wantErr error
		want    string
	}{
		{"success replaces", func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }, nil, "new"},
		{"failure keeps the old file", func(w io.Writer) error {
			if _, err := io.WriteString(w, "partial"); err != nil {
				return err
			}
			return errFill
		}, errFill, "old"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f.txt")
			if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			err := Write(dir, "f.txt", c.fill)
			if !errors.Is(err, c.wantErr) {
				t.Fatalf("Write: %v, want %v", err, c.wantErr)
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != c.want {
				t.Errorf("file holds %q (%v), want %q", got, err, c.want)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 1 {
				t.Errorf("dir holds %d entries, want only f.txt", len(entries))
			}
			if fi, err := os.Stat(path); err == nil && fi.Mode().Perm() != 0o644 && c.wantErr == nil {
				t.Errorf("mode %v, want 0644", fi.Mode().Perm())
			}
		})
	}
}
