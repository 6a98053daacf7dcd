package runspec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/api"
)

func TestResolveData(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	npy := func(dir, name string) {
		// A minimal valid .npy: version 1.0, one float32.
		hdr := "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }"
		total := (10 + len(hdr) + 1 + 63) / 64 * 64 // magic, version, length, header: a multiple of 64
		hdr += strings.Repeat(" ", total-10-len(hdr)-1) + "\n"
		b := append([]byte("\x93NUMPY\x01\x00"), byte(len(hdr)), 0)
		b = append(append(b, hdr...), 0, 0, 0, 0)
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	npy(root, "in.npy")
	npy(outside, "secret.npy")
	if err := os.Symlink(filepath.Join(outside, "secret.npy"), filepath.Join(root, "link.npy")); err != nil {
		t.Fatal(err)
	}
	realRoot, _ := filepath.EvalSymlinks(root)
	cases := []struct {
		root, data string
		want       string // resolved path, or "" for a refusal
		mention    string
	}{
		{root, "in.npy", filepath.Join(realRoot, "in.npy"), ""},
		{root, filepath.Join(root, "in.npy"), filepath.Join(realRoot, "in.npy"), ""},
		{"", "in.npy", "", "LOADGEND_DATA_ROOT"},
		{root, "../" + filepath.Base(outside) + "/secret.npy", "", "outside"},
		{root, filepath.Join(outside, "secret.npy"), "", "outside"},
		{root, "link.npy", "", "outside"},
		{root, "missing.npy", "", "no such file"},
	}
	for _, tc := range cases {
		got, err := ResolveData(tc.root, tc.data)
		if tc.want != "" {
			if err != nil || got != tc.want {
				t.Errorf("ResolveData(%q) = %q, %v; want %q", tc.data, got, err, tc.want)
			}
			continue
		}
		var fe *api.FieldError
		if !errors.As(err, &fe) || fe.Field != "data" || !strings.Contains(fe.Message, tc.mention) {
			t.Errorf("ResolveData(%q) = %q, %v; want a data error mentioning %q", tc.data, got, err, tc.mention)
		}
	}
}
