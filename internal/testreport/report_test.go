package main

import (
	"bytes"
	"strings"
	"testing"
)

// A skipped and a failed test among passing ones: plain output shows the
// failure and the package lines, the skip goes to the list with its reason.
func TestReport(t *testing.T) {
	in := `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:3: chatter\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"--- PASS: TestA (0.00s)\n"}
{"Action":"pass","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestB","Output":"=== RUN   TestB\n"}
{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:9: grpcurl not installed\n"}
{"Action":"output","Package":"p","Test":"TestB","Output":"--- SKIP: TestB (0.00s)\n"}
{"Action":"skip","Package":"p","Test":"TestB"}
{"Action":"output","Package":"p","Test":"TestC","Output":"=== RUN   TestC\n"}
{"Action":"output","Package":"p","Test":"TestC","Output":"    c_test.go:5: wrong\n"}
{"Action":"output","Package":"p","Test":"TestC","Output":"--- FAIL: TestC (0.00s)\n"}
{"Action":"fail","Package":"p","Test":"TestC"}
{"Action":"output","Package":"p","Output":"FAIL\n"}
{"Action":"output","Package":"p","Output":"FAIL\tp\t0.01s\n"}
{"Action":"fail","Package":"p"}
`
	var out bytes.Buffer
	r := newReport(&out)
	r.read(strings.NewReader(in))
	want := "    c_test.go:5: wrong\n--- FAIL: TestC (0.00s)\nFAIL\nFAIL\tp\t0.01s\n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
	if !r.failed {
		t.Error("a failed test did not fail the report")
	}
	if len(r.skips) != 1 || r.skips[0] != "p TestB: b_test.go:9: grpcurl not installed" {
		t.Errorf("skips = %q", r.skips)
	}
}
