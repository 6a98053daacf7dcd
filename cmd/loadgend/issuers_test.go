package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
)

// exportedSample is a --samples-out line's trace part.
type exportedSample struct {
	Sample    int    `json:"sample"`
	Index     int64  `json:"index"`
	Scheduled int64  `json:"scheduled"`
	Status    string `json:"status"`
}

// readSamplesSorted reads a --samples-out file sorted by sample, whatever
// order the issuers completed them in.
func readSamplesSorted(t *testing.T, path string) []exportedSample {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []exportedSample
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var s exportedSample
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("%s: %v", sc.Text(), err)
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(out, func(a, b exportedSample) int { return a.Sample - b.Sample })
	return out
}

// TestRunIssuersSameTrace (issue 29): --issuers 2 and --issuers 1 over the
// same settings issue the same trace: sorted by sample, the exports have the
// same scheduled times and QSL indices, every sample answered, both VALID,
// over HTTP and gRPC (each issuer its own event loop). The schedule's
// queries are the run's too, whatever --issuers schedule is given.
func TestRunIssuersSameTrace(t *testing.T) {
	if testing.Short() {
		t.Skip("four end-to-end runs")
	}
	p := startProxy(t, "name=m,fn=echo,dtype=FP32,dims=16,max_batch=8,latency=constant:2ms,instances=4")
	// A bound far above the model's 2 ms: VALID on a busy machine too
	// (issue lateness counts in latency).
	settings := []string{"--scenario", "Server", "--target-qps", "300", "--target-latency-ms", "1000", "--latency-percentile", "90",
		"--min-duration-ms", "300", "--min-query-count", "90"}
	sched := mainArgs(append([]string{"schedule", "--max-printed-samples", "0", "--issuers", "2"}, settings...)...)
	if sched.code != 0 {
		t.Fatalf("schedule --issuers 2: %v", sched)
	}
	planned := parseSchedule(t, sched.stdout)
	for _, transport := range []string{"http", "grpc"} {
		t.Run(transport, func(t *testing.T) {
			runs := map[string][]exportedSample{}
			for _, n := range []string{"1", "2"} {
				dir := t.TempDir()
				out := filepath.Join(dir, "samples.jsonl")
				inv := runArgs(append([]string{"--target", targetOf(p, transport), "--model", "m", "--out", filepath.Join(dir, "run"),
					"--samples-out", out, "--issuers", n}, settings...)...)
				res := completedRun(t, inv, filepath.Join(dir, "run"))
				if !res.Valid || res.SamplesFailed != 0 {
					t.Fatalf("--issuers %s: %s, %d failed: %v\n%v", n, res.Validity, res.SamplesFailed, res.InvalidReasons, inv)
				}
				runs[n] = readSamplesSorted(t, out)
				if int64(len(runs[n])) != res.SamplesIssued {
					t.Errorf("--issuers %s: %d samples exported, %d issued", n, len(runs[n]), res.SamplesIssued)
				}
			}
			one, two := runs["1"], runs["2"]
			if len(one) != len(two) || len(one) < 90 || len(one) > len(planned) {
				t.Fatalf("--issuers 1 issued %d samples, --issuers 2 %d (the schedule has %d queries)", len(one), len(two), len(planned))
			}
			for i := range one {
				a, b, q := one[i], two[i], planned[i]
				if a.Sample != i || b.Sample != i || a.Index != b.Index || a.Scheduled != b.Scheduled || b.Status != "ok" {
					t.Fatalf("sample %d: --issuers 1 %+v, --issuers 2 %+v", i, a, b)
				}
				if len(q.indices) != 1 || q.indices[0] != jsonInt(b.Index) || q.scheduled != b.Scheduled {
					t.Fatalf("sample %d: the run issued index %d at %d ns, the schedule %v at %d ns", i, b.Index, b.Scheduled, q.indices, q.scheduled)
				}
			}
		})
	}
}

