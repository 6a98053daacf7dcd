// Command testreport runs `go test -json ...`, prints its output as plain
// `go test` would (each package's ok/FAIL line, a failing test's output,
// passing and skipped tests' output left out), and ends with the list of the
// tests that were skipped and why: a test that skips because a program is
// missing still leaves its package `ok`, and the list is where that shows.
// It exits with the command's status.
//
//	testreport [-skips FILE] [-list] -- go test -json [flags] [packages]
//
// With -skips the run's skips are appended to FILE, and the list printed is
// FILE's whole content, so several runs (two modules) end with one list;
// -list prints it even when the run passed (it is always printed on failure).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

func main() {
	skips := flag.String("skips", "", "append the run's skips to this `file` and list the file's content")
	list := flag.Bool("list", false, "list the skips even when the run passed")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: testreport [-skips FILE] [-list] -- go test -json [flags] [packages]")
		os.Exit(2)
	}
	os.Exit(run(flag.Args(), *skips, *list, os.Stdout))
}

// run runs args, reporting to w, and returns the exit status.
func run(args []string, skipsFile string, list bool, w io.Writer) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		return 2
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		return 2
	}
	r := newReport(w)
	r.read(out)
	code := exitCode(cmd.Wait())
	if code == 0 && r.failed {
		code = 1
	}
	skipped, err := record(skipsFile, r.skips)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		if code == 0 {
			code = 2
		}
	}
	if list || code != 0 {
		printSkips(w, skipped)
	}
	return code
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() > 0 {
		return ee.ExitCode()
	}
	fmt.Fprintln(os.Stderr, "testreport:", err)
	return 2
}

// record appends skips to file (when named) and returns the file's lines,
// or skips alone without a file.
func record(file string, skips []string) ([]string, error) {
	if file == "" {
		return skips, nil
	}
	f, err := os.OpenFile(file, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return skips, err
	}
	for _, s := range skips {
		fmt.Fprintln(f, s)
	}
	if err := f.Close(); err != nil {
		return skips, err
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return skips, err
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"), nil
}

func printSkips(w io.Writer, skips []string) {
	if len(skips) == 0 || len(skips) == 1 && skips[0] == "" {
		fmt.Fprintln(w, "\nskipped tests: none")
		return
	}
	fmt.Fprintf(w, "\nskipped tests (%d): a skip leaves its package ok; CI=true fails those skipped for a missing program\n", len(skips))
	for _, s := range skips {
		fmt.Fprintln(w, "  "+s)
	}
}
