package recordwire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

func tensorChunk() *Chunk {
	return &Chunk{RunID: "run-7", Worker: "w-a", Shard: 1, Shards: 3, Seq: 4,
		Issues: []Issue{{Query: 1, ScheduledNs: 0, IssuedNs: 1500}, {Query: 4, ScheduledNs: 70_000, IssuedNs: 69_900}, {Query: 7, ScheduledNs: 140_000, IssuedNs: 140_001}},
		Samples: []Sample{{Seq: 4, LatencyNs: 2_000_000}, {Seq: 1, LatencyNs: 900_000},
			{Seq: 7, LatencyNs: 30_000_000_000, Failed: true, Kind: "timeout"},
			{Seq: 10, LatencyNs: 5, Failed: true, Kind: "http 503"}, {Seq: 13, LatencyNs: 7, Failed: true, Kind: "timeout"},
			{Seq: 16, LatencyNs: 8, Failed: true}}}
}

func genChunk() *Chunk {
	c := tensorChunk()
	c.Samples[0].Generative, c.Samples[0].FirstTokenNs, c.Samples[0].OutputTokens, c.Samples[0].InputTokens = true, 80_000_000, 512, 1024
	c.Samples[0].TokensFromServer, c.Samples[1].Burst = true, true
	c.Samples[2].Generative, c.Samples[2].FirstTokenNs, c.Samples[2].InputTokens = true, -1, 77 // failed after its prompt was counted
	c.End = &End{StopReason: "min duration and min query count met", Issued: 3, Completed: 3, Failed: 1, Unanswered: 0,
		LatenessP50Ns: 300, LatenessP99Ns: 1500, LatenessMaxNs: 1501, Resent: 2, MaxOutstanding: 8, Streaming: 1,
		Messages: []string{"query 7: timeout after 30s", ""}, ByKind: []KindCount{{"timeout", 2, "query 7: timeout after 30s"}, {"http 503", 1, ""}},
		ITL: []Bucket{{100_000, 12}, {1_000_000, 3}}}
	return c
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    *Chunk
	}{
		{"empty", &Chunk{Shards: 1}},
		{"tensor", tensorChunk()},
		{"generative with end", genChunk()},
		{"end only", &Chunk{RunID: "r", Worker: "w", Shard: 2, Shards: 3, Seq: 99, End: &End{StopReason: "worker stopped"}}},
		{"extremes", &Chunk{RunID: strings.Repeat("r", 4096), Shard: math.MaxInt32 - 1, Shards: math.MaxInt32, Seq: math.MaxUint64,
			Issues:  []Issue{{math.MaxInt64, math.MinInt64, math.MaxInt64}, {math.MinInt64, math.MaxInt64, math.MinInt64}, {0, 0, 0}},
			Samples: []Sample{{Seq: math.MinInt64, LatencyNs: math.MaxInt64, Generative: true, FirstTokenNs: math.MinInt64, OutputTokens: math.MaxInt64}, {Seq: math.MaxInt64, LatencyNs: math.MinInt64}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := Append([]byte("prefix"), tc.c)
			if !bytes.HasPrefix(b, []byte("prefix")) {
				t.Fatal("Append overwrote dst")
			}
			got, err := Decode(b[len("prefix"):], Limits{})
			if err != nil {
				t.Fatal(err)
			}
			want := *tc.c
			norm(&want)
			norm(got)
			if !reflect.DeepEqual(got, &want) {
				t.Errorf("round trip:\n got %+v\nwant %+v", got, &want)
			}
		})
	}
}

// norm makes empty slices nil, as the decoder gives them.
func norm(c *Chunk) {
	if len(c.Issues) == 0 {
		c.Issues = nil
	}
	if len(c.Samples) == 0 {
		c.Samples = nil
	}
	if c.End != nil && len(c.End.Messages) == 0 {
		c.End.Messages = nil
	}
	if c.End != nil && len(c.End.ByKind) == 0 {
		c.End.ByKind = nil
	}
	if c.End != nil && len(c.End.ITL) == 0 {
		c.End.ITL = nil
	}
}

