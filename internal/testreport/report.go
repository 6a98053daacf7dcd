package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string
}

// report turns the events back into plain `go test` output, keeping each
// test's output until it is known to have failed, and gathers the skips.
type report struct {
	w       io.Writer
	pending map[string][]string // package + "\x00" + test -> output lines
	skips   []string            // "package TestName: reason"
	failed  bool
}

func newReport(w io.Writer) *report {
	return &report{w: w, pending: map[string][]string{}}
}

func (r *report) read(in io.Reader) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintln(r.w, string(line)) // not an event: as it came
			continue
		}
		r.event(e)
	}
}

func (r *report) event(e event) {
	key := e.Package + "\x00" + e.Test
	switch {
	case e.Action == "build-output":
		fmt.Fprint(r.w, e.Output)
	case e.Action == "build-fail":
		r.failed = true
	case e.Action == "output" && e.Test == "":
		r.packageOutput(e.Output)
	case e.Action == "output":
		r.pending[key] = append(r.pending[key], e.Output)
	case e.Action == "skip" && e.Test != "":
		r.skips = append(r.skips, fmt.Sprintf("%s %s: %s", e.Package, e.Test, skipReason(r.pending[key])))
		delete(r.pending, key)
	case e.Action == "pass" && e.Test != "":
		delete(r.pending, key)
	case e.Action == "fail" && e.Test != "":
		r.failed = true
		r.flush(key)
	case e.Action == "fail":
		r.failed = true
		r.flushPackage(e.Package) // a panic or timeout: what the tests said
	}
}

// packageOutput prints a package's own lines except the verbose-only ones.
func (r *report) packageOutput(s string) {
	if s == "PASS\n" || strings.HasPrefix(s, "=== ") {
		return
	}
	fmt.Fprint(r.w, s)
}

func (r *report) flush(key string) {
	for _, s := range r.pending[key] {
		if !strings.HasPrefix(s, "=== ") {
			fmt.Fprint(r.w, s)
		}
	}
	delete(r.pending, key)
}

func (r *report) flushPackage(pkg string) {
	for key := range r.pending {
		if strings.HasPrefix(key, pkg+"\x00") {
			r.flush(key)
		}
	}
}

// skipReason is what the test said (t.Skip's message, "file_test.go:34:
// reason", after anything it logged before), on one line.
func skipReason(lines []string) string {
	var said []string
	for _, s := range lines {
		t := strings.TrimSpace(s)
		if t != "" && !strings.HasPrefix(t, "=== ") && !strings.HasPrefix(t, "--- ") {
			said = append(said, t)
		}
	}
	if len(said) == 0 {
		return "(no reason given)"
	}
	return strings.Join(said, " / ")
}
