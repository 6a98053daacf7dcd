package runner

import (
	"testing"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/sutproxy/sutproxytest"
)

// BenchmarkServerStatisticsCost runs the same Server run (2,000 QPS for
// 3 s against sutproxy's M/D/4 1 ms model) with the statistics reads on and
// off, alternated, and reports each one's issue lateness p99 and the share
// of VALID runs: the reads, before the clock, once a second on their own
// goroutine and connection, and after the drain, should change neither.
//
//	go test -run XXX -bench ServerStatisticsCost -benchtime 4x ./pkg/runner
func BenchmarkServerStatisticsCost(b *testing.B) {
	p := sutproxytest.Start(b, "name=m,fn=echo,dims=16,max_batch=0,latency=constant:1ms,instances=4")
	s := serverSettings(b, loadgen.RulesetLoadGen6, 3000)
	s.ServerTargetQPS = 2000
	var late [2][]float64
	var valid [2]int
	for b.Loop() {
		for i, off := range []bool{false, true} {
			spec := Spec{Target: targetOf(p, "http"), Model: "m", Settings: s, TotalSamples: 256, PerformanceSamples: 256, NoServerStatistics: off}
			out, err := Run(b.Context(), spec, Options{})
			if err != nil {
				b.Fatal(err)
			}
			p99, _ := out.Result.IssueLateness.At(0.99)
			late[i] = append(late[i], float64(p99)/1e3)
			if out.Result.Valid {
				valid[i]++
			}
		}
	}
	n := float64(len(late[0]))
	for i, name := range []string{"on", "off"} {
		sum := 0.0
		for _, v := range late[i] {
			sum += v
		}
		b.ReportMetric(sum/n, "lateness-p99-us-"+name)
		b.ReportMetric(float64(valid[i])/n, "valid-share-"+name)
	}
	b.Logf("issue lateness p99 (µs) with the reads on %v, off %v", late[0], late[1])
}
