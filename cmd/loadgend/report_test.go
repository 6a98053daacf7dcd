package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const reportTestdata = "../../pkg/report/testdata"

// TestReportCommand: loadgend report writes one page of the runs given,
// with -o before, between or after them, each run named by its directory
// (its path where two share a name).
func TestReportCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.html")
	a, b := filepath.Join(reportTestdata, "server500"), filepath.Join(reportTestdata, "server1500")
	for _, args := range [][]string{
		{"report", a, b, "-o", out},
		{"report", "-o", out, a, b},
		{"report", a, "-o", out, b},
		{"report", a, "--title", "compare", "--out", out, "--", b},
	} {
		inv := mainArgs(args...)
		if inv.code != 0 || !strings.Contains(inv.stdout, "report: "+out+" (2 runs)") {
			t.Fatalf("%q: %v", args, inv)
		}
		page, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"server500", "server1500"} {
			if !strings.Contains(string(page), `<li data-run="`+name+`">`) {
				t.Errorf("%q: %s not in the legend", args, name)
			}
		}
		os.Remove(out)
	}
	// Two directories of the same name: each named by its path.
	x, y := filepath.Join(t.TempDir(), "run"), filepath.Join(t.TempDir(), "run")
	for _, d := range []string{x, y} {
		os.Mkdir(d, 0o755)
		copyFile(t, filepath.Join(a, "result.json"), filepath.Join(d, "result.json"))
	}
	if inv := mainArgs("report", x, y, "-o", out); inv.code != 0 {
		t.Fatal(inv)
	}
	page, _ := os.ReadFile(out)
	for _, d := range []string{x, y} {
		if !strings.Contains(string(page), `<li data-run="`+d+`">`) {
			t.Errorf("%s not in the legend", d)
		}
	}
}

// TestReportCommandErrors: bad input exits 2 with one line naming the
// directory and the file, and writes nothing.
func TestReportCommandErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	corrupt := filepath.Join(dir, "corrupt")
	os.Mkdir(empty, 0o755)
	os.Mkdir(corrupt, 0o755)
	os.WriteFile(filepath.Join(corrupt, "result.json"), []byte(`{"scenario":`), 0o644)
	out := filepath.Join(dir, "r.html")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "-o", out}, "no run directory given"},
		{[]string{"report", empty, "-o", out}, empty + ": not a run directory: it has no result.json or search.json"},
		{[]string{"report", corrupt, "-o", out}, corrupt + ": result.json: "},
		{[]string{"report", filepath.Join(dir, "missing"), "-o", out}, filepath.Join(dir, "missing") + ": not a run directory"},
		{[]string{"report", filepath.Join(reportTestdata, "server500"), "-o", filepath.Join(dir, "no", "such", "r.html")}, "-o " + filepath.Join(dir, "no", "such", "r.html")},
		{[]string{"report", "--titel", "x"}, "did you mean --title?"},
	} {
		inv := mainArgs(c.args...)
		if inv.code != exitError || !strings.Contains(inv.stderr, c.want) || strings.Count(inv.stderr, "\n") != 1 {
			t.Errorf("%q: want exit 2 and one line with %q: %v", c.args, c.want, inv)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a report was written")
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
