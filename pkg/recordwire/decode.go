package recordwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The kinds of decoding failure, for errors.Is.
var (
	// ErrTruncated: the chunk ends inside a field.
	ErrTruncated = errors.New("truncated")
	// ErrLimit: a size, count or string length exceeds the decoder's Limits
	// (checked before anything is allocated for it).
	ErrLimit = errors.New("over the limit")
	// ErrMalformed: bytes that no encoder writes (a bad magic, an unknown
	// version or flag, an overlong varint, a value out of its range,
	// trailing bytes).
	ErrMalformed = errors.New("malformed")
)

// DecodeError says what is wrong with a chunk and where.
type DecodeError struct {
	Offset int    // the byte offset of the field in the chunk
	Field  string // the field, e.g. "sample 12 latency"
	Err    error  // ErrTruncated, ErrLimit or ErrMalformed, wrapped with the detail
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("recordwire: chunk byte %d, %s: %v", e.Offset, e.Field, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// Limits bound what Decode accepts from a peer. A zero field takes its
// default (DefaultLimits).
type Limits struct {
	MaxBytes   int // the whole chunk
	MaxRecords int // issue records, and sample records, each
	MaxString  int // any one string: run id, worker, kind, stop reason, message
	MaxKinds   int // the kinds table, and the end's failures by kind
	MaxMessage int // the end's kept failure messages
}

// DefaultLimits fit a chunk of a few seconds of a fast worker (a chunk a
// 200 ms interval holds ~20,000 records, ~150 KB) with room to spare, and
// keep a hostile peer's chunk to tens of megabytes of memory.
func DefaultLimits() Limits {
	return Limits{MaxBytes: 32 << 20, MaxRecords: 1 << 21, MaxString: 4096, MaxKinds: 256, MaxMessage: 1024}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	l.MaxBytes = orDefault(l.MaxBytes, d.MaxBytes)
	l.MaxRecords = orDefault(l.MaxRecords, d.MaxRecords)
	l.MaxString = orDefault(l.MaxString, d.MaxString)
	l.MaxKinds = orDefault(l.MaxKinds, d.MaxKinds)
	l.MaxMessage = orDefault(l.MaxMessage, d.MaxMessage)
	return l
}

func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// The fewest bytes a record can take: a count that claims more records than
// the bytes left could hold is refused before its slice is allocated.
const (
	minIssueBytes  = 3
	minSampleBytes = 3
	minStringBytes = 1
)

// Decode decodes one chunk. It never panics, and allocates only what the
// bytes present can fill.
func Decode(b []byte, lim Limits) (*Chunk, error) {
	c := new(Chunk)
	if err := DecodeInto(c, b, lim); err != nil {
		return nil, err
	}
	return c, nil
}

// DecodeInto decodes one chunk into c, reusing its Issues and Samples
// arrays (the coordinator's receiver decodes every worker's chunks into
// one, under its lock). On error c holds a partial chunk.
func DecodeInto(c *Chunk, b []byte, lim Limits) error {
	lim = lim.withDefaults()
	d := decoder{b: b, lim: lim}
	if len(b) > lim.MaxBytes {
		return &DecodeError{Offset: 0, Field: "chunk", Err: fmt.Errorf("%w: %d bytes, at most %d", ErrLimit, len(b), lim.MaxBytes)}
	}
	flags := d.header(c)
	kinds := d.kinds()
	d.issues(c)
	d.samples(c, kinds)
	c.End = nil
	if flags&flagEnd != 0 && d.err == nil {
		c.End = d.end()
	}
	if d.err == nil && d.off != len(b) {
		d.fail("chunk", fmt.Errorf("%w: %d bytes after the chunk's end", ErrMalformed, len(b)-d.off))
	}
	return d.err
}

// decoder reads fields in order; after the first error every read is a
// no-op returning zero, so the callers check once.
type decoder struct {
	b   []byte
	off int
	lim Limits
	err error
}

func (d *decoder) fail(field string, err error) {
	if d.err == nil {
		d.err = &DecodeError{Offset: d.off, Field: field, Err: err}
	}
}

func (d *decoder) u(field string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	switch {
	case n == 0:
		d.fail(field, ErrTruncated)
		return 0
	case n < 0:
		d.fail(field, fmt.Errorf("%w: varint overflows 64 bits", ErrMalformed))
		return 0
	}
	d.off += n
	return v
}

// z reads a zigzag varint.
func (d *decoder) z(field string) int64 {
	v := d.u(field)
	return int64(v>>1) ^ -int64(v&1)
}

// n reads a non-negative int64 (a count of things, tokens).
func (d *decoder) n(field string) int64 {
	at := d.off
	v := d.u(field)
	if v > math.MaxInt64 {
		d.off = at
		d.fail(field, fmt.Errorf("%w: %d is out of range", ErrMalformed, v))
		return 0
	}
	return int64(v)
}

// count reads a count of items of at least min bytes each, refused when
// over max or over what the remaining bytes could hold.
func (d *decoder) count(field string, limit, min int) int {
	at := d.off
	v := d.u(field)
	if d.err != nil {
		return 0
	}
	if v > uint64(limit) {
		d.off = at
		d.fail(field, fmt.Errorf("%w: %d, at most %d", ErrLimit, v, limit))
		return 0
	}
	if v*uint64(min) > uint64(len(d.b)-d.off) {
		d.off = at
		d.fail(field, fmt.Errorf("%w: %d items need at least %d bytes, %d left", ErrTruncated, v, v*uint64(min), len(d.b)-d.off))
		return 0
	}
	return int(v)
}

func (d *decoder) str(field string) string {
	at := d.off
	v := d.u(field + " length")
	if d.err != nil {
		return ""
	}
	if v > uint64(d.lim.MaxString) {
		d.off = at
		d.fail(field, fmt.Errorf("%w: %d bytes, at most %d", ErrLimit, v, d.lim.MaxString))
		return ""
	}
	if v > uint64(len(d.b)-d.off) {
		d.fail(field, fmt.Errorf("%w: %d bytes, %d left", ErrTruncated, v, len(d.b)-d.off))
		return ""
	}
	s := string(d.b[d.off : d.off+int(v)])
	d.off += int(v)
	return s
}

func (d *decoder) header(c *Chunk) uint64 {
	if len(d.b) < len(magic) {
		d.fail("magic", ErrTruncated)
		return 0
	}
	if string(d.b[:len(magic)]) != magic {
		d.fail("magic", fmt.Errorf("%w: %q is not a record chunk's %q", ErrMalformed, d.b[:len(magic)], magic))
		return 0
	}
	d.off = len(magic)
	at := d.off
	if v := d.u("version"); d.err == nil && v != Version {
		d.off = at
		d.fail("version", fmt.Errorf("%w: version %d, this build reads %d", ErrMalformed, v, Version))
	}
	at = d.off
	flags := d.u("flags")
	if d.err == nil && flags&^flagEnd != 0 {
		d.off = at
		d.fail("flags", fmt.Errorf("%w: unknown flags %#x", ErrMalformed, flags&^flagEnd))
	}
	c.RunID = d.str("run id")
	c.Worker = d.str("worker")
	at = d.off
	shard, shards := d.u("shard"), d.u("shards")
	if d.err == nil && (shards == 0 || shards > math.MaxInt32 || shard >= shards) {
		d.off = at
		d.fail("shard", fmt.Errorf("%w: shard %d of %d", ErrMalformed, shard, shards))
	}
	c.Shard, c.Shards = int(shard), int(shards)
	c.Seq = d.u("seq")
	return flags
}

func (d *decoder) kinds() []string {
	n := d.count("kinds", d.lim.MaxKinds, minStringBytes)
	if n == 0 {
		return nil
	}
	kinds := make([]string, n)
	for i := range kinds {
		kinds[i] = d.str("kind")
	}
	return kinds
}

func (d *decoder) issues(c *Chunk) {
	n := d.count("issues", d.lim.MaxRecords, minIssueBytes)
	c.Issues = grow(c.Issues, n)
	var q, s int64
	for i := range c.Issues {
		q += d.z("issue query")
		s += d.z("issue scheduled")
		c.Issues[i] = Issue{Query: q, ScheduledNs: s, IssuedNs: s + d.z("issue issued")}
		if d.err != nil {
			d.err.(*DecodeError).Field = fmt.Sprintf("issue %d: %s", i, d.err.(*DecodeError).Field)
			return
		}
	}
}

func (d *decoder) samples(c *Chunk, kinds []string) {
	n := d.count("samples", d.lim.MaxRecords, minSampleBytes)
	c.Samples = grow(c.Samples, n)
	var seq int64
	for i := range c.Samples {
		s := &c.Samples[i]
		*s = Sample{}
		at := d.off
		f := d.u("flags")
		if d.err == nil && f&^sampleFlags != 0 {
			d.off = at
			d.fail("flags", fmt.Errorf("%w: unknown flags %#x", ErrMalformed, f))
		}
		seq += d.z("seq")
		s.Seq, s.LatencyNs = seq, d.z("latency")
		s.Failed, s.Generative = f&sampleFailed != 0, f&sampleTokens != 0
		s.TokensFromServer, s.Burst = f&sampleFromServer != 0, f&sampleBurst != 0
		if s.Failed {
			at := d.off
			k := d.u("kind")
			if d.err == nil && k >= uint64(len(kinds)) {
				d.off = at
				d.fail("kind", fmt.Errorf("%w: index %d, the table has %d", ErrMalformed, k, len(kinds)))
			} else if d.err == nil {
				s.Kind = kinds[k]
			}
		}
		if s.Generative {
			s.FirstTokenNs, s.OutputTokens, s.InputTokens = d.z("first token"), d.n("output tokens"), d.n("input tokens")
		}
		if d.err != nil {
			d.err.(*DecodeError).Field = fmt.Sprintf("sample %d: %s", i, d.err.(*DecodeError).Field)
			return
		}
	}
}

func (d *decoder) end() *End {
	e := &End{StopReason: d.str("end stop reason")}
	e.Issued, e.Completed, e.Failed, e.Unanswered = d.n("end issued"), d.n("end completed"), d.n("end failed"), d.n("end unanswered")
	e.LatenessP50Ns, e.LatenessP99Ns, e.LatenessMaxNs = d.z("end lateness p50"), d.z("end lateness p99"), d.z("end lateness max")
	e.Resent, e.MaxOutstanding, e.Streaming = d.n("end resent"), d.n("end max outstanding"), d.n("end streaming")
	if n := d.count("end messages", d.lim.MaxMessage, minStringBytes); n > 0 {
		e.Messages = make([]string, n)
		for i := range e.Messages {
			e.Messages[i] = d.str("end message")
		}
	}
	if n := d.count("end failures by kind", d.lim.MaxKinds, 2*minStringBytes+1); n > 0 {
		e.ByKind = make([]KindCount, n)
		for i := range e.ByKind {
			e.ByKind[i] = KindCount{Kind: d.str("end kind"), Count: d.n("end kind count"), Example: d.str("end kind example")}
		}
	}
	if n := d.count("end ITL buckets", d.lim.MaxRecords, 2); n > 0 {
		e.ITL = make([]Bucket, n)
		for i := range e.ITL {
			e.ITL[i] = Bucket{ValueNs: d.n("end ITL value"), Count: d.n("end ITL count")}
		}
	}
	return e
}

// grow returns s with length n, reusing its array when it is large enough.
func grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}
