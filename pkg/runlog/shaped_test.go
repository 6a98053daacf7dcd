package runlog_test

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/shape"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// stagedShape is a fixed shape with stages and models: 2 s at 100/s then
// 2 s ramping 100 → 300/s (400 arrivals), query i's model i%2.
type stagedShape struct{ arr []trace.Arrival }

func newStagedShape() stagedShape {
	var a []trace.Arrival
	for i := range 200 {
		a = append(a, trace.Arrival{At: time.Duration(i) * 10 * time.Millisecond, Stage: 0, Model: i % 2})
	}
	for i := range 400 {
		a = append(a, trace.Arrival{At: 2*time.Second + time.Duration(i)*5*time.Millisecond, Stage: 1, Model: i % 2})
	}
	return stagedShape{a}
}

func (s stagedShape) Arrivals() (trace.Arrivals, error) { return &pass{s: s.arr}, nil }
func (s stagedShape) End() time.Duration                { return 4 * time.Second }
func (s stagedShape) Stages() []shape.Stage {
	return []shape.Stage{{Duration: 2 * time.Second, From: 100, To: 100}, {Duration: 2 * time.Second, From: 100, To: 300}}
}
func (s stagedShape) Models() []string { return []string{"identity", "resnet50"} }

type pass struct {
	s []trace.Arrival
	i int
}

func (p *pass) Next() (trace.Arrival, bool) {
	if p.i >= len(p.s) {
		return trace.Arrival{}, false
	}
	p.i++
	return p.s[p.i-1], true
}
func (p *pass) Err() error   { return nil }
func (p *pass) Close() error { return nil }

func shapedCase(slo string) scenarioCase {
	return scenarioCase{ruleset: loadgen.RulesetLoadGen6, scenario: trace.Server, latency: constLatency(3 * time.Millisecond),
		tweak: func(s *loadgen.Settings) {
			s.Shape = newStagedShape()
			if slo != "" {
				s.Engine.SLO, _ = genai.ParseSLO(slo)
			}
		}}
}

// A shaped run writes result.json and the record's files with its stages
// marked, and no LoadGen logs or samples.txt: it is no LoadGen scenario.
func TestWriteShapedRun(t *testing.T) {
	run, res := execute(t, shapedCase(""))
	dir := t.TempDir()
	if err := runlog.Write(dir, run, res, runlog.Options{Logger: quietLogger()}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{runlog.ResultFile, runlog.HlogFile, runlog.TimeseriesCSVFile, runlog.TimeseriesJSONFile, runlog.SpectrumFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	for _, f := range []string{runlog.SummaryFile, runlog.DetailFile, runlog.AccuracyFile, runlog.SamplesFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s written for a load shape", f)
		}
	}
	got, err := runlog.Load(dir)
	if err != nil || got.Validity != loadgen.ValidityNA || len(got.Stages) != 2 || len(got.Models) != 2 || got.LoadShape == nil {
		t.Fatalf("result.json read back: %v; validity %q, %d stages, %d models", err, got.Validity, len(got.Stages), len(got.Models))
	}
	f, err := os.Open(filepath.Join(dir, runlog.TimeseriesJSONFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ts, err := runlog.DecodeTimeseries(f)
	if err != nil {
		t.Fatal(err)
	}
	want := []runlog.StageMark{{Stage: 0, StartNs: 0, EndNs: 2e9}, {Stage: 1, StartNs: 2e9, EndNs: 4e9}}
	if len(ts.Stages) != 2 || ts.Stages[0] != want[0] || ts.Stages[1] != want[1] {
		t.Errorf("timeseries stages %+v, want %+v", ts.Stages, want)
	}
	b, _ := os.ReadFile(filepath.Join(dir, runlog.TimeseriesCSVFile))
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rows[0], ",") != runlog.TimeseriesCSVHeader+",stage" {
		t.Errorf("csv header %q", rows[0])
	}
	for _, r := range rows[1:] {
		sec := r[0]
		wantStage := "0"
		if sec >= "2" {
			wantStage = "1"
		}
		if r[len(r)-1] != wantStage {
			t.Errorf("csv second %s: stage %s, want %s", sec, r[len(r)-1], wantStage)
		}
	}
}

// A plain run's time series keeps its header and has no stages.
func TestTimeseriesWithoutStages(t *testing.T) {
	run, res := execute(t, scenarioCase{ruleset: loadgen.RulesetLoadGen6, scenario: trace.Server, latency: constLatency(time.Millisecond)})
	ts, err := runlog.BuildTimeseries(run, res)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := ts.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(b.String(), "\n"); first != runlog.TimeseriesCSVHeader || ts.Stages != nil {
		t.Errorf("header %q, stages %v", first, ts.Stages)
	}
}

// The summary line says whose verdict a shaped run has, and a line a stage
// and a model.
func TestSummaryLineShaped(t *testing.T) {
	_, res := execute(t, shapedCase(""))
	line := runlog.SummaryLine(res)
	for _, want := range []string{"Load shape (2 stages, 2 models): " + loadgen.NAReason,
		"\n  stage 0 (0–2 s): 100/s asked → 100.00/s issued, 100.00/s completed; p99 3.000 ms; 0 of 200 failed",
		"\n  stage 1 (2–4 s): 100→300/s asked → 200.00/s issued",
		"\n  model identity: 300 issued, 300 completed, 0 failed; p50 3.000 ms, p99 3.000 ms",
		"mean rate asked"} {
		if !strings.Contains(line, want) {
			t.Errorf("summary line lacks %q:\n%s", want, line)
		}
	}
	if strings.Contains(line, "target QPS") || strings.Contains(line, "early stopping") {
		t.Errorf("a shaped run's line speaks of LoadGen's target or early stopping:\n%s", line)
	}
	_, res = execute(t, shapedCase("latency=2ms@p50"))
	line = runlog.SummaryLine(res)
	for _, want := range []string{"judged by the SLO latency=2ms@p50: INVALID (SLO latency=2ms@p50 not met: p50 latency is 3ms)", "goodput 0.00 samples/s"} {
		if !strings.Contains(line, want) {
			t.Errorf("summary line lacks %q:\n%s", want, line)
		}
	}
	// No SLO, the shape ended early: INVALID, its reason said, not N/A.
	_, res = execute(t, shapedCase(""))
	res.Valid, res.Validity, res.InvalidReasons = false, "INVALID", []string{"load shape ended early: the file changed"}
	line = runlog.SummaryLine(res)
	if !strings.Contains(line, "no SLO: INVALID (load shape ended early: the file changed)") || strings.Contains(line, loadgen.NAReason) {
		t.Errorf("an early-ended shape's line does not say INVALID and why:\n%s", line)
	}
}
