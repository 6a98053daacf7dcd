package runner

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/internal/testtool"
	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/secret"
	"github.com/netloadgen/netloadgen/pkg/target"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// The credentials of the scrubbing tests: bytes JSON encoders escape
// (/ + < > &) and base64 forms that differ by alphabet and padding.
const (
	scrubAuth = "Bearer tok/3+9<x>Z&q=7"
	scrubKey  = "key+1/2<3>_Q-w9"
)

var scrubHeaders = []Header{{Name: "Authorization", Value: scrubAuth, Shown: "@env:TOKEN"}, {Name: "X-Api-Key", Value: scrubKey, Shown: secret.Redacted}}

// noForms fails when text holds any form of the test's credentials, and
// when it does not show the marker where they were.
func noForms(t *testing.T, where, text string) {
	t.Helper()
	for _, f := range append(testtool.SecretForms(scrubAuth), testtool.SecretForms(scrubKey)...) {
		if strings.Contains(text, f) {
			t.Errorf("%s holds %q: %s", where, f, text)
			return
		}
	}
	if !strings.Contains(text, secret.Redacted) {
		t.Errorf("%s does not show %s where the credentials were: %s", where, secret.Redacted, text)
	}
}

// TestProbeScrubsEchoedCredentials is issue 26 #2 for the probes: a server
// answering 401 with a body that repeats Authorization and x-api-key
// (verbatim, base64, JSON-escaped) is refused with an error that quotes the
// body, scrubbed, for ProbeEndpoint and a run's KServe probe; the probe's
// timed inference answered 500 likewise, and the server's name, which
// repeats the header; the OpenAI probe's error, which
// lists the server's models, likewise when the list echoes the headers.
func TestProbeScrubsEchoedCredentials(t *testing.T) {
	refusing := testtool.StartEchoServer(t, 401, true, "Authorization", "X-Api-Key")
	url := "http://" + refusing.Addr
	_, err := ProbeEndpoint(t.Context(), url, "m", "", nil, scrubHeaders...)
	if !errors.Is(err, target.ErrTarget) || !strings.Contains(err.Error(), "refused the credentials") {
		t.Fatalf("ProbeEndpoint: %v", err)
	}
	noForms(t, "ProbeEndpoint's error", err.Error())
	_, err = ProbeEndpoint(t.Context(), url, "", "", nil, scrubHeaders...)
	if err == nil {
		t.Fatal("ProbeEndpoint without a model: no error")
	}
	noForms(t, "ProbeEndpoint's error (no model)", err.Error())

	var logs bytes.Buffer
	spec := Spec{Target: url, Model: "m", Settings: shortSettings(t, trace.SingleStream), TotalSamples: 4, PerformanceSamples: 4, Headers: scrubHeaders}
	_, err = Run(t.Context(), spec, Options{Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if !errors.Is(err, target.ErrTarget) {
		t.Fatalf("Run: %v", err)
	}
	noForms(t, "Run's error", err.Error())

	failing := testtool.StartEchoServer(t, 500, false, "Authorization", "X-Api-Key")
	rep, err := ProbeEndpoint(t.Context(), "http://"+failing.Addr, "m", "", nil, scrubHeaders...)
	if err != nil || rep.InferenceError == "" {
		t.Fatalf("ProbeEndpoint: %+v, %v: want the inference's error reported", rep, err)
	}
	noForms(t, "the probe's inference error", rep.InferenceError)
	noForms(t, "the server's name", rep.Server.Name)
	noForms(t, "the server's name (model probe)", rep.Model.Server.Name)
	rep, err = ProbeEndpoint(t.Context(), "http://"+failing.Addr, "", "", nil, scrubHeaders...)
	if err != nil {
		t.Fatal(err)
	}
	noForms(t, "the server's name (no model)", rep.Server.Name)

	spec.API = genai.APIOpenAIChat
	_, err = Run(t.Context(), spec, Options{})
	if !errors.Is(err, target.ErrTarget) || !strings.Contains(err.Error(), "/v1/models lists") {
		t.Fatalf("Run (OpenAI): %v", err)
	}
	noForms(t, "the OpenAI probe's error", err.Error())
}

// TestRunScrubsFailureText: a run whose every inference is answered 500
// with the credentials echoed keeps the server's text, scrubbed, in its
// result (failures' examples, errors), its files and its log lines.
func TestRunScrubsFailureText(t *testing.T) {
	srv := testtool.StartEchoServer(t, 500, false, "Authorization", "X-Api-Key")
	var logs bytes.Buffer
	dir := t.TempDir()
	for _, client := range []string{"loop", "pool"} {
		out := filepath.Join(dir, client)
		spec := Spec{Target: "http://" + srv.Addr, Model: "m", Settings: shortSettings(t, trace.Server), HTTPClient: client,
			TotalSamples: 4, PerformanceSamples: 4, Headers: scrubHeaders, OutDir: out}
		res, err := Run(t.Context(), spec, Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		if err != nil {
			t.Fatalf("%s: %v", client, err)
		}
		r := res.Result
		if r.SamplesFailed == 0 || len(r.Failures) == 0 || len(r.Errors) == 0 {
			t.Fatalf("%s: %d failed, failures %+v", client, r.SamplesFailed, r.Failures)
		}
		noForms(t, client+": failures[0].example", r.Failures[0].Example)
		noForms(t, client+": errors[0]", r.Errors[0])
		err = filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			for _, f := range append(testtool.SecretForms(scrubAuth), testtool.SecretForms(scrubKey)...) {
				if bytes.Contains(b, []byte(f)) {
					t.Errorf("%s holds %q", path, f)
				}
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range append(testtool.SecretForms(scrubAuth), testtool.SecretForms(scrubKey)...) {
		if strings.Contains(logs.String(), f) {
			t.Errorf("a log line holds %q", f)
		}
	}
}

// Host is not scrubbed: it routes rather than authenticates, and it is the
// name the run's own errors (a refused dial, a failed handshake) carry.
// Every other header's value is.
func TestScrubbingSparesHost(t *testing.T) {
	spec := Spec{Headers: []Header{{Name: "host", Value: "model.ingress.example"}, {Name: "Authorization", Value: "Bearer s3cr3t-token"}}}
	_, scr := scrubbing(spec, Options{})
	got := scr.String("dial tcp model.ingress.example:443: refused; echo Bearer s3cr3t-token")
	if !strings.Contains(got, "model.ingress.example") || strings.Contains(got, "s3cr3t-token") {
		t.Errorf("scrubbed %q: want the Host kept and the credential gone", got)
	}
}
