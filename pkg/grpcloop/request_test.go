package grpcloop

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2/hpack"

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

func TestResponseOutcome(t *testing.T) {
	ok := func(r *response) {
		r.field(":status", "200", false)
		r.field("content-type", "application/grpc", false)
		r.endBlock()
	}
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
		err := r.result()
		if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if got := percentDecode("a%20b%zz%2"); got != "a b%zz%2" {
		t.Errorf("percentDecode = %q", got)
	}
}
