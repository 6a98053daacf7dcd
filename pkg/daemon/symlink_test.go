package daemon

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/runstore"
)

// A symbolic link in the data directory is never followed to serve a file:
// a linked run directory, trial directory or file answers 404, not the file
// it points to (200) nor 500 (issue 17 #11).
func TestSymlinksInTheDataDirAre404(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, runstore.ResultFile), []byte(`{"secret":true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	const trial = "trial-001"
	cases := []struct {
		name, path string // path under the run's URL
		link, to   func(dir, other string) string
	}{
		{"run dir to outside", "/files/result.json",
			func(dir, _ string) string { return dir }, func(string, string) string { return outside }},
		{"run dir to another run", "/files/result.json",
			func(dir, _ string) string { return dir }, func(_, other string) string { return other }},
		{"file to outside", "/files/result.json",
			func(dir, _ string) string { return filepath.Join(dir, runstore.ResultFile) },
			func(string, string) string { return filepath.Join(outside, runstore.ResultFile) }},
		{"file to another run's", "/files/result.json",
			func(dir, _ string) string { return filepath.Join(dir, runstore.ResultFile) },
			func(_, other string) string { return filepath.Join(other, runstore.ResultFile) }},
		{"trial dir to outside", "/trials/1/files/result.json",
			func(dir, _ string) string { return filepath.Join(dir, trial) }, func(string, string) string { return outside }},
		{"trial file to outside", "/trials/1/files/result.json",
			func(dir, _ string) string { return filepath.Join(dir, trial, runstore.ResultFile) },
			func(string, string) string { return filepath.Join(outside, runstore.ResultFile) }},
	}
	s, base := startDaemon(t, nil)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var dirs [2]string
			for i := range dirs {
				rec, err := s.store.Create(json.RawMessage(`{}`))
				if err != nil {
					t.Fatal(err)
				}
				dirs[i] = s.store.Dir(rec.ID)
				for _, d := range []string{dirs[i], filepath.Join(dirs[i], trial)} {
					if err := os.MkdirAll(d, 0o700); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(d, runstore.ResultFile), []byte(`{"run":true}`), 0o600); err != nil {
						t.Fatal(err)
					}
				}
			}
			id := filepath.Base(dirs[0])
			if code, b := do(t, "GET", base+"/v1/runs/"+id+c.path, ""); code != http.StatusOK {
				t.Fatalf("before the link: %d %s", code, b)
			}
			link := c.link(dirs[0], dirs[1])
			if err := os.RemoveAll(link); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(c.to(dirs[0], dirs[1]), link); err != nil {
				t.Skipf("symlink: %v", err)
			}
			if code, b := do(t, "GET", base+"/v1/runs/"+id+c.path, ""); code != http.StatusNotFound {
				t.Errorf("GET %s through a symbolic link: %d %s, want 404", c.path, code, b)
			}
		})
	}
}
