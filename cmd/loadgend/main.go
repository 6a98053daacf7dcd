// Command loadgend is netloadgen's daemon and command-line front end. Each
// subcommand only parses its flags and calls into the packages that do the
// work.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/netloadgen/netloadgen/internal/suggest"
	"github.com/netloadgen/netloadgen/pkg/version"
)

// command runs one subcommand with its arguments and returns the exit status.
type command func(args []string, stdout, stderr io.Writer) int

// commands maps subcommand names (os.Args[1]) to their entry points.
var commands = map[string]command{
	"schedule":   scheduleCommand,
	"run":        runCommand,
	"serve":      serveCommand,
	"accuracy":   accuracyCommand,
	"compliance": complianceCommand,
	"report":     reportCommand,
	"rejudge":    rejudgeCommand,
	"worker":     workerCommand,
}

// summaries is each command's line in `loadgend help`.
var summaries = map[string]string{
	"run":        "one run (or --mode find-peak, accuracy) against a KServe v2 endpoint; exit 0 VALID, 1 INVALID, 2 error",
	"serve":      "the daemon: the control API on LOADGEND_LISTEN, configured by LOADGEND_* variables (the default command)",
	"compliance": "an MLPerf compliance test (TEST01, TEST04, TEST05, caching): its pair of runs and the verdict",
	"accuracy":   "score an accuracy log against a labels file (top-1)",
	"report":     "one self-contained HTML page of run directories: spectrum, time series, failures, trials, runs overlaid",
	"schedule":   "print the trace LoadGen would issue for the given settings",
	"worker":     "a worker: registers with a loadgend daemon (--coordinator URL) and carries shards of its distributed runs",
	"rejudge":    "the LoadGen logs a run's samples.txt would give under other settings (e.g. --tpot-latency-ms 40), without running again",
}

const helpExamples = `
examples:
  loadgend run --target http://127.0.0.1:8000 --model identity --scenario Server --target-qps 100
  loadgend run --target grpc://127.0.0.1:8001 --model identity --scenario Offline --out ./logs
  loadgend report ./runs/before ./runs/after -o report.html
  LOADGEND_LISTEN=127.0.0.1:8080 loadgend serve

Run "loadgend <command> --help" for a command's flags.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches on the first argument; exit status 2 is a usage error.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		// The container's entry point: the daemon.
		return serveCommand(nil, stdout, stderr)
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			if cmd, ok := commands[args[1]]; ok {
				return cmd([]string{"--help"}, stdout, stderr)
			}
		}
		printHelp(stdout)
		return exitValid
	case "version", "-version", "--version":
		fmt.Fprintln(stdout, "loadgend", version.String())
		return exitValid
	}
	cmd, ok := commands[args[0]]
	if !ok {
		hint := "run \"loadgend help\" for the commands"
		if near := suggest.Nearest(args[0], commandNames()); near != "" {
			hint = "did you mean " + near + "? (" + hint + ")"
		}
		fmt.Fprintf(stderr, "loadgend: unknown command %q: %s\n", args[0], hint)
		return exitError
	}
	return cmd(args[1:], stdout, stderr)
}

func commandNames() []string {
	names := make([]string, 0, len(commands)+2)
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return append(names, "help", "version")
}

func printHelp(w io.Writer) {
	var b strings.Builder
	b.WriteString("usage: loadgend <command> [flags]   (no command: serve)\n\ncommands:\n")
	for _, n := range commandNames() {
		s := summaries[n]
		switch n {
		case "help":
			s = "this list; \"loadgend help <command>\" for a command's flags"
		case "version":
			s = "print the version (also --version)"
		}
		fmt.Fprintf(&b, "  %-11s %s\n", n, s)
	}
	b.WriteString(helpExamples)
	io.WriteString(w, b.String())
}
