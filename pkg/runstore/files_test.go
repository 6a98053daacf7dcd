package runstore

import (
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestOpenFile(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir)
	r := mustCreate(t, s, `{}`)
	mustSet(t, s, r.ID, Running)
	if err := s.WriteFile(r.ID, ResultFile, []byte(`{"valid":true}`)); err != nil {
		t.Fatal(err)
	}
	// Something a name must never reach: a file beside the run directory.
	secret := filepath.Join(dir, "runs", "secret")
	if err := os.WriteFile(secret, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	runDir := s.Dir(r.ID)
	cases := []struct {
		id, name string
		want     error
		content  string
	}{
		{id: r.ID, name: ResultFile, content: `{"valid":true}`},
		{id: r.ID, name: SummaryFile, want: fs.ErrNotExist},
		{id: r.ID, name: "../secret", want: ErrFileName},
		{id: r.ID, name: "../x", want: ErrFileName},
		{id: r.ID, name: "result.json/../../x", want: ErrFileName},
		{id: r.ID, name: "result.json/../../secret", want: ErrFileName},
		{id: r.ID, name: "./result.json", want: ErrFileName},
		{id: r.ID, name: "/etc/passwd", want: ErrFileName},
		{id: r.ID, name: filepath.Join(runDir, ResultFile), want: ErrFileName},
		{id: r.ID, name: RecordFile, want: ErrFileName},
		{id: r.ID, name: "RESULT.JSON", want: ErrFileName},
		{id: r.ID, name: "result.json\x00", want: ErrFileName},
		{id: r.ID, name: "", want: ErrFileName},
		{id: r.ID, name: ".", want: ErrFileName},
		{id: r.ID, name: "..", want: ErrFileName},
		{id: r.ID, name: "unknown.txt", want: ErrFileName},
		{id: "../runs/" + r.ID, name: ResultFile, want: ErrNotFound},
		{id: "..", name: ResultFile, want: ErrNotFound},
		{id: "20260101T000000.000000Z-00000000", name: ResultFile, want: ErrNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := s.OpenFile(c.id, c.name)
			if c.want != nil {
				if !errors.Is(err, c.want) {
					t.Fatalf("OpenFile(%q, %q): %v, want %v", c.id, c.name, err, c.want)
				}
				if f != nil {
					t.Fatal("a file with the error")
				}
				return
			}
			if err != nil {
				t.Fatalf("OpenFile: %v", err)
			}
			defer f.Close()
			b, _ := io.ReadAll(f)
			if string(b) != c.content {
				t.Fatalf("read %q, want %q", b, c.content)
			}
		})
	}
}

func TestOpenFileRefusesSymlinkOut(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir)
	r := mustCreate(t, s, `{}`)
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.WriteFile(outside, []byte("outside"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(s.Dir(r.ID), HlogFile)); err != nil {
		t.Skipf("symlink: %v", err)
	}
	if f, err := s.OpenFile(r.ID, HlogFile); err == nil {
		f.Close()
		t.Fatal("OpenFile followed a symbolic link out of the run directory")
	}
	if names, _ := s.Files(r.ID); slices.Contains(names, HlogFile) {
		t.Errorf("Files lists a symbolic link: %v", names)
	}
}

