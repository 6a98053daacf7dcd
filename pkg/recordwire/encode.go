package recordwire

import "encoding/binary"

// The layout, every integer a varint (u: unsigned; z: zigzag, signed):
//
//	"NLRW" u:version u:flags(1: End follows)
//	str:run id  str:worker  u:shard  u:shards  u:seq
//	u:kinds  kinds × str
//	u:issues  issues × (z:query−previous z:scheduled−previous z:issued−scheduled)
//	u:samples samples × (u:flags(1 failed, 2 tokens, 4 tokens from server, 8 burst) z:seq−previous z:latency
//	                     [u:kind index, failed] [z:first token u:output u:input, tokens])
//	[End: str:stop reason u:issued u:completed u:failed u:unanswered
//	      z:lateness p50 z:p99 z:max u:resent u:max outstanding u:streaming u:messages × str u:kinds × (str u:count str:example)
//	      u:ITL buckets × (u:value u:count)]
//
// where str is u:length and the bytes. Deltas run from 0 at the chunk's
// start, so each chunk decodes alone. A shard's queries ascend and its
// times mostly do, so a tensor sample costs ~5 bytes and an issue ~6
// (BenchmarkAppend). Differences wrap (two's complement), so any int64
// round-trips: the encoder has no error to return.

const (
	flagEnd = 1 << iota
)

const (
	sampleFailed = 1 << iota
	sampleTokens
	sampleFromServer
	sampleBurst
	sampleFlags = sampleFailed | sampleTokens | sampleFromServer | sampleBurst
)

// Encoder encodes chunks, keeping its scratch (the kinds table) between
// calls so that a worker's steady state allocates nothing but the bytes'
// growth. Not safe for concurrent use; the zero value is ready.
type Encoder struct {
	kinds []string
}

// Append encodes c after dst and returns the extended slice (a convenience
// with a fresh Encoder; a worker keeps one).
func Append(dst []byte, c *Chunk) []byte {
	var e Encoder
	return e.Append(dst, c)
}

// Append encodes c after dst and returns the extended slice.
func (e *Encoder) Append(dst []byte, c *Chunk) []byte {
	flags := uint64(0)
	if c.End != nil {
		flags |= flagEnd
	}
	dst = append(dst, magic...)
	dst = binary.AppendUvarint(dst, Version)
	dst = binary.AppendUvarint(dst, flags)
	dst = appendString(dst, c.RunID)
	dst = appendString(dst, c.Worker)
	dst = binary.AppendUvarint(dst, uint64(c.Shard))
	dst = binary.AppendUvarint(dst, uint64(c.Shards))
	dst = binary.AppendUvarint(dst, c.Seq)

	e.kinds = e.kinds[:0]
	for i := range c.Samples {
		if c.Samples[i].Failed {
			e.kindIndex(c.Samples[i].Kind)
		}
	}
	dst = binary.AppendUvarint(dst, uint64(len(e.kinds)))
	for _, k := range e.kinds {
		dst = appendString(dst, k)
	}

	dst = binary.AppendUvarint(dst, uint64(len(c.Issues)))
	var pq, ps int64
	for _, is := range c.Issues {
		dst = appendZ(dst, is.Query-pq)
		dst = appendZ(dst, is.ScheduledNs-ps)
		dst = appendZ(dst, is.IssuedNs-is.ScheduledNs)
		pq, ps = is.Query, is.ScheduledNs
	}

	dst = binary.AppendUvarint(dst, uint64(len(c.Samples)))
	var pseq int64
	for i := range c.Samples {
		dst = e.appendSample(dst, &c.Samples[i], pseq)
		pseq = c.Samples[i].Seq
	}
	if c.End != nil {
		dst = appendEnd(dst, c.End)
	}
	return dst
}

func (e *Encoder) appendSample(dst []byte, s *Sample, prevSeq int64) []byte {
	f := uint64(0)
	if s.Failed {
		f |= sampleFailed
	}
	if s.Generative {
		f |= sampleTokens
	}
	if s.TokensFromServer {
		f |= sampleFromServer
	}
	if s.Burst {
		f |= sampleBurst
	}
	dst = binary.AppendUvarint(dst, f)
	dst = appendZ(dst, s.Seq-prevSeq)
	dst = appendZ(dst, s.LatencyNs)
	if s.Failed {
		dst = binary.AppendUvarint(dst, uint64(e.kindIndex(s.Kind)))
	}
	if s.Generative {
		dst = appendZ(dst, s.FirstTokenNs)
		dst = binary.AppendUvarint(dst, uint64(s.OutputTokens))
		dst = binary.AppendUvarint(dst, uint64(s.InputTokens))
	}
	return dst
}

// kindIndex is k's index in the chunk's kinds table, added when new. A
// linear scan: a run has a handful of failure kinds, and a map would cost
// more than it saves.
func (e *Encoder) kindIndex(k string) int {
	for i, have := range e.kinds {
		if have == k {
			return i
		}
	}
	e.kinds = append(e.kinds, k)
	return len(e.kinds) - 1
}

func appendEnd(dst []byte, e *End) []byte {
	dst = appendString(dst, e.StopReason)
	for _, v := range [...]int64{e.Issued, e.Completed, e.Failed, e.Unanswered} {
		dst = binary.AppendUvarint(dst, uint64(v))
	}
	for _, v := range [...]int64{e.LatenessP50Ns, e.LatenessP99Ns, e.LatenessMaxNs} {
		dst = appendZ(dst, v)
	}
	for _, v := range [...]int64{e.Resent, e.MaxOutstanding, e.Streaming} {
		dst = binary.AppendUvarint(dst, uint64(v))
	}
	dst = binary.AppendUvarint(dst, uint64(len(e.Messages)))
	for _, m := range e.Messages {
		dst = appendString(dst, m)
	}
	dst = binary.AppendUvarint(dst, uint64(len(e.ByKind)))
	for _, k := range e.ByKind {
		dst = appendString(dst, k.Kind)
		dst = binary.AppendUvarint(dst, uint64(k.Count))
		dst = appendString(dst, k.Example)
	}
	dst = binary.AppendUvarint(dst, uint64(len(e.ITL)))
	for _, b := range e.ITL {
		dst = binary.AppendUvarint(dst, uint64(b.ValueNs))
		dst = binary.AppendUvarint(dst, uint64(b.Count))
	}
	return dst
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// appendZ appends v zigzag-encoded: small magnitudes of either sign are
// short.
func appendZ(dst []byte, v int64) []byte {
	return binary.AppendUvarint(dst, uint64(v<<1)^uint64(v>>63))
}
