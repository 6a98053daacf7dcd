package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// A write that fails part-way, or whose rename fails, leaves the directory
// as it was (the previous file included) and no temporary file; one that
// succeeds replaces the file whole.
func TestWrite(t *testing.T) {
	errFill := errors.New("fill failed")
	newContent := func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }
	cases := []struct {
		name string
		// blocked puts a non-empty directory where the file goes:
		// rename(2) cannot put a file over it.
		blocked bool
		fill    func(w io.Writer) error
		wantErr bool
		want    string
	}{
		{name: "success replaces", fill: newContent, want: "new"},
		{name: "failure keeps the old file", fill: func(w io.Writer) error {
			if _, err := io.WriteString(w, "partial"); err != nil {
				return err
			}
			return errFill
		}, wantErr: true, want: "old"},
		{name: "rename failure keeps the directory", blocked: true, fill: newContent, wantErr: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f.txt")
			if c.blocked {
				if err := os.MkdirAll(filepath.Join(path, "sub"), 0o700); err != nil {
					t.Fatal(err)
				}
			} else if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			err := Write(dir, "f.txt", c.fill)
			if (err != nil) != c.wantErr {
				t.Fatalf("Write: %v, want an error: %v", err, c.wantErr)
			}
			if c.wantErr && !c.blocked && !errors.Is(err, errFill) {
				t.Errorf("Write: %v, want it to wrap %v", err, errFill)
			}
			if tmp := tempFiles(t, dir); len(tmp) != 0 {
				t.Errorf("temporary files left: %v", tmp)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("dir holds %d entries, want only f.txt", len(ents))
			}
			if c.blocked {
				if fi, err := os.Stat(filepath.Join(path, "sub")); err != nil || !fi.IsDir() {
					t.Errorf("the directory in the way changed: %v", err)
				}
				return
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != c.want {
				t.Errorf("file holds %q (%v), want %q", got, err, c.want)
			}
			if fi, err := os.Stat(path); err == nil && fi.Mode().Perm() != 0o644 && !c.wantErr {
				t.Errorf("mode %v, want 0644", fi.Mode().Perm())
			}
		})
	}
}

// WriteFile replaces the file whole each time, shorter content included,
// leaves no temporary file, and the file is readable by others (0644).
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	for i, content := range []string{"first version, long enough to be truncated", "second", ""} {
		if err := WriteFile(dir, "progress.json", []byte(content)); err != nil {
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
	if err := WriteFile(filepath.Join(dir, "missing"), "f", []byte("x")); err == nil {
		t.Error("write into a missing directory succeeded")
	}
}

// tempFiles returns Write's temporary files in dir, the only place Write
// creates them.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if IsTemp(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}
