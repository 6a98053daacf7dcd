package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestScheduleAgreesWithRun (issue 27): `loadgend schedule` with a run's
// settings flags prints the trace that `loadgend run` issues: for each
// scenario, every query the run issued has the sample indices of the
// schedule's query of the same number, and, where the scenario follows the
// schedule (Server, Offline), its scheduled time. SingleStream and
// MultiStream issue each query when the previous one completes (LoadGen
// 6.0.17's closed loop), so there the run's scheduled time is its issue
// time, not the trace's. No seed and no expected QPS or latency is given:
// the two commands must share their defaults.
func TestScheduleAgreesWithRun(t *testing.T) {
	if testing.Short() {
		t.Skip("four end-to-end runs")
	}
	p := startProxy(t, model2ms)
	for _, tc := range []struct {
		scenario string
		settings []string
		timed    bool // the run keeps the trace's scheduled times
	}{
		{"SingleStream", []string{"--min-duration-ms", "100", "--min-query-count", "20"}, false},
		{"MultiStream", []string{"--min-duration-ms", "100", "--min-query-count", "10"}, false},
		{"Server", []string{"--target-qps", "200", "--target-latency-ms", "100", "--min-duration-ms", "100", "--min-query-count", "20"}, true},
		{"Offline", []string{"--min-duration-ms", "100", "--min-query-count", "1"}, true},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			settings := append([]string{"--scenario", tc.scenario}, tc.settings...)
			dir := t.TempDir()
			samplesOut := filepath.Join(dir, "samples.jsonl")
			inv := runArgs(append([]string{"--target", targetOf(p, "http"), "--model", "m", "--out", filepath.Join(dir, "run"),
				"--samples-out", samplesOut}, settings...)...)
			if inv.code != exitValid && inv.code != exitInvalid {
				t.Fatalf("run: want a verdict: %v", inv)
			}
			issued := readSamplesOut(t, samplesOut)
			sched := mainArgs(append([]string{"schedule", "--max-printed-samples", "0"}, settings...)...)
			if sched.code != 0 {
				t.Fatalf("schedule: %v", sched)
			}
			// The run issued a prefix of the schedule's queries, each
			// query's samples in order: walk the schedule's queries over
			// the run's samples.
			planned, next, queries := parseSchedule(t, sched.stdout), 0, 0
			for _, q := range planned {
				if next == len(issued) {
					break
				}
				if next+len(q.indices) > len(issued) {
					t.Fatalf("query %d: the run issued %d of its %d samples", queries, len(issued)-next, len(q.indices))
				}
				for j, want := range q.indices {
					s := issued[next+j]
					if s.index != want {
						t.Fatalf("query %d, sample %d: the run issued sample index %s, the schedule %s", queries, j, s.index, want)
					}
					if tc.timed && s.scheduled != q.scheduled {
						t.Fatalf("query %d: the run scheduled it at %d ns, the schedule at %d ns", queries, s.scheduled, q.scheduled)
					}
				}
				next += len(q.indices)
				queries++
			}
			if queries == 0 || next != len(issued) {
				t.Fatalf("the run issued %d samples, %d of them in the schedule's %d queries", len(issued), next, len(planned))
			}
			t.Logf("%d queries, %d samples: as scheduled", queries, next)
		})
	}
}

// plannedQuery is one query of the schedule: its scheduled time (ns from
// the start) and its QSL indices, as text.
type plannedQuery struct {
	scheduled int64
	indices   []string
}

// issuedSample is one line of a --samples-out file: the sample's QSL index,
// as text, and its query's scheduled time.
type issuedSample struct {
	index     string
	scheduled int64
}

// readSamplesOut reads a --samples-out file, in issue order.
func readSamplesOut(t *testing.T, path string) []issuedSample {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []issuedSample
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l struct {
			Sample    int   `json:"sample"`
			Index     int64 `json:"index"`
			Scheduled int64 `json:"scheduled"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s: %v", sc.Text(), err)
		}
		if l.Sample != len(out) {
			t.Fatalf("line %d is sample %d", len(out), l.Sample)
		}
		out = append(out, issuedSample{strconv.FormatInt(l.Index, 10), l.Scheduled})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// parseSchedule reads the query lines of `loadgend schedule`'s output:
// "query_idx scheduled_delta_ns n_samples qsl_indices...".
func parseSchedule(t *testing.T, out string) []plannedQuery {
	t.Helper()
	var qs []plannedQuery
	for l := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.Fields(l)
		if len(f) < 3 || f[0] != strconv.Itoa(len(qs)) {
			t.Fatalf("not query line %d: %.80q", len(qs), l)
		}
		at, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			t.Fatalf("query %d: %v", len(qs), err)
		}
		qs = append(qs, plannedQuery{scheduled: at, indices: f[3:]})
	}
	return qs
}
