package secret

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestResolveLiteralAndEnv(t *testing.T) {
	src := Sources{Env: env(map[string]string{"TOKEN": "Bearer s3cr3t", "OTHER": "x"})}
	for _, c := range []struct{ in, want string }{
		{"plain", "plain"},
		{"", ""},
		{"@env:TOKEN", "Bearer s3cr3t"},
		{"@environment", "@environment"}, // not the prefix: a literal
	} {
		got, err := Resolve(c.in, src)
		if err != nil || got != c.want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	allowed := src
	allowed.AllowedEnv = []string{"TOKEN", "UNSET"}
	if got, err := Resolve("@env:TOKEN", allowed); err != nil || got != "Bearer s3cr3t" {
		t.Errorf("allowed: %q, %v", got, err)
	}
	for _, c := range []struct {
		in   string
		src  Sources
		want []string
	}{
		{"@env:OTHER", allowed, []string{"@env:OTHER", "LOADGEND_SECRET_ENV", "OTHER"}},
		{"@env:UNSET", allowed, []string{"@env:UNSET", "LOADGEND_SECRET_ENV", "not set"}},
		{"@env:NOPE", src, []string{"@env:NOPE", "not set"}},
		{"@env:", src, []string{"no variable"}},
		{"@env:TOKEN", Sources{}, []string{"not accepted"}},
	} {
		_, err := Resolve(c.in, c.src)
		if !errors.Is(err, ErrRef) {
			t.Fatalf("Resolve(%q) = %v, want ErrRef", c.in, err)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Resolve(%q): %v does not say %q", c.in, err, w)
			}
		}
		if strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("Resolve(%q): error shows the value: %v", c.in, err)
		}
	}
}

func TestResolveFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tok := write("token", "abc\n")
	write("crlf", "abc\r\n")
	write("two", "abc\n\n")
	write("sub/key", "k")
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.WriteFile(outside, []byte("OUTSIDE-SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	// Relative, as Kubernetes mounts a secret's files (..data/token).
	if err := os.Symlink("sub/key", filepath.Join(dir, "inside")); err != nil {
		t.Fatal(err)
	}
	under := Sources{FilesDir: dir}
	for _, c := range []struct {
		in   string
		src  Sources
		want string
	}{
		{"@file:" + tok, Sources{}, "abc"},
		{"@file:token", under, "abc"},
		{"@file:" + tok, under, "abc"},
		{"@file:crlf", under, "abc"},
		{"@file:two", under, "abc\n"},
		{"@file:sub/key", under, "k"},
		{"@file:inside", under, "k"},
		{"@file:" + outside, Sources{}, "OUTSIDE-SECRET"}, // the CLI reads any file
	} {
		got, err := Resolve(c.in, c.src)
		if err != nil || got != c.want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"@file:" + outside, "@file:../x", "@file:sub/../token", "@file:escape", "@file:missing", "@file:sub", "@file:"} {
		got, err := Resolve(in, under)
		if !errors.Is(err, ErrRef) || !strings.Contains(err.Error(), in) {
			t.Errorf("Resolve(%q) = %q, %v; want an ErrRef naming it", in, got, err)
		}
		if err != nil && strings.Contains(err.Error(), "OUTSIDE-SECRET") {
			t.Errorf("Resolve(%q): error shows the value", in)
		}
	}
	if _, err := Resolve("@file:escape", under); err == nil || !strings.Contains(err.Error(), "outside LOADGEND_SECRETS_DIR") {
		t.Errorf("escaping symlink: %v", err)
	}
}

func TestShown(t *testing.T) {
	for in, want := range map[string]string{"Bearer x": Redacted, "@env:T": "@env:T", "@file:/a": "@file:/a", "": Redacted} {
		if got := Shown(in); got != want {
			t.Errorf("Shown(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzResolveFileUnder: whatever path a caller writes, a file read under
// FilesDir is one inside it, and a refusal never shows a file's contents.
func FuzzResolveFileUnder(f *testing.F) {
	for _, s := range []string{"token", "../outside", "/etc/passwd", "sub/../../outside", "./token", "escape", "sub//key", "", ".", "/"} {
		f.Add(s)
	}
	root := f.TempDir()
	dir := filepath.Join(root, "secrets")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte("inside"), 0o600); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "key"), []byte("inside"), 0o600); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "outside"), []byte("OUTSIDE"), 0o600); err != nil {
		f.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "outside"), filepath.Join(dir, "escape")); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, path string) {
		for _, p := range []string{path, filepath.Join(dir, path), filepath.Join(root, path)} {
			got, err := Resolve("@file:"+p, Sources{FilesDir: dir})
			if err == nil && got != "inside" {
				t.Fatalf("@file:%s read %q: not a file under the directory", p, got)
			}
			if err != nil && (!errors.Is(err, ErrRef) || strings.Contains(err.Error(), "OUTSIDE")) {
				t.Fatalf("@file:%s: %v", p, err)
			}
		}
	})
}
