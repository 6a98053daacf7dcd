package grpcloop

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2/hpack"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/netloadgen/netloadgen/kserve"
)

// Each form of the header block carries the same fields to one HPACK
// decoder, in the order a connection sends them: lit before priming and
// after, prime once, indexed from then on.
func TestRequestEncoding(t *testing.T) {
	msg := []byte("hello")
	long := strings.Repeat("a", 300) // a length beyond one byte's prefix
	r, err := NewRequest(ModelInferPath+long, "h:1", 1500*time.Millisecond, msg)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{":method": "POST", ":scheme": "http", ":path": ModelInferPath + long, ":authority": "h:1",
		"content-type": "application/grpc", "te": "trailers", "grpc-timeout": "1500000u"}
	var got map[string]string
	dec := hpack.NewDecoder(defaultHeaderTable, func(f hpack.HeaderField) { got[f.Name] = f.Value })
	for _, form := range []struct {
		name  string
		block []byte
	}{{"lit", r.lit}, {"prime", r.prime}, {"indexed", r.indexed}, {"lit after prime", r.lit}, {"indexed again", r.indexed}} {
		got = map[string]string{}
		if _, err := dec.Write(form.block); err != nil {
			t.Fatalf("%s: %v", form.name, err)
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d fields %v, want %d", form.name, len(got), got, len(want))
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s = %q, want %q", form.name, k, got[k], v)
			}
		}
	}
	if len(r.indexed) != 2+len(want)-2 {
		t.Errorf("indexed block of %d bytes, want one a field", len(r.indexed))
	}
	size := 0 // §4.1: name, value and 32 bytes an entry, for every field but the static ones
	for k, v := range want {
		if k != ":method" && k != ":scheme" {
			size += len(k) + len(v) + 32
		}
	}
	if r.tableSize != size {
		t.Errorf("tableSize %d, want %d", r.tableSize, size)
	}
	if binary.BigEndian.Uint32(r.body[1:]) != uint32(len(msg)) || string(r.body[5:]) != "hello" {
		t.Errorf("body %q", r.body)
	}
}

func TestGRPCTimeout(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Millisecond: "1000000n", 100 * time.Millisecond: "100000u", 10 * time.Second: "10000000u",
		1000 * time.Second: "1000000m", 1001 * time.Nanosecond: "1001n", 48 * time.Hour: "172800S",
	} {
		if got := grpcTimeout(d); got != want {
			t.Errorf("grpcTimeout(%v) = %q, want %q", d, got, want)
		}
	}
}

// ok gives r the header block of a gRPC answer.
func ok(r *response) {
	r.field(":status", "200", false)
	r.field("content-type", "application/grpc", false)
	r.endBlock()
}