// randChunk is a chunk a worker might send, and some it would not: any
// values the format can carry.
func randChunk(rng *rand.Rand) *Chunk {
	c := &Chunk{RunID: randString(rng, 40), Worker: randString(rng, 20), Shards: 1 + rng.IntN(64), Seq: rng.Uint64() >> rng.IntN(64)}
	c.Shard = rng.IntN(c.Shards)
	q, s := int64(c.Shard), int64(rng.IntN(1000))
	for range rng.IntN(200) {
		q += int64(c.Shards) * int64(1+rng.IntN(3))
		s += int64(rng.IntN(2_000_000))
		c.Issues = append(c.Issues, Issue{Query: q, ScheduledNs: s, IssuedNs: s + int64(rng.IntN(100_000)) - 5000})
	}
	if rng.IntN(10) == 0 { // values no worker sends, that still round-trip
		c.Issues = append(c.Issues, Issue{Query: rng.Int64() - rng.Int64(), ScheduledNs: rng.Int64() - rng.Int64(), IssuedNs: rng.Int64()})
	}
	kinds := []string{"timeout", "http 500", "", "connection reset"}
	for range rng.IntN(200) {
		sm := Sample{Seq: rng.Int64N(1 << 40), LatencyNs: rng.Int64N(1 << uint(1+rng.IntN(62)))}
		if rng.IntN(4) == 0 {
			sm.Failed, sm.Kind = true, kinds[rng.IntN(len(kinds))]
		}
		if rng.IntN(2) == 0 {
			sm.Generative, sm.FirstTokenNs, sm.OutputTokens, sm.InputTokens = true, rng.Int64N(sm.LatencyNs+1), rng.Int64N(1<<20), rng.Int64N(1<<20)
			sm.TokensFromServer, sm.Burst = rng.IntN(2) == 0, rng.IntN(3) == 0
		}
		c.Samples = append(c.Samples, sm)
	}
	if rng.IntN(3) == 0 {
		c.End = &End{StopReason: randString(rng, 100), Issued: rng.Int64N(1 << 40), Completed: rng.Int64N(1 << 40), Failed: rng.Int64N(1000),
			Unanswered: rng.Int64N(1000), LatenessP50Ns: rng.Int64N(1e6) - 1000, LatenessP99Ns: rng.Int64N(1e9), LatenessMaxNs: rng.Int64(), Resent: rng.Int64N(10),
			MaxOutstanding: rng.Int64N(4096), Streaming: rng.Int64N(10)}
		for range rng.IntN(5) {
			c.End.Messages = append(c.End.Messages, randString(rng, 200))
		}
		for range rng.IntN(50) {
			c.End.ITL = append(c.End.ITL, Bucket{rng.Int64N(1 << 42), rng.Int64N(1 << 30)})
		}
		for range rng.IntN(5) {
			c.End.ByKind = append(c.End.ByKind, KindCount{randString(rng, 20), rng.Int64N(1 << 30), randString(rng, 100)})
		}
	}
	return c
}

func randString(rng *rand.Rand, n int) string {
	b := make([]byte, rng.IntN(n+1))
	for i := range b {
		b[i] = byte(rng.IntN(256))
	}
	return string(b)
}

func TestRoundTripRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 1))
	var enc Encoder
	var buf []byte
	var into Chunk // reused: DecodeInto must not leak one chunk into the next
	for i := range 2000 {
		c := randChunk(rng)
		buf = enc.Append(buf[:0], c)
		if err := DecodeInto(&into, buf, Limits{}); err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
		norm(c)
		norm(&into)
		if !reflect.DeepEqual(&into, c) {
			t.Fatalf("chunk %d round trip:\n got %+v\nwant %+v", i, &into, c)
		}
	}
}

func TestEveryTruncationIsAnError(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 2))
	chunks := []*Chunk{tensorChunk(), genChunk(), {Shards: 1}}
	for range 20 {
		chunks = append(chunks, randChunk(rng))
	}
	for ci, c := range chunks {
		b := Append(nil, c)
		for n := range len(b) {
			_, err := Decode(b[:n], Limits{})
			var de *DecodeError
			if !errors.As(err, &de) || !errors.Is(err, ErrTruncated) {
				t.Fatalf("chunk %d cut at %d of %d bytes: %v, want a DecodeError wrapping ErrTruncated", ci, n, len(b), err)
			}
			if de.Offset < 0 || de.Offset > n {
				t.Fatalf("chunk %d cut at %d: error at offset %d, outside the bytes", ci, n, de.Offset)
			}
		}
	}
}

func TestRefusedBeforeAllocating(t *testing.T) {
	head := func(flags uint64) []byte {
		b := append([]byte(magic), Version)
		b = binary.AppendUvarint(b, flags)
		b = appendString(b, "run")
		b = appendString(b, "w")
		return append(b, 0, 1, 0) // shard 0 of 1, seq 0
	}
	huge := func(b []byte, n uint64) []byte { return binary.AppendUvarint(b, n) }
	for _, tc := range []struct {
		name  string
		b     []byte
		want  error
		field string
	}{
		{"kinds over the limit", huge(head(0), 1<<40), ErrLimit, "kinds"},
		{"issues over the limit", huge(append(head(0), 0), 1<<40), ErrLimit, "issues"},
		{"issues more than the bytes hold", huge(append(head(0), 0), 1<<20), ErrTruncated, "issues"},
		{"samples more than the bytes hold", huge(append(head(0), 0, 0), 1<<20), ErrTruncated, "samples"},
		{"string over the limit", huge(append([]byte(magic), Version, 0), 1<<40), ErrLimit, "run id"},
		{"string longer than the bytes", huge(append([]byte(magic), Version, 0), 4000), ErrTruncated, "run id"},
		{"messages more than the bytes hold", huge(append(append(head(flagEnd), 0, 0, 0), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), 1000), ErrTruncated, "end messages"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range 10 {
				_, err = Decode(tc.b, Limits{})
			}
			runtime.ReadMemStats(&after)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("Decode: %v, want %v naming %q", err, tc.want, tc.field)
			}
			if per := (after.TotalAlloc - before.TotalAlloc) / 10; per > 4096 {
				t.Errorf("refusing it allocated %d bytes a call: the count was believed", per)
			}
		})
	}
}

