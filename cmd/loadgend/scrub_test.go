package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/internal/testtool"
	"github.com/netloadgen/netloadgen/pkg/secret"
)

// The credentials of the scrubbing tests: bytes JSON encoders escape
// (/ + < > &) and base64 forms that differ by alphabet and padding.
const (
	scrubAuth = "Bearer tok/3+9<x>Z&q=7"
	scrubKey  = "key+1/2<3>_Q-w9"
)

// scrubbedForms are every form of the test's credentials that must not be
// kept (testtool.SecretForms), the scheme alone excepted.
func scrubbedForms() []string {
	return append(testtool.SecretForms(scrubAuth), testtool.SecretForms(scrubKey)...)
}

// TestRunScrubsEchoedCredentials is issue 26 #2: a server whose error
// answers (500 and 401 to every inference) repeat the request's
// Authorization and x-api-key, verbatim, in base64 and JSON-escaped. Given
// inline, by @env: and by @file:, no form of either value is in any file
// the run leaves, nor in what it prints; the failures' example shows the
// marker where they were. A server answering the probe so stops the run
// at exit 2 with its text, scrubbed.
func TestRunScrubsEchoedCredentials(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	t.Setenv("NETLOADGEN_TEST_SCRUB_AUTH", scrubAuth)
	t.Setenv("NETLOADGEN_TEST_SCRUB_KEY", scrubKey)
	files := t.TempDir()
	for name, v := range map[string]string{"auth": scrubAuth, "key": scrubKey} {
		if err := os.WriteFile(filepath.Join(files, name), []byte(v+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	given := map[string][2]string{
		"inline": {scrubAuth, scrubKey},
		"env":    {"@env:NETLOADGEN_TEST_SCRUB_AUTH", "@env:NETLOADGEN_TEST_SCRUB_KEY"},
		"file":   {"@file:" + filepath.Join(files, "auth"), "@file:" + filepath.Join(files, "key")},
	}
	refusing := testtool.StartEchoServer(t, 401, true, "Authorization", "X-Api-Key")
	for how, hs := range given {
		inv := runArgs(shortRun("http://"+refusing.Addr, filepath.Join(t.TempDir(), "out"), "--header", "Authorization: "+hs[0], "--header", "x-api-key: "+hs[1])...)
		wantExit2(t, inv, "the endpoint refused the credentials: HTTP 401")
		if !strings.Contains(inv.stderr, secret.Redacted) {
			t.Errorf("%s: the probe's refusal does not show the server's text with %s: %s", how, secret.Redacted, inv.stderr)
		}
		assertNoForms(t, map[string]string{how + ": stdout": inv.stdout, how + ": stderr": inv.stderr}, scrubbedForms())
	}
	for _, status := range []int{500, 401} {
		srv := testtool.StartEchoServer(t, status, false, "Authorization", "X-Api-Key")
		for how, hs := range given {
			t.Run(how+"/"+strconv.Itoa(status), func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "out")
				inv := runArgs(shortRun("http://"+srv.Addr, dir, "--header", "Authorization: "+hs[0], "--header", "x-api-key: "+hs[1])...)
				res := completedRun(t, inv, dir)
				if res.SamplesFailed == 0 || len(res.Failures) == 0 {
					t.Fatalf("%d samples failed, failures %+v: want every inference refused", res.SamplesFailed, res.Failures)
				}
				if ex := res.Failures[0].Example; !strings.Contains(ex, secret.Redacted) || !strings.Contains(ex, "credentials rejected") {
					t.Errorf("failure example %q: want the server's text with %s where the credentials were", ex, secret.Redacted)
				}
				seen := map[string]string{"stdout": inv.stdout, "stderr": inv.stderr}
				walkFiles(t, dir, seen)
				assertNoForms(t, seen, scrubbedForms())
			})
		}
	}
}

// walkFiles reads every file under dir into seen, by path.
func walkFiles(t *testing.T, dir string, seen map[string]string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		seen[path] = string(b)
		n++
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 6 {
		t.Fatalf("%d files under %s", n, dir)
	}
}

// assertNoForms fails for every text of seen that holds one of forms.
func assertNoForms(t *testing.T, seen map[string]string, forms []string) {
	t.Helper()
	for where, text := range seen {
		for _, f := range forms {
			if strings.Contains(text, f) {
				t.Errorf("%s holds %q", where, f)
			}
		}
	}
}
