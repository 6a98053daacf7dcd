package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/compliance"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/rng"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/trace"
	"github.com/netloadgen/netloadgen/pkg/trace/tracetest"
)

// The classifier the accuracy tests run against: 10 classes over 8 FP32
// values per sample, no latency.
const (
	clsModel   = "name=cls,fn=classify,classes=10,dims=8,max_batch=4"
	clsSamples = 40
)

// clsData writes clsSamples samples as a raw FP32 file and returns its path
// and each sample's bytes.
func clsData(t *testing.T) (string, [][]byte) {
	t.Helper()
	var all []byte
	var samples [][]byte
	for i := range clsSamples {
		var s []byte
		for j := range 8 {
			s = binary.LittleEndian.AppendUint32(s, math.Float32bits(float32(i*8+j)*0.37))
		}
		samples = append(samples, s)
		all = append(all, s...)
	}
	return put(t, t.TempDir(), "samples.bin", all), samples
}

// classOf is the documented rule of the classify function
// (docs/sutproxy-models.md), computed here on its own: FNV-1a 64 of the
// sample's bytes, modulo the classes.
func classOf(sample []byte) int {
	h := fnv.New64a()
	h.Write(sample)
	return int(h.Sum64() % 10)
}

func writeLabels(t *testing.T, labels []int) string {
	var b strings.Builder
	for _, l := range labels {
		fmt.Fprintln(&b, l)
	}
	return put(t, t.TempDir(), "labels.txt", []byte(b.String()))
}

// readAccuracyLog reads the accuracy log at path.
func readAccuracyLog(t *testing.T, path string) []loadgen.AccuracyEntry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	entries, err := compliance.ReadAccuracyLog(f)
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

func runCmd(cmd command, args ...string) invocation {
	var out, errb bytes.Buffer
	code := cmd(args, &out, &errb)
	return invocation{code: code, stdout: out.String(), stderr: errb.String()}
}

func TestAccuracyRunAndTop1(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	p := startProxy(t, clsModel)
	data, samples := clsData(t)
	truth := make([]int, clsSamples)
	for i, s := range samples {
		truth[i] = classOf(s)
	}
	// Seven labels moved to another class: 33 of 40 right.
	wrong := slices.Clone(truth)
	for _, i := range []int{0, 5, 11, 17, 23, 31, 39} {
		wrong[i] = (wrong[i] + 1) % 10
	}
	goodLabels, badLabels := writeLabels(t, truth), writeLabels(t, wrong)
	for _, tc := range []struct{ transport, scenario string }{
		{"http", "SingleStream"}, {"grpc", "Server"}, {"http", "Offline"}, {"grpc", "MultiStream"},
	} {
		t.Run(tc.transport+"/"+tc.scenario, func(t *testing.T) {
			dir := t.TempDir()
			inv := runArgs("--mode", "accuracy", "--target", targetOf(p, tc.transport), "--model", "cls", "--scenario", tc.scenario,
				"--data", data, "--performance-samples", "16", "--target-qps", "2000", "--samples-per-query", "4", "--out", dir)
			if inv.code != exitValid {
				t.Fatalf("accuracy run: %v", inv)
			}
			logPath := filepath.Join(dir, runlog.AccuracyFile)
			entries := readAccuracyLog(t, logPath)
			seen := map[int]bool{}
			for _, e := range entries {
				seen[e.QSLIndex] = true
			}
			if len(seen) != clsSamples || (tc.scenario != "MultiStream" && len(entries) != clsSamples) {
				t.Fatalf("%d entries for %d distinct samples, want every one of %d once", len(entries), len(seen), clsSamples)
			}
			inv = runCmd(accuracyCommand, "--log", logPath, "--labels", goodLabels, "--output", "OUTPUT0", "--min", "99")
			if inv.code != exitValid || !strings.Contains(inv.stdout, "top-1 accuracy: 100.0000% (40 of 40 samples") {
				t.Fatalf("correct labels: %v", inv)
			}
			inv = runCmd(accuracyCommand, "--log", logPath, "--labels", badLabels, "--min", "0.9")
			if inv.code != exitInvalid || !strings.Contains(inv.stdout, "top-1 accuracy: 82.5000% (33 of 40 samples") {
				t.Fatalf("seven labels changed, --min 0.9: %v", inv)
			}
			if inv := runCmd(accuracyCommand, "--log", logPath, "--labels", badLabels, "--min", "80"); inv.code != exitValid {
				t.Fatalf("82.5%% against --min 80: %v", inv)
			}
		})
	}
}