func TestLimits(t *testing.T) {
	b := Append(nil, genChunk())
	for _, tc := range []struct {
		lim   Limits
		field string
	}{
		{Limits{MaxBytes: len(b) - 1}, "chunk"},
		{Limits{MaxRecords: 2}, "issues"},
		{Limits{MaxString: 10}, "end stop reason"},
		{Limits{MaxKinds: 1}, "kinds"},
		{Limits{MaxMessage: 1}, "end messages"},
	} {
		_, err := Decode(b, tc.lim)
		if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("Decode with %+v: %v, want ErrLimit naming %q", tc.lim, err, tc.field)
		}
	}
	if _, err := Decode(b, Limits{MaxBytes: len(b), MaxRecords: 6, MaxString: 40, MaxKinds: 3, MaxMessage: 2}); err != nil {
		t.Errorf("Decode at exactly its limits: %v", err)
	}
}

func TestMalformed(t *testing.T) {
	good := Append(nil, tensorChunk())
	edit := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	for _, tc := range []struct {
		name, field string
		b           []byte
		at          int
	}{
		{"not a chunk", "magic", []byte(`{"error":"bad gateway"}`), 0},
		{"another version", "version", edit(func(b []byte) []byte { b[4] = 2; return b }), 4},
		{"unknown chunk flag", "flags", edit(func(b []byte) []byte { b[5] = 4; return b }), 5},
		{"trailing bytes", "after the chunk", append(bytes.Clone(good), 0), len(good)},
		{"shard not below shards", "shard", Append(nil, &Chunk{Shard: 3, Shards: 3}), 8},
		{"no shards", "shard", Append(nil, &Chunk{}), 8},
		{"overlong varint", "run id", append([]byte(magic+"\x01\x00"), bytes.Repeat([]byte{0xff}, 11)...), 6},
		{"kind index past the table", "sample 0: kind", append(append([]byte(magic+"\x01\x00"), 0, 0, 0, 1, 0, 0, 0, 1), 1, 0, 0, 9), 17},
		{"unknown sample flag", "sample 0: flags", append(append([]byte(magic+"\x01\x00"), 0, 0, 0, 1, 0, 0, 0, 1), 16, 0, 0), 14},
		{"negative tokens", "sample 0: output tokens", append(append(append([]byte(magic+"\x01\x00"), 0, 0, 0, 1, 0, 0, 0, 1), 2, 0, 0, 0),
			0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0), 18},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(tc.b, Limits{})
			var de *DecodeError
			if !errors.As(err, &de) || !errors.Is(err, ErrMalformed) {
				t.Fatalf("Decode: %v, want a DecodeError wrapping ErrMalformed", err)
			}
			if !strings.Contains(err.Error(), tc.field) || de.Offset != tc.at {
				t.Errorf("Decode: %v (offset %d), want it to name %q at byte %d", err, de.Offset, tc.field, tc.at)
			}
		})
	}
}

func TestGarbageNeverPanics(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 3))
	good := Append(nil, genChunk())
	for range 20000 {
		b := bytes.Clone(good)
		for range 1 + rng.IntN(4) {
			b[rng.IntN(len(b))] = byte(rng.IntN(256))
		}
		c, err := Decode(b, Limits{})
		if (c == nil) == (err == nil) {
			t.Fatalf("Decode gave chunk %v and error %v", c, err)
		}
		var de *DecodeError
		if err != nil && !errors.As(err, &de) {
			t.Fatalf("Decode: %v is not a DecodeError", err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(Append(nil, tensorChunk()))
	f.Add(Append(nil, genChunk()))
	f.Add(Append(nil, &Chunk{Shards: 1}))
	f.Add([]byte(magic))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Decode(b, Limits{MaxBytes: 1 << 20, MaxRecords: 1 << 14})
		if err != nil {
			var de *DecodeError
			if c != nil || !errors.As(err, &de) || de.Offset < 0 || de.Offset > len(b) {
				t.Fatalf("Decode: chunk %v, error %v (offset outside the input, or not a DecodeError)", c, err)
			}
			return
		}
		// What decodes re-encodes to the same bytes, but for varints a
		// hostile encoder made longer than they need be.
		again, err := Decode(Append(nil, c), Limits{})
		if err != nil {
			t.Fatalf("re-encoded chunk does not decode: %v", err)
		}
		norm(c)
		norm(again)
		if !reflect.DeepEqual(c, again) {
			t.Fatalf("decode, encode, decode differs:\n%+v\n%+v", c, again)
		}
	})
}
