package stats

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// v2Payload undoes a V2 compressed encoding (base64 text or raw bytes):
// the cookie is checked and the zlib stream inflated.
func v2Payload(t *testing.T, enc []byte) []byte {
	t.Helper()
	if raw, err := base64.StdEncoding.DecodeString(string(enc)); err == nil {
		enc = raw
	}
	if len(enc) < 8 {
		t.Fatalf("encoding of %d bytes", len(enc))
	}
	if c := int32(binary.BigEndian.Uint32(enc)); c != hlogCompressedCookie {
		t.Fatalf("cookie %#x, want %#x", c, hlogCompressedCookie)
	}
	if n := int(binary.BigEndian.Uint32(enc[4:])); n != len(enc)-8 {
		t.Fatalf("compressed length %d, have %d bytes", n, len(enc)-8)
	}
	zr, err := zlib.NewReader(bytes.NewReader(enc[8:]))
	if err != nil {
		t.Fatal(err)
	}
	p, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The encoder's payload is hdrhistogram-go's, byte for byte, before
// compression: the same header, the same counts, the same runs of zeros,
// for histograms empty, narrow, wide (counts and zero runs that need every
// LEB128 length) and clamped.
func TestHlogEncoderPayloadIsTheLibrarys(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := map[string]func(h *hdrhistogram.Histogram){
		"empty": func(*hdrhistogram.Histogram) {},
		"one":   func(h *hdrhistogram.Histogram) { _ = h.RecordValue(250_000) },
		"narrow": func(h *hdrhistogram.Histogram) {
			for range 5000 {
				_ = h.RecordValue(200_000 + rng.Int64N(50_000))
			}
		},
		"wide": func(h *hdrhistogram.Histogram) {
			for range 20000 {
				_ = h.RecordValue(HistogramMin + rng.Int64N(HistogramMax-HistogramMin))
			}
		},
		"huge counts": func(h *hdrhistogram.Histogram) {
			_ = h.RecordValues(1_000_000, 1<<40)
			_ = h.RecordValues(2_000_000, 1<<62)
			_ = h.RecordValues(HistogramMax, 3)
		},
		"below the range": func(h *hdrhistogram.Histogram) { _ = h.RecordValues(1, 7) },
	}
	for name, fill := range cases {
		t.Run(name, func(t *testing.T) {
			h := NewHistogram()
			fill(h)
			lib, err := h.EncodeV2()
			if err != nil {
				t.Fatal(err)
			}
			var e hlogEncoder
			for range 2 { // and again, with the compressor reused
				if err := e.encode(h); err != nil {
					t.Fatal(err)
				}
				got, want := v2Payload(t, e.compressed.Bytes()), v2Payload(t, lib)
				if !bytes.Equal(got, want) {
					t.Fatalf("payload differs from hdrhistogram-go's:\n got %x\nwant %x", got, want)
				}
			}
			back, err := hdrhistogram.Decode([]byte(base64.StdEncoding.EncodeToString(e.compressed.Bytes())))
			if err != nil {
				t.Fatalf("hdrhistogram-go cannot decode it: %v", err)
			}
			if !back.Equals(h) {
				t.Error("decoded histogram differs")
			}
		})
	}
}

// Interval lines read the same as hdrhistogram-go's writer's: the same
// text before the payload, the same histogram after it.
func TestIntervalLinesMatchTheLibraryWriter(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	h := NewHistogram()
	for i := range 3000 {
		_ = h.RecordValue(int64(150_000 + 37*i))
	}
	ivs := []LogInterval{
		{Start: 0, Length: time.Second, Histogram: h, Tag: "sample"},
		{Start: 1500 * time.Millisecond, Length: 1234 * time.Millisecond, Histogram: h},
	}
	var ours, lib bytes.Buffer
	if err := WriteIntervalLog(&ours, start, "c", ivs); err != nil {
		t.Fatal(err)
	}
	if err := libraryIntervalLines(&lib, start, ivs); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(ours.String()), "\n") {
		if !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "\"") {
			got = append(got, l)
		}
	}
	want := strings.Split(strings.TrimSpace(lib.String()), "\n")
	if len(got) != len(want) {
		t.Fatalf("%d interval lines, the library wrote %d:\n%s", len(got), len(want), ours.String())
	}
	for i := range want {
		gi, wi := strings.LastIndexByte(got[i], ','), strings.LastIndexByte(want[i], ',')
		if got[i][:gi] != want[i][:wi] {
			t.Errorf("line %d: %q, the library's %q", i, got[i][:gi], want[i][:wi])
		}
		if !bytes.Equal(v2Payload(t, []byte(got[i][gi+1:])), v2Payload(t, []byte(want[i][wi+1:]))) {
			t.Errorf("line %d: payload differs", i)
		}
	}
}

// libraryIntervalLines writes ivs' interval lines with hdrhistogram-go's
// log writer, as this package did before its own encoder: a copy of each
// histogram stamped with the interval's times and tag.
func libraryIntervalLines(w io.Writer, start time.Time, ivs []LogInterval) error {
	lw := hdrhistogram.NewHistogramLogWriter(w)
	lw.SetBaseTime(start.UnixMilli())
	for _, iv := range ivs {
		c := iv.Histogram.Clone()
		c.SetStartTimeMs(start.UnixMilli() + iv.Start.Milliseconds())
		c.SetEndTimeMs(start.UnixMilli() + (iv.Start + iv.Length).Milliseconds())
		c.SetTag(iv.Tag)
		if err := lw.OutputIntervalHistogram(c); err != nil {
			return err
		}
	}
	return nil
}

func TestWriteIntervalLogRejectsABadTag(t *testing.T) {
	h := NewHistogram()
	for _, tag := range []string{"a,b", "a b", "x\n", ","} {
		err := WriteIntervalLog(io.Discard, time.Now(), "", []LogInterval{{Histogram: h, Tag: tag}})
		if !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("tag %q: %v", tag, err)
		}
	}
}

// BenchmarkWriteIntervalLog writes the log of a 20-second run (20 one-second
// intervals of 100 samples each, as at 100 QPS) with this package's
// encoder and, for the ratio, with hdrhistogram-go's writer as this
// package used it before (a stamped copy of each histogram, EncodeV2).
func BenchmarkWriteIntervalLog(b *testing.B) {
	start := time.Now()
	ivs := make([]LogInterval, 20)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range ivs {
		h := NewHistogram()
		for range 100 {
			_ = h.RecordValue(250_000 + rng.Int64N(500_000))
		}
		ivs[i] = LogInterval{Start: time.Duration(i) * time.Second, Length: time.Second, Histogram: h}
	}
	b.Run("encoder", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := WriteIntervalLog(io.Discard, start, "bench", ivs); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("library", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := libraryIntervalLines(io.Discard, start, ivs); err != nil {
				b.Fatal(err)
			}
		}
	})
}