func TestAccuracyCommandErrors(t *testing.T) {
	dir := t.TempDir()
	log := put(t, dir, "log.json", []byte("[\n{ \"seq_id\" : 0, \"qsl_idx\" : 5, \"data\" : \"0000803F\" }\n]\n"))
	labels := put(t, dir, "labels.txt", []byte("1\n2\n"))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--labels", labels}, "--log is required"},
		{[]string{"--log", log}, "--labels is required"},
		{[]string{"--log", log, "--labels", labels}, "qsl_idx 5 has no label"},
		{[]string{"--log", put(t, dir, "bad.json", []byte("[{\"seq_id\":0,\"qsl_idx\":0,\"data\":\"XY\"}]")), "--labels", labels}, "not hex"},
		{[]string{"--log", log, "--labels", put(t, dir, "l2", []byte("1\nseven\n"))}, "line 2"},
		{[]string{"--log", log, "--labels", labels, "--min", "200"}, "--min"},
	} {
		inv := runCmd(accuracyCommand, tc.args...)
		if inv.code != exitError || !strings.Contains(inv.stderr, tc.want) {
			t.Errorf("%v: want exit 2 naming %q, got %v", tc.args, tc.want, inv)
		}
	}
}

// expectedLogged derives from LOADGEN-REFERENCE §7.1 which sample sequence
// numbers TEST01 logs out of n.
func expectedLogged(target, seed uint64, qps float64, minDurMs, minQueries uint64, n int) []int {
	expected := max(uint64(qps*float64(minDurMs)/1000), minQueries)
	prob := float64(target) / float64(expected)
	offset := rng.GenerateCanonical(rng.NewMT19937(seed))
	vals := rng.NewMT19937(5489)
	var out []int
	for seq := range n {
		x := rng.GenerateCanonical(vals) + offset
		if x >= 1 {
			x--
		}
		if x <= prob {
			out = append(out, seq)
		}
	}
	return out
}

// runTEST01 runs TEST01 against the classifier over transport with
// auditConfig: a Server audit run at 1000 QPS of at least 150 ms and
// minQueries queries. It returns the invocation and --out.
func runTEST01(t *testing.T, transport, auditConfig, minQueries string) (invocation, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	p := startProxy(t, clsModel)
	data, _ := clsData(t)
	audit := put(t, t.TempDir(), "audit.config", []byte(auditConfig))
	dir := t.TempDir()
	return runCmd(complianceCommand, "TEST01", "--audit-config", audit, "--target", targetOf(p, transport), "--model", "cls",
		"--scenario", "Server", "--target-qps", "1000", "--min-duration-ms", "150", "--min-query-count", minQueries, "--data", data, "--out", dir), dir
}

func TestComplianceTEST01(t *testing.T) {
	// 800 queries: enough for early stopping (459 with none over the
	// bound), so the audit run is VALID.
	inv, dir := runTEST01(t, "grpc", "# TEST01 with a small target\n*.*.mode = 2\n*.*.accuracy_log_rng_seed = 720381539243781796\n*.*.accuracy_log_sampling_target = 60\n", "800")
	if inv.code != exitValid || !strings.HasPrefix(inv.stdout, "TEST01 PASS") {
		t.Fatalf("TEST01 against an honest model: %v", inv)
	}
	res, err := runlog.Load(filepath.Join(dir, "audit"))
	if err != nil {
		t.Fatal(err)
	}
	logged := readAccuracyLog(t, filepath.Join(dir, "audit", runlog.AccuracyFile))
	// Server issues the whole trace: regenerate it for the QSL indices.
	s, err := loadgen.NewSettings(loadgen.RulesetLoadGen6, trace.Server, "")
	if err != nil {
		t.Fatal(err)
	}
	s.ServerTargetQPS, s.MinDurationMs, s.MinQueryCount = 1000, 150, 800
	tr, err := trace.New(s.TraceSettings(), trace.QSL{TotalSampleCount: clsSamples, PerformanceSampleCount: 1024})
	if err != nil {
		t.Fatal(err)
	}
	if int(res.SamplesIssued) != tr.Len() {
		t.Fatalf("%d samples issued, the trace has %d", res.SamplesIssued, tr.Len())
	}
	want := expectedLogged(60, 720381539243781796, 1000, 150, 800, tr.Len())
	var got []int
	qs := tracetest.Collect(tr)
	for _, e := range logged {
		got = append(got, e.SeqID)
		if q := qs[e.SeqID]; q.Samples[0] != e.QSLIndex {
			t.Errorf("seq_id %d logged as qsl_idx %d, the trace has %d", e.SeqID, e.QSLIndex, q.Samples[0])
		}
	}
	sort.Ints(got)
	if !slices.Equal(got, want) {
		t.Fatalf("logged seq_ids %v\nwant %v", got, want)
	}
	if len(want) < 20 || len(want) == tr.Len() {
		t.Fatalf("%d of %d selected: the case does not test the selection", len(want), tr.Len())
	}
}