func TestWriteFile(t *testing.T) {
	s := openTest(t, t.TempDir())
	r := mustCreate(t, s, `{}`)
	if err := s.WriteFile(r.ID, ProgressFile, []byte(`{"issued":0}`)); err != nil {
		t.Fatalf("write while queued: %v", err)
	}
	mustSet(t, s, r.ID, Running)
	for _, name := range []string{ProgressFile, ResultFile, HlogFile} {
		if err := s.WriteFile(r.ID, name, []byte(name)); err != nil {
			t.Fatalf("WriteFile(%s): %v", name, err)
		}
	}
	for _, name := range []string{RecordFile, "../x", "notes.txt", tempPrefix + "x"} {
		if err := s.WriteFile(r.ID, name, []byte("x")); !errors.Is(err, ErrFileName) {
			t.Errorf("WriteFile(%q): %v, want ErrFileName", name, err)
		}
	}
	if err := s.WriteFile("nope", ProgressFile, nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown run: %v, want ErrNotFound", err)
	}
	got, err := s.Files(r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{ResultFile, HlogFile, ProgressFile}; !slices.Equal(got, want) {
		t.Errorf("Files = %v, want %v", got, want)
	}
	mustSet(t, s, r.ID, Done)
	before := hashTree(t, s.Dir(r.ID))
	for _, name := range FileNames() {
		if err := s.WriteFile(r.ID, name, []byte("rewritten")); !errors.Is(err, ErrFinished) {
			t.Errorf("WriteFile(%s) of a done run: %v, want ErrFinished", name, err)
		}
	}
	after := hashTree(t, s.Dir(r.ID))
	if !maps.Equal(before, after) {
		t.Errorf("a finished run's files changed: %v -> %v", before, after)
	}
}

// Only regular files inside the run's own directory are served: a run
// directory, trial directory or file that is a symbolic link is not
// followed, wherever it points, and reads as absent (fs.ErrNotExist, the
// API's 404), not as an error (issue 17 #11).
func TestOpenFileRefusesEverySymlink(t *testing.T) {
	const trial = "trial-001"
	outside := t.TempDir()
	for _, n := range []string{ResultFile, HlogFile} {
		if err := os.WriteFile(filepath.Join(outside, n), []byte("outside"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name string
		sub  string // OpenFileIn's subdirectory
		// plant replaces part of run directory dir with a symbolic link;
		// other is another run's directory.
		plant func(t *testing.T, dir, other string)
	}{
		{"run dir links outside", "", func(t *testing.T, dir, other string) { relink(t, outside, dir) }},
		{"run dir links to another run", "", func(t *testing.T, dir, other string) { relink(t, other, dir) }},
		{"run dir links relatively", "", func(t *testing.T, dir, other string) { relink(t, filepath.Base(other), dir) }},
		{"file links outside", "", func(t *testing.T, dir, other string) {
			relink(t, filepath.Join(outside, ResultFile), filepath.Join(dir, ResultFile))
		}},
		{"file links inside", "", func(t *testing.T, dir, other string) {
			relink(t, RecordFile, filepath.Join(dir, ResultFile))
		}},
		{"trial dir links outside", trial, func(t *testing.T, dir, other string) { relink(t, outside, filepath.Join(dir, trial)) }},
		{"trial dir links to another run's", trial, func(t *testing.T, dir, other string) {
			relink(t, filepath.Join(other, trial), filepath.Join(dir, trial))
		}},
		{"trial file links outside", trial, func(t *testing.T, dir, other string) {
			relink(t, filepath.Join(outside, ResultFile), filepath.Join(dir, trial, ResultFile))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := openTest(t, t.TempDir())
			other := mustCreate(t, s, `{}`)
			r := mustCreate(t, s, `{}`)
			for _, id := range []string{other.ID, r.ID} {
				if err := os.MkdirAll(filepath.Join(s.Dir(id), trial), 0o700); err != nil {
					t.Fatal(err)
				}
				for _, d := range []string{s.Dir(id), filepath.Join(s.Dir(id), trial)} {
					for _, n := range []string{ResultFile, HlogFile} {
						if err := os.WriteFile(filepath.Join(d, n), []byte("run "+id), 0o600); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			c.plant(t, s.Dir(r.ID), s.Dir(other.ID))
			f, err := s.OpenFileIn(r.ID, c.sub, ResultFile)
			if err == nil {
				b, _ := io.ReadAll(f)
				f.Close()
				t.Fatalf("OpenFileIn(%q, %s) served %q through a symbolic link", c.sub, ResultFile, b)
			}
			if !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("OpenFileIn(%q, %s): %v, want fs.ErrNotExist", c.sub, ResultFile, err)
			}
			if c.sub == "" {
				if names, err := s.Files(r.ID); err != nil || slices.Contains(names, ResultFile) {
					t.Errorf("Files = %v, %v: lists a file through a symbolic link", names, err)
				}
			}
		})
	}
}

// relink replaces path (a file or a directory) with a symbolic link to to.
func relink(t *testing.T, to, path string) {
	t.Helper()
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(to, path); err != nil {
		t.Skipf("symlink: %v", err)
	}
}
