package main

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/daemon"
	"github.com/netloadgen/netloadgen/pkg/version"
)

func mainArgs(args ...string) invocation {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return invocation{code: code, stdout: out.String(), stderr: errb.String()}
}

// TestHelp: help in every spelling exits 0 and lists every command with
// an example.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}, {"-help"}} {
		inv := mainArgs(args...)
		if inv.code != 0 || inv.stderr != "" {
			t.Fatalf("%q: %v", args, inv)
		}
		for name := range commands {
			if !strings.Contains(inv.stdout, "\n  "+name+" ") {
				t.Errorf("%q: command %s not listed:\n%s", args, name, inv.stdout)
			}
		}
		for _, want := range []string{"help", "version", "example", "loadgend run --target http://"} {
			if !strings.Contains(strings.ToLower(inv.stdout), strings.ToLower(want)) {
				t.Errorf("%q: no %q in\n%s", args, want, inv.stdout)
			}
		}
	}
}

// TestCommandHelp: every command answers --help and -h with exit 0.
func TestCommandHelp(t *testing.T) {
	for name := range commands {
		for _, h := range []string{"--help", "-h"} {
			inv := mainArgs(name, h)
			if inv.code != 0 {
				t.Errorf("%s %s: %v", name, h, inv)
			}
			if !strings.Contains(inv.stdout+inv.stderr, "usage: loadgend "+name) {
				t.Errorf("%s %s: no usage line: %v", name, h, inv)
			}
		}
	}
}

func TestVersion(t *testing.T) {
	for _, a := range []string{"version", "--version", "-version"} {
		inv := mainArgs(a)
		if inv.code != 0 || inv.stdout != "loadgend "+version.String()+"\n" {
			t.Errorf("%s: %v", a, inv)
		}
	}
}

// TestServeHelpListsConfig: serve --help lists every LOADGEND_* variable
// of daemon.Config with its default.
func TestServeHelpListsConfig(t *testing.T) {
	inv := mainArgs("serve", "--help")
	if inv.code != 0 {
		t.Fatal(inv)
	}
	ct := reflect.TypeFor[daemon.Config]()
	for i := range ct.NumField() {
		f := ct.Field(i)
		name := "LOADGEND_" + f.Tag.Get("envconfig")
		if f.Tag.Get("envconfig") == "" || f.Tag.Get("desc") == "" {
			t.Errorf("Config.%s: no envconfig or desc tag", f.Name)
		}
		line := ""
		for l := range strings.Lines(inv.stdout) {
			if strings.HasPrefix(strings.TrimSpace(l), name+" ") {
				line = l
			}
		}
		if line == "" {
			t.Errorf("%s not listed:\n%s", name, inv.stdout)
			continue
		}
		if d := f.Tag.Get("default"); d != "" && !strings.Contains(line, "(default "+d+")") {
			t.Errorf("%s: no default %q in %q", name, d, line)
		}
	}
	if inv := mainArgs("serve", "extra"); inv.code != exitError || !strings.Contains(inv.stderr, "takes no arguments") {
		t.Errorf("serve extra: %v", inv)
	}
}

// TestDidYouMean: an unknown command or flag names the nearest one.
func TestDidYouMean(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"shedule"}, `unknown command "shedule": did you mean schedule?`},
		{[]string{"rnu"}, "did you mean run?"},
		{[]string{"run", "--trget", "http://127.0.0.1:1"}, "flag provided but not defined: -trget: did you mean --target?"},
		{[]string{"run", "--qps", "10"}, "did you mean --target-qps?"},
		{[]string{"schedule", "--scenaro", "Server"}, "did you mean --scenario?"},
		{[]string{"accuracy", "--lables", "x"}, "did you mean --labels?"},
	} {
		inv := mainArgs(c.args...)
		if inv.code != exitError || !strings.Contains(inv.stderr, c.want) || strings.Count(inv.stderr, "\n") != 1 {
			t.Errorf("%q: want exit 2 and one line with %q: %v", c.args, c.want, inv)
		}
	}
	if inv := mainArgs("zzzzzz"); inv.code != exitError || strings.Contains(inv.stderr, "did you mean") || !strings.Contains(inv.stderr, "loadgend help") {
		t.Errorf("zzzzzz: %v", inv)
	}
}