func TestResponseOutcome(t *testing.T) {
	cases := []struct {
		name  string
		build func(r *response)
		want  error
	}{
		{"answer in pieces", func(r *response) {
			ok(r)
			r.data([]byte{0, 0, 0})
			r.data([]byte{0, 3, 1})
			r.data([]byte{2, 3})
			r.field("grpc-status", "0", true)
		}, nil},
		{"status", func(r *response) { ok(r); r.field("grpc-status", "3", true) }, kserve.ErrInvalidArgument},
		{"HTTP 503", func(r *response) { r.field(":status", "503", false); r.endBlock() }, kserve.ErrUnavailable},
		{"no status", func(r *response) { ok(r); r.data([]byte{0, 0, 0, 0, 0}) }, kserve.ErrMalformed},
		{"cut", func(r *response) { ok(r); r.data([]byte{0, 0, 0, 0, 9, 1}); r.field("grpc-status", "0", true) }, kserve.ErrMalformed},
		{"two messages", func(r *response) {
			ok(r)
			r.data([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
			r.field("grpc-status", "0", true)
		}, kserve.ErrMalformed},
		{"no message", func(r *response) { ok(r); r.field("grpc-status", "0", true) }, kserve.ErrMalformed},
		{"not gRPC", func(r *response) {
			r.field(":status", "200", false)
			r.field("content-type", "text/html", false)
			r.endBlock()
			r.data([]byte{0, 0, 0, 0, 0})
			r.field("grpc-status", "0", true)
		}, kserve.ErrMalformed},
		{"bad flag", func(r *response) { ok(r); r.data([]byte{7, 0, 0, 0, 0}); r.field("grpc-status", "0", true) }, kserve.ErrMalformed},
	}
	for _, c := range cases {
		var r response
		r.reset()
		c.build(&r)
		err := r.result(nil, 0)
		if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if got := percentDecode("a%20b%zz%2"); got != "a b%zz%2" {
		t.Errorf("percentDecode = %q", got)
	}
}

// TestResponseKeepsTheMessageForTheCheck: the answer check gets the
// message's every top-level field but raw_output_contents (the tensor
// bytes, skipped as they arrive), whatever the DATA frames' cuts, and its
// error is the call's.
func TestResponseKeepsTheMessageForTheCheck(t *testing.T) {
	str := func(b []byte, num protowire.Number, v string) []byte {
		return protowire.AppendString(protowire.AppendTag(b, num, protowire.BytesType), v)
	}
	raw := func(n int) []byte {
		return protowire.AppendBytes(protowire.AppendTag(nil, 6, protowire.BytesType), make([]byte, n))
	}
	// Kept: every field but the raw contents, unknown ones too.
	kept := [][]byte{
		str(nil, 1, "m"), str(nil, 2, "1"),
		protowire.AppendVarint(protowire.AppendTag(nil, 7, protowire.VarintType), 1<<40),
		protowire.AppendFixed64(protowire.AppendTag(nil, 8, protowire.Fixed64Type), 5),
		protowire.AppendFixed32(protowire.AppendTag(nil, 9, protowire.Fixed32Type), 5),
		str(nil, 5, "output"),
	}
	want := bytes.Join(kept, nil)
	// The raw contents first (any order) and last.
	msg := bytes.Join([][]byte{kept[0], raw(300), bytes.Join(kept[1:], nil), raw(3)}, nil)
	framed := append([]byte{0, 0, 0, byte(len(msg) >> 8), byte(len(msg))}, msg...)
	errBad := errors.New("bad")
	for _, step := range []int{len(framed), 1, 7, 100} {
		var r response
		r.reset()
		ok(&r)
		for b := framed; len(b) > 0; b = b[min(step, len(b)):] {
			r.data(b[:min(step, len(b))])
		}
		r.field("grpc-status", "0", true)
		var got []byte
		err := r.result(func(tag uint64, m []byte) error {
			if tag != 9 {
				t.Errorf("tag %d, want 9", tag)
			}
			got = append([]byte(nil), m...)
			return errBad
		}, 9)
		if !bytes.Equal(got, want) || err != errBad {
			t.Errorf("step %d: the check saw %x and the call failed with %v; want %x and its error", step, got, err, want)
		}
	}
	// A message cut inside a field, or one using groups, is malformed.
	for name, m := range map[string][]byte{"cut in a field": msg[:len(msg)-2], "group": {0x0b, 0x0c}} {
		var r response
		r.reset()
		ok(&r)
		r.data(append([]byte{0, 0, 0, 0, byte(len(m))}, m...))
		r.field("grpc-status", "0", true)
		if err := r.result(func(uint64, []byte) error { return nil }, 0); !errors.Is(err, kserve.ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
}

// Metadata rides in every form of the block, after gRPC's own fields, and
// is counted in the table room priming takes.
func TestRequestMetadata(t *testing.T) {
	plain, err := NewRequest(ModelInferPath, "h:1", 0, []byte("m"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRequest(ModelInferPath, "ingress.example.com", 0, []byte("m"), "authorization", "Bearer t0k", "x-api-key", "k")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	dec := hpack.NewDecoder(defaultHeaderTable, func(f hpack.HeaderField) { got[f.Name] = f.Value })
	for _, block := range [][]byte{r.lit, r.prime, r.indexed} {
		clear(got)
		if _, err := dec.Write(block); err != nil {
			t.Fatal(err)
		}
		if got["authorization"] != "Bearer t0k" || got["x-api-key"] != "k" || got[":authority"] != "ingress.example.com" {
			t.Errorf("decoded %v", got)
		}
	}
	if want := plain.tableSize - len("h:1") + len("ingress.example.com") + len("authorization") + len("Bearer t0k") + 32 + len("x-api-key") + len("k") + 32; r.tableSize != want {
		t.Errorf("tableSize %d, want %d", r.tableSize, want)
	}
	if _, err := NewRequest(ModelInferPath, "h", 0, nil, "odd"); err == nil {
		t.Error("an odd metadata list was accepted")
	}
}
