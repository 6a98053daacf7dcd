package recordwire

import (
	"math/rand/v2"
	"testing"
)

// benchChunk is 200 ms of a 100,000 queries/s shard: 20,000 issues and
// 20,000 samples, the latencies of a ~2 ms server and its completions a
// little out of order; generative adds the token fields.
func benchChunk(generative bool) *Chunk {
	rng := rand.New(rand.NewPCG(1, 2))
	c := &Chunk{RunID: "0123456789abcdef", Worker: "loadgend-worker-7f9c", Shard: 1, Shards: 3, Seq: 42}
	const n = 20_000
	s := int64(0)
	for i := range n {
		s += int64(rng.ExpFloat64() * 10_000)
		c.Issues = append(c.Issues, Issue{Query: int64(1 + 3*i), ScheduledNs: s, IssuedNs: s + int64(rng.IntN(20_000))})
	}
	for i := range n {
		j := max(i+rng.IntN(8)-4, 0)
		sm := Sample{Seq: int64(1 + 3*j), LatencyNs: 1_500_000 + int64(rng.IntN(1_000_000))}
		if generative {
			sm.Generative, sm.FirstTokenNs, sm.OutputTokens, sm.InputTokens = true, sm.LatencyNs/10, int64(rng.IntN(1024)), int64(rng.IntN(4096))
		}
		c.Samples = append(c.Samples, sm)
	}
	return c
}

func benchAppend(b *testing.B, generative bool) {
	c := benchChunk(generative)
	var e Encoder
	buf := e.Append(nil, c)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		buf = e.Append(buf[:0], c)
	}
	recs := float64(len(c.Issues) + len(c.Samples))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/recs, "ns/record")
	b.ReportMetric(float64(len(buf))/recs, "B/record")
	b.ReportMetric(float64(len(buf))/float64(len(c.Samples)), "B/sample+issue")
}

func benchDecode(b *testing.B, generative bool) {
	c := benchChunk(generative)
	buf := Append(nil, c)
	var into Chunk
	if err := DecodeInto(&into, buf, Limits{}); err != nil { // its arrays, once
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := DecodeInto(&into, buf, Limits{}); err != nil {
			b.Fatal(err)
		}
	}
	recs := float64(len(c.Issues) + len(c.Samples))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/recs, "ns/record")
}

func BenchmarkAppend(b *testing.B) {
	b.Run("tensor", func(b *testing.B) { benchAppend(b, false) })
	b.Run("generative", func(b *testing.B) { benchAppend(b, true) })
}

func BenchmarkDecode(b *testing.B) {
	b.Run("tensor", func(b *testing.B) { benchDecode(b, false) })
	b.Run("generative", func(b *testing.B) { benchDecode(b, true) })
}
