package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/shape"
)

func scheduleOut(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(append([]string{"schedule"}, args...), &stdout, &stderr)
	return stdout.String(), stderr.String(), code
}

// `schedule --stages` prints the shape a run issues: pkg/shape's Staged
// from the schedule seed, one line a query (index, offset, stage, model).
func TestScheduleStages(t *testing.T) {
	out, errOut, code := scheduleOut(t, "--stages", "2s:50,1s:0,2s:20->80", "--arrivals", "gamma:2", "--mix", "a=3,b=1", "--schedule-seed", "9")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	stages, _ := shape.ParseStages("2s:50,1s:0,2s:20->80")
	mix, _ := shape.ParseMix("a=3,b=1")
	s, err := shape.Staged(shape.StagedOptions{Stages: stages, Arrivals: shape.Process{Kind: shape.Gamma, CV: 2}, Seed: 9, Mix: mix, MixSeed: 9})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{}
	a, _ := s.Arrivals()
	for x, ok := a.Next(); ok; x, ok = a.Next() {
		want = append(want, fmt.Sprintf("%d %d %d %s", len(want), int64(x.At), x.Stage, mix.Entries[x.Model].Model))
	}
	head := fmt.Sprintf("# stages 2s:50,1s:0,2s:20->80 arrivals gamma:2 schedule_rng_seed 9\n# mix a=0.75,b=0.25\n"+
		"# generated_query_count %d generated_query_duration 5000000000\n# query_idx scheduled_delta_ns stage model\n", len(want))
	if got := head + strings.Join(want, "\n") + "\n"; out != got {
		t.Fatalf("printed:\n%.600s\nwant:\n%.600s", out, got)
	}
	if len(want) < 100 || !strings.Contains(out, " 2 a\n") || !strings.Contains(out, " b\n") || strings.Contains(out, " 1 a\n") {
		t.Errorf("%d queries, want about 175 in stages 0 and 2 over both models", len(want))
	}
	if again, _, _ := scheduleOut(t, "--stages", "2s:50,1s:0,2s:20->80", "--arrivals", "gamma:2", "--mix", "a=3,b=1", "--schedule-seed", "9"); again != out {
		t.Error("the same flags printed another schedule")
	}
	if other, _, _ := scheduleOut(t, "--stages", "2s:50,1s:0,2s:20->80", "--arrivals", "gamma:2", "--mix", "a=3,b=1", "--schedule-seed", "10"); other == out {
		t.Error("--schedule-seed 10 printed seed 9's schedule")
	}
}

// Without --mix there is no model column; the seed is the ruleset's, as
// run's, and --scenario Server is accepted.
func TestScheduleStagesDefaults(t *testing.T) {
	out, errOut, code := scheduleOut(t, "--stages", "1s:10", "--arrivals", "constant", "--scenario", "Server")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3+10 || lines[0] != "# stages 1s:10 arrivals constant schedule_rng_seed 16159082839903944936" ||
		lines[2] != "# query_idx scheduled_delta_ns stage" || lines[3] != "0 100000000 0" || lines[12] != "9 1000000000 0" {
		t.Errorf("printed:\n%s", out)
	}
}

func TestScheduleStagesRefuses(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--stages", "30s"}, "--stages: stage 1"},
		{[]string{"--stages", ""}, "--stages is empty"},
		{[]string{"--stages", "1s:1", "--arrivals", "bursty"}, "--arrivals"},
		{[]string{"--stages", "1s:1", "--mix", "a=1,a=2"}, "--mix: entry 2"},
		{[]string{"--stages", "1s:1", "--mix", "a=1@http://u:s3cret@h:1"}, "credentials"},
		{[]string{"--mix", "a=1"}, "give --stages too"},
		{[]string{"--arrivals", "constant"}, "give --stages too"},
		{[]string{"--stages", "1s:1", "--scenario", "Offline"}, "give Server, not Offline"},
	}
	for _, tt := range tests {
		out, errOut, code := scheduleOut(t, tt.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, tt.want) || strings.Contains(errOut, "s3cret") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 naming %q", tt.args, code, out, errOut, tt.want)
		}
	}
}
