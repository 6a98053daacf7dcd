package shardrec

import (
	"testing"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/recordwire"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// BenchmarkReceive: the coordinator's cost of a record, decoded and merged
// (a Server run's chunks of 10,000 issues and their 10,000 samples).
func BenchmarkReceive(b *testing.B) {
	s := loadgen.DefaultSettings(loadgen.RulesetLoadGen6)
	s.Scenario = trace.Server
	s.ServerTargetQPS, s.MinDurationMs, s.MinQueryCount = 100_000, 1000, 200_000
	s.ServerTargetLatencyNs = 10_000_000
	qsl := loadgen.QSLCounts{Total: 1000, Performance: 256}
	m, err := loadgen.NewMergedRun(s, qsl, 1, quiet)
	if err != nil {
		b.Fatal(err)
	}
	const per, nChunks = 10_000, 20
	cur := m.Trace().Cursor()
	var chunks [][]byte
	for k := range nChunks {
		c := recordwire.Chunk{RunID: "r1", Worker: "w0", Shards: 1, Seq: uint64(k)}
		for range per {
			q, _ := cur.Next()
			c.Issues = append(c.Issues, recordwire.Issue{Query: int64(q.Index), ScheduledNs: int64(q.Scheduled), IssuedNs: int64(q.Scheduled) + 3000})
			c.Samples = append(c.Samples, recordwire.Sample{Seq: int64(q.Index), LatencyNs: 1_000_000 + int64(q.Index%1000)})
		}
		chunks = append(chunks, recordwire.Append(nil, &c))
	}
	var rcv *Receiver
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%nChunks == 0 {
			b.StopTimer()
			if m, err = loadgen.NewMergedRun(s, qsl, 1, quiet); err != nil {
				b.Fatal(err)
			}
			rcv = NewReceiver(m, "r1", []string{"w0"}, recordwire.Limits{})
			b.StartTimer()
		}
		if _, err := rcv.Receive(chunks[i%nChunks]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(2*per), "ns/record")
}