func jsonInt(v int64) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Offline and a closed loop split between two issuers complete: every
// sample issued is answered.
func TestRunIssuersOfflineAndConcurrency(t *testing.T) {
	if testing.Short() {
		t.Skip("two end-to-end runs")
	}
	p := startProxy(t, "name=m,fn=echo,dtype=FP32,dims=16,max_batch=8,latency=constant:2ms,instances=4")
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"Offline", []string{"--scenario", "Offline", "--target-qps", "40000", "--min-duration-ms", "200", "--min-query-count", "1"}, exitValid},
		{"concurrency", []string{"--concurrency", "4", "--min-duration-ms", "200", "--min-query-count", "1"}, exitValid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			inv := runArgs(append([]string{"--target", targetOf(p, "http"), "--model", "m", "--out", dir, "--issuers", "2"}, tc.args...)...)
			if inv.code != tc.want {
				t.Fatalf("want exit %d: %v", tc.want, inv)
			}
			res, err := runlog.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if res.SamplesIssued == 0 || res.SamplesCompleted != res.SamplesIssued || res.SamplesFailed != 0 {
				t.Errorf("%d issued, %d completed, %d failed: %v", res.SamplesIssued, res.SamplesCompleted, res.SamplesFailed, res.Errors)
			}
			if tc.name == "concurrency" && (res.ClosedLoop == nil || res.ClosedLoop.Concurrency != 4 || res.Validity != loadgen.ValidityNA) {
				t.Errorf("closed loop %+v, validity %s", res.ClosedLoop, res.Validity)
			}
		})
	}
}

// --issuers is refused where it cannot split anything, before any load,
// with exit 2 and a message naming the flag and why.
func TestRunIssuersRefused(t *testing.T) {
	p := startProxy(t, model2ms)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--scenario", "SingleStream", "--issuers", "2"}, []string{"--issuers", "one sequence of queries"}},
		{[]string{"--scenario", "MultiStream", "--issuers", "2"}, []string{"--issuers", "one sequence of queries"}},
		{[]string{"--issuers", "0"}, []string{"--issuers", "[1, 256]"}},
		{[]string{"--concurrency", "1", "--issuers", "2"}, []string{"--issuers", "concurrency must be at least the issuers"}},
		{[]string{"--issuers", "300"}, []string{"--issuers", "[1, 256]"}},
		{[]string{"--issuers", "2", "--http-client", "pool", "--target-qps", "100"}, []string{"issuers", "goroutine per request", "use 1"}},
		{[]string{"--issuers", "2", "--mode", "accuracy", "--scenario", "Offline"}, []string{"issuers", "logs responses", "use 1"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			dir := t.TempDir()
			inv := runArgs(append([]string{"--target", targetOf(p, "http"), "--model", "m", "--out", dir, "--min-duration-ms", "100"}, tc.args...)...)
			if inv.code != exitError {
				t.Fatalf("want exit %d: %v", exitError, inv)
			}
			for _, w := range tc.want {
				if !strings.Contains(inv.stderr, w) {
					t.Errorf("stderr %q lacks %q", inv.stderr, w)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, runlog.ResultFile)); !os.IsNotExist(err) {
				t.Errorf("a refused run wrote %s (%v)", runlog.ResultFile, err)
			}
		})
	}
}

// A generative run's client reads its answers on its own goroutines: two
// issuers are refused before any load, saying so.
func TestRunIssuersRefusedForAGenerativeModel(t *testing.T) {
	p := startProxy(t, "name=llm,kind=llm,max_seqs=64,step=2ms,per_seq=10us,prefill=1us")
	dir := t.TempDir()
	inv := runArgs("--target", targetOf(p, "http"), "--model", "llm", "--out", dir, "--issuers", "2", "--min-duration-ms", "100")
	if inv.code != exitError || !strings.Contains(inv.stderr, "issuers") || !strings.Contains(inv.stderr, "generative") {
		t.Fatalf("want exit %d naming issuers and the generative client: %v", exitError, inv)
	}
	if res, err := runlog.Load(dir); err == nil {
		t.Errorf("a refused run wrote a result: %+v", res)
	}
}
