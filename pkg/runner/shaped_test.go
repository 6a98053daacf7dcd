package runner

import (
	"bufio"
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

// twoRates is 0.6 s at 100/s then 0.6 s at 300/s, evenly spaced, query i's
// model i%2: a shape with stages and models, as shape.Staged with a mix.
type twoRates struct{}

func (twoRates) arrivals() []trace.Arrival {
	var a []trace.Arrival
	for i := range 60 {
		a = append(a, trace.Arrival{At: time.Duration(i) * 10 * time.Millisecond, Model: len(a) % 2})
	}
	for i := range 180 {
		a = append(a, trace.Arrival{At: 600*time.Millisecond + time.Duration(i)*time.Second/300, Stage: 1, Model: len(a) % 2})
	}
	return a
}

func (s twoRates) Arrivals() (trace.Arrivals, error) { return &slicePass{a: s.arrivals()}, nil }
func (twoRates) End() time.Duration                  { return 1200 * time.Millisecond }
func (twoRates) Stages() []shape.Stage {
	return []shape.Stage{{Duration: 600 * time.Millisecond, From: 100, To: 100}, {Duration: 600 * time.Millisecond, From: 300, To: 300}}
}
func (twoRates) Models() []string { return []string{"m", "m2"} }

type slicePass struct {
	a []trace.Arrival
	i int
}

func (p *slicePass) Next() (trace.Arrival, bool) {
	if p.i >= len(p.a) {
		return trace.Arrival{}, false
	}
	p.i++
	return p.a[p.i-1], true
}
func (*slicePass) Err() error   { return nil }
func (*slicePass) Close() error { return nil }

// A shaped run against sutproxy reports what a load shape is: N/A without
// an SLO, the SLO's verdict with one; each stage's and model's counts as
// the shape scheduled them; the time series with its stages; no LoadGen
// logs.
func TestShapedRunEndToEnd(t *testing.T) {
	p := startProxy(t, "name=m,fn=echo,dims=16,max_batch=0,latency=constant:200us,instances=2")
	for _, slo := range []string{"", "latency=10s@p99"} {
		s := serverSettings(t, loadgen.RulesetLoadGen6, 0)
		s.Shape = twoRates{}
		if slo != "" {
			s.Engine.SLO, _ = genai.ParseSLO(slo)
		}
		dir := t.TempDir()
		out, err := Run(t.Context(), Spec{Target: targetOf(p, "http"), Model: "m", Settings: s, TotalSamples: 64, PerformanceSamples: 64, OutDir: dir}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		res := out.Result
		want := loadgen.ValidityNA
		if slo != "" {
			want = "VALID"
		}
		if res.Validity != want || res.SamplesIssued != 240 || res.SamplesFailed != 0 {
			t.Fatalf("slo %q: validity %q (%q), %d issued, %d failed; want %s, 240, 0", slo, res.Validity, res.InvalidReasons, res.SamplesIssued, res.SamplesFailed, want)
		}
		if len(res.Stages) != 2 || res.Stages[0].SamplesIssued != 60 || res.Stages[1].SamplesIssued != 180 ||
			res.Stages[0].RateAchieved != 100 || res.Stages[1].RateAchieved != 300 {
			t.Errorf("stages %+v", res.Stages)
		}
		if len(res.Models) != 2 || res.Models[0].SamplesIssued != 120 || res.Models[1].SamplesIssued != 120 || res.Models[0].Model != "m" {
			t.Errorf("models %+v", res.Models)
		}
		if _, err := os.Stat(filepath.Join(dir, runlog.SummaryFile)); err == nil {
			t.Error("a load shape wrote mlperf_log_summary.txt")
		}
		f, err := os.Open(filepath.Join(dir, runlog.TimeseriesCSVFile))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Scan()
		if !strings.HasSuffix(sc.Text(), ",stage") {
			t.Errorf("timeseries.csv header %q: want a stage column", sc.Text())
		}
		f.Close()
	}
}
