package atomicfile

import (
	"errors"
	"io"
	"io/fs"
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
			before := tree(t, dir)
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
			if c.wantErr {
				after := tree(t, dir)
				if len(after) != len(before) {
					t.Fatalf("dir holds %v after a failed write, want %v", after, before)
				}
				for k, v := range before {
					if after[k] != v {
						t.Errorf("%s changed by a failed write", k)
					}
				}
			}
			if c.blocked {
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

// tree maps every path under dir to its content ("" for a directory).
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			out[p] = ""
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatalf("walk %s: %v", dir, err)
	}
	return out
}

// tempFiles returns Write's temporary files under dir.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && IsTemp(d.Name()) {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatalf("walk %s: %v", dir, err)
	}
	return out
}