func TestComplianceCatchesACachingSUT(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	// 10 ms of model time: under two busy loops on both cores, 4 of 20
	// standalone honest TEST04 pairs went past the 10% limit against 9 of
	// 20 with the 3 ms model this test used (about 1 run in 40 failed on a
	// merely busy machine).
	const honest = "name=m,fn=classify,classes=10,dims=8,max_batch=4,latency=constant:10ms,instances=2"
	for _, tc := range []struct {
		test  string
		model string
		pass  bool
	}{
		{"TEST04", honest, true},
		{"TEST04", honest + ",cache=1", false},
		{"caching", honest, true},
		{"caching", honest + ",cache=1", false},
	} {
		t.Run(tc.test+"/"+tc.model, func(t *testing.T) {
			p := startProxy(t, tc.model) // a fresh cache for every case
			if tc.pass {
				// sutproxy learns its timer wake-up lead over its first ~100
				// requests (docs/sutproxy-models.md), which would make the
				// second run of a pair a few percent faster than the first.
				// Warm it up with other samples (a caching model is not
				// warmed: that would fill its cache).
				warm := runArgs("--target", targetOf(p, "http"), "--model", "m", "--scenario", "SingleStream",
					"--total-samples", "200", "--performance-samples", "200", "--min-duration-ms", "0", "--min-query-count", "200")
				if warm.code != exitValid && warm.code != exitInvalid {
					t.Fatalf("warm-up: %v", warm)
				}
			}
			want, word, attempts := exitValid, "PASS", 3
			if !tc.pass {
				want, word, attempts = exitInvalid, "FAIL", 1
			}
			// An honest pair compares two runs' mean latencies on a shared
			// machine: a stall in one run can move it past TEST04's 10% (3
			// of 24 first tries with two busy loops on both cores, load
			// average ~8). The honest pairs get three tries; a caching SUT
			// must fail at once.
			var inv invocation
			var dir string
			for a := range attempts {
				dir = t.TempDir()
				// 64 queries a run: SingleStream's least for early
				// stopping, so the runs are VALID.
				inv = runCmd(complianceCommand, tc.test, "--target", targetOf(p, "http"), "--model", "m", "--scenario", "SingleStream",
					"--total-samples", "64", "--performance-samples", "64", "--min-duration-ms", "100", "--min-query-count", "64", "--out", dir)
				if inv.code == want && strings.HasPrefix(inv.stdout, tc.test+" "+word) {
					break
				}
				t.Logf("try %d of %d: %s", a+1, attempts, strings.SplitN(inv.stdout, "\n", 2)[0])
			}
			if inv.code != want || !strings.HasPrefix(inv.stdout, tc.test+" "+word) {
				t.Fatalf("want %s: %v", word, inv)
			}
			if _, err := os.Stat(filepath.Join(dir, ComplianceFile)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// An audit never passes on an INVALID run: TEST01 whose audit run is too
// short for early stopping fails (exit 1) and says why, though every
// logged response matches.
func TestComplianceFailsOnAnInvalidRun(t *testing.T) {
	inv, dir := runTEST01(t, "http", "*.*.accuracy_log_sampling_target = 60\n", "100")
	if inv.code != exitInvalid || !strings.HasPrefix(inv.stdout, "TEST01 FAIL: the audit run is INVALID (early stopping not met); ") ||
		!strings.Contains(inv.stdout, " 0 differ, 0 missing") || !strings.Contains(inv.stdout, "    invalid: early stopping not met: ") {
		t.Fatalf("TEST01 with an INVALID audit run: %v", inv)
	}
	b, err := os.ReadFile(filepath.Join(dir, ComplianceFile))
	if err != nil {
		t.Fatal(err)
	}
	var v compliance.Verdict
	if err := json.Unmarshal(b, &v); err != nil || v.Pass || !slices.Equal(v.InvalidRuns, []string{"audit"}) || len(v.Runs["audit"].InvalidReasons) == 0 {
		t.Errorf("compliance.json: %s (%v)", b, err)
	}
}

func TestComplianceUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"TEST06"}, "unknown test"},
		{[]string{"TEST04", "--threshold", "x", "--target", "http://127.0.0.1:1", "--model", "m"}, "--threshold"},
		{[]string{"TEST04", "--audit-config", "/nonexistent/audit.config", "--target", "http://127.0.0.1:1", "--model", "m"}, "--audit-config"},
		{[]string{"TEST04", "--audit-config"}, "needs a value"},
		{[]string{"TEST04", "--mode", "accuracy", "--target", "http://127.0.0.1:1", "--model", "m", "--out", "x"}, "--mode"},
	} {
		inv := runCmd(complianceCommand, tc.args...)
		if inv.code != exitError || !strings.Contains(inv.stderr, tc.want) {
			t.Errorf("%v: want exit 2 naming %q, got %v", tc.args, tc.want, inv)
		}
	}
}
