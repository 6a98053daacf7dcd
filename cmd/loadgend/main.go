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
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches on the first argument; exit status 2 is a usage error.
func run(args []string, stdout, stderr io.Writer) int {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	usage := "usage: loadgend <command> [flags] (commands: " + strings.Join(names, ", ") + ")"
	if len(args) == 0 {
		// The container's entry point: the daemon.
		return serveCommand(nil, stdout, stderr)
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "loadgend: unknown command %q; %s\n", args[0], usage)
		return 2
	}
	return cmd(args[1:], stdout, stderr)
}
