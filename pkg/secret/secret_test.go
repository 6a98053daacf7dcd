package secret

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResolveFile: @file: reads the file, one trailing newline trimmed;
// under a FilesDir only files that resolve under it, by name or by an
// absolute path inside it; "..", a path outside and a symbolic link out
// are refused naming the reference and never the contents.
func TestResolveFile(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	write := func(d, name, v string) string {
		p := filepath.Join(d, name)
		if err := os.WriteFile(p, []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write(dir, "key.pem", "in\n")
	outPath := write(outside, "other.pem", "s3cret\n")
	if err := os.Symlink(outPath, filepath.Join(dir, "link.pem")); err != nil {
		t.Fatal(err)
	}
	src := Sources{FilesDir: dir}
	for ref, want := range map[string]string{"@file:key.pem": "in", "@file:" + filepath.Join(dir, "key.pem"): "in", "literal": "literal"} {
		if got, err := Resolve(ref, src); err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", ref, got, err, want)
		}
	}
	if got, err := Resolve("@file:"+outPath, Sources{}); err != nil || got != "s3cret" {
		t.Errorf("any path (the CLI): %q, %v", got, err)
	}
	for _, ref := range []string{"@file:../" + filepath.Base(outside) + "/other.pem", "@file:" + outPath, "@file:link.pem", "@file:nosuch.pem", "@file:", "@env:X"} {
		_, err := Resolve(ref, src)
		if !errors.Is(err, ErrRef) || !strings.Contains(err.Error(), ref) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Resolve(%q): %v; want ErrRef naming it, not the value", ref, err)
		}
	}
	if !IsRef("@file:x") || !IsRef("@env:X") || IsRef("Bearer x") {
		t.Error("IsRef")
	}
}
