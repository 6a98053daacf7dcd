package main

import (
	"io"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/api"
)

// TestShapeFlagsFillTheSpec: the load shapes' flags fill the spec's
// fields of the same names, the trace window in milliseconds, as a
// daemon's spec says them.
func TestShapeFlagsFillTheSpec(t *testing.T) {
	f := newRunFlags()
	args := []string{"--target", "http://h:1", "--model", "m", "--trace", "t.jsonl", "--trace-speed", "2.5", "--trace-start", "1m",
		"--trace-duration", "90s", "--mix", "a=0.7,b=0.3@grpc://o:1;kserve-stream"}
	if err := f.fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	spec, _, err := f.runSpec()
	if err != nil {
		t.Fatal(err)
	}
	want := api.RunSpec{Trace: "t.jsonl", TraceSpeed: 2.5, TraceStartMs: 60000, TraceDurationMs: 90000, Mix: "a=0.7,b=0.3@grpc://o:1;kserve-stream"}
	got := api.RunSpec{Trace: spec.Trace, TraceSpeed: spec.TraceSpeed, TraceStartMs: spec.TraceStartMs, TraceDurationMs: spec.TraceDurationMs, Mix: spec.Mix}
	if got.Trace != want.Trace || got.TraceSpeed != want.TraceSpeed || got.TraceStartMs != want.TraceStartMs || got.TraceDurationMs != want.TraceDurationMs || got.Mix != want.Mix {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	f = newRunFlags()
	if err := f.fs.Parse([]string{"--target", "http://h:1", "--model", "m", "--stages", "30s:100,60s:100->500", "--arrivals", "gamma:2"}); err != nil {
		t.Fatal(err)
	}
	if spec, _, err = f.runSpec(); err != nil || spec.Stages != "30s:100,60s:100->500" || spec.Arrivals != "gamma:2" {
		t.Fatalf("stages %q, arrivals %q, %v", spec.Stages, spec.Arrivals, err)
	}
}

// TestShapeFlagErrorsNameTheFlag: a refused shape names the flag the user
// typed, and says what to do.
func TestShapeFlagErrorsNameTheFlag(t *testing.T) {
	base := []string{"--target", "http://h:1", "--model", "m"}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--stages", "1s:5", "--scenario", "Offline"}, "--scenario: a load shape (stages) is a Server schedule of its own arrivals: leave scenario out or give Server, not Offline"},
		{[]string{"--stages", "1s:5", "--trace", "t.jsonl"}, "--trace: a trace file gives its own arrival times"},
		{[]string{"--arrivals", "constant"}, "--arrivals: "},
		{[]string{"--trace-speed", "2"}, "--trace-speed: applies to a trace file's replay"},
		{[]string{"--trace", "t.jsonl", "--trace-start", "1500us"}, "--trace-start: 1.5ms is not a whole number of milliseconds"},
		{[]string{"--trace", "t.jsonl", "--trace-duration", "-1s"}, "--trace-duration: must not be negative"},
		{[]string{"--trace", "t.jsonl", "--trace-start", "10"}, "a bare number has no unit"},
		{[]string{"--stages", "1s:5", "--mode", "accuracy"}, "--stages: an accuracy run sends every sample once"},
		{[]string{"--sessions", "2:3", "--mode", "accuracy"}, "--sessions: an accuracy run sends every sample once"},
		{[]string{"--stages", "1s:5", "--mode", "find-peak"}, "--stages: a peak search"},
		{[]string{"--stages", "1s:5", "--mode", "sweep", "--rates", "1,2"}, "--stages: a sweep of rates"},
		{[]string{"--stages", "1s:5", "--concurrency", "4"}, "a load shape (stages)"},
		{[]string{"--trace-speeds", "1,2"}, "--trace-speeds: only with --mode sweep"},
		{[]string{"--mode", "sweep", "--trace-speeds", "1,2"}, "--trace-speeds: sweep a trace file's speed: give trace too"},
		{[]string{"--mode", "sweep", "--trace", "t.jsonl", "--trace-speeds", "1,0"}, "--trace-speeds: \"0\" is not a speed"},
		{[]string{"--mode", "sweep", "--trace", "t.jsonl", "--trace-speeds", "1", "--rates", "3"}, "give one of them"},
	}
	for _, c := range cases {
		_, err := parseRunFlags(append(append([]string(nil), base...), c.args...), io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want %q", c.args, err, c.want)
		}
	}
}
