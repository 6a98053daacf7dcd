package qsl

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/kserve"
)

func TestJSONForms(t *testing.T) {
	le := binary.LittleEndian
	b64 := func(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
	bytesEl := func(ss ...string) []byte {
		var b []byte
		for _, s := range ss {
			b = le.AppendUint32(b, uint32(len(s)))
			b = append(b, s...)
		}
		return b
	}
	cases := []struct {
		name      string
		md        kserve.ModelMetadata
		unbatched bool
		doc       string
		want      [][]want
	}{
		{
			name: "flat lists, content/shape and b64 for simple", md: simpleModel,
			doc: `{"data": [
				{"INPUT0": [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15], "INPUT1": {"b64": "` + b64(int32s(50, 16)) + `"}},
				{"INPUT0": {"content": [[16,17,18,19,20,21,22,23],[24,25,26,27,28,29,30,31]], "shape": [16]},
				 "INPUT1": {"content": {"b64": "` + b64(int32s(66, 16)) + `"}, "shape": [1, 16]}}
			]}`,
			want: [][]want{
				{{[]int64{16}, int32s(0, 16)}, {[]int64{16}, int32s(50, 16)}},
				{{[]int64{16}, int32s(16, 16)}, {[]int64{16}, int32s(66, 16)}},
			},
		},
		{
			name: "sequence streams are taken in order", md: model(input("x", kserve.Int32, -1, 1)),
			doc:  `{"data": [[{"x": [1]}, {"x": [2]}], [{"x": [3]}]]}`,
			want: [][]want{{{[]int64{1}, int32s(1, 1)}}, {{[]int64{1}, int32s(2, 1)}}, {{[]int64{1}, int32s(3, 1)}}},
		},
		{
			name: "BYTES strings and b64, variable dimension solved", md: model(input("s", kserve.Bytes, -1, -1)),
			doc:  `{"data": [{"s": ["ab", "", "\u00e9"]}, {"s": {"b64": "` + b64(bytesEl("x", "yz", "")) + `"}}]}`,
			want: [][]want{{{[]int64{3}, bytesEl("ab", "", "\u00e9")}}, {{[]int64{3}, bytesEl("x", "yz", "")}}},
		},
		{
			name: "every numeric datatype",
			md: model(input("b", kserve.Bool, 3), input("i8", kserve.Int8, 2), input("i16", kserve.Int16, 1), input("i64", kserve.Int64, 1),
				input("u8", kserve.Uint8, 1), input("u16", kserve.Uint16, 1), input("u32", kserve.Uint32, 1), input("u64", kserve.Uint64, 1),
				input("f16", kserve.FP16, 2), input("bf16", kserve.BF16, 1), input("f32", kserve.FP32, 1), input("f64", kserve.FP64, 1)),
			unbatched: true,
			doc: `{"data": [{"b": [true, false, 1], "i8": [-128, 127], "i16": [-2], "i64": [-9223372036854775808],
				"u8": [255], "u16": [65535], "u32": [4294967295], "u64": [18446744073709551615],
				"f16": [1, -0.5], "bf16": [1.0], "f32": [0.1], "f64": [0.1]}]}`,
			want: [][]want{{
				{[]int64{3}, []byte{1, 0, 1}}, {[]int64{2}, []byte{0x80, 0x7f}}, {[]int64{1}, []byte{0xfe, 0xff}},
				{[]int64{1}, le.AppendUint64(nil, 1<<63)},
				{[]int64{1}, []byte{0xff}}, {[]int64{1}, []byte{0xff, 0xff}}, {[]int64{1}, []byte{0xff, 0xff, 0xff, 0xff}},
				{[]int64{1}, le.AppendUint64(nil, math.MaxUint64)},
				{[]int64{2}, []byte{0x00, 0x3c, 0x00, 0xb8}}, {[]int64{1}, []byte{0x80, 0x3f}},
				{[]int64{1}, le.AppendUint32(nil, math.Float32bits(0.1))}, {[]int64{1}, le.AppendUint64(nil, math.Float64bits(0.1))},
			}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, t.TempDir(), "in.json", []byte(c.doc))
			f, err := Open(path, c.md, FilesOptions{Batched: !c.unbatched})
			if err != nil {
				t.Fatal(err)
			}
			if f.TotalSampleCount() != len(c.want) {
				t.Fatalf("%d samples, want %d", f.TotalSampleCount(), len(c.want))
			}
			loadAll(t, f)
			for i, ws := range c.want {
				for k, w := range ws {
					in := f.Sample(i).Inputs[k]
					if in.Name != c.md.Inputs[k].Name || !slices.Equal(in.Shape, w.shape) || !bytes.Equal(in.Data, w.data) {
						t.Errorf("entry %d input %s: %v % x; want %v % x", i, in.Name, in.Shape, in.Data, w.shape, w.data)
					}
				}
			}
		})
	}
}

func TestJSONErrors(t *testing.T) {
	row := `[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]`
	one := model(input("x", kserve.Int8, -1, 2))
	cases := []struct {
		name  string
		md    kserve.ModelMetadata
		doc   string
		kind  error
		entry int
		input string
	}{
		{"entry missing an input", simpleModel, `{"data": [{"INPUT0": ` + row + `, "INPUT1": ` + row + `}, {"INPUT0": ` + row + `}]}`, ErrMissingInput, 1, "INPUT1"},
		{"unknown input", one, `{"data": [{"x": [1, 2], "y": [1]}]}`, ErrUnknownInput, 0, "y"},
		{"too few elements", simpleModel, `{"data": [{"INPUT0": [1, 2], "INPUT1": ` + row + `}]}`, ErrShape, 0, "INPUT0"},
		{"shape does not fit", one, `{"data": [{"x": {"content": [1, 2, 3], "shape": [3]}}]}`, ErrShape, 0, "x"},
		{"content does not fill shape", model(input("x", kserve.Int8, -1, -1)), `{"data": [{"x": {"content": [1, 2, 3], "shape": [2]}}]}`, ErrShape, 0, "x"},
		{"b64 not whole elements", model(input("x", kserve.Int32, -1, 1)), `{"data": [{"x": {"b64": "AAAA"}}]}`, ErrShape, 0, "x"},
		{"b64 invalid", one, `{"data": [{"x": {"b64": "!!"}}]}`, ErrFormat, 0, "x"},
		{"b64 BYTES cut", model(input("s", kserve.Bytes, -1, 1)), `{"data": [{"s": {"b64": "BQAAAGhp"}}]}`, ErrTruncated, 0, "s"},
		{"out of range", one, `{"data": [{"x": [1, 300]}]}`, ErrDatatype, 0, "x"},
		{"fraction for an integer", one, `{"data": [{"x": [1, 2.5]}]}`, ErrDatatype, 0, "x"},
		{"string for a number", one, `{"data": [{"x": [1, "2"]}]}`, ErrDatatype, 0, "x"},
		{"number for BYTES", model(input("s", kserve.Bytes, -1, 1)), `{"data": [{"s": [1]}]}`, ErrDatatype, 0, "s"},
		{"2 for BOOL", model(input("b", kserve.Bool, -1, 1)), `{"data": [{"b": [2]}]}`, ErrDatatype, 0, "b"},
		{"FP16 overflow", model(input("h", kserve.FP16, -1, 1)), `{"data": [{"h": [70000]}]}`, ErrDatatype, 0, "h"},
		{"several variable dims without shape", model(input("x", kserve.Int8, -1, -1, -1, -1)), `{"data": [{"x": [1, 2]}]}`, ErrShape, 0, "x"},
		{"shapes differ between entries", model(input("x", kserve.Int8, -1, -1)), `{"data": [{"x": [1, 2]}, {"x": [1, 2, 3]}]}`, ErrShape, 1, "x"},
		{"tensor is a number", one, `{"data": [{"x": 5}]}`, ErrFormat, 0, "x"},
		{"unknown key", one, `{"data": [{"x": {"contents": [1, 2]}}]}`, ErrFormat, 0, "x"},
		{"content and b64", one, `{"data": [{"x": {"content": [1, 2], "b64": "AQI="}}]}`, ErrFormat, 0, "x"},
		{"entry not an object", one, `{"data": [{"x": [1, 2]}, 7]}`, ErrFormat, 1, ""},
		{"no data", one, `{"validation_data": []}`, ErrFormat, -1, ""},
		{"empty data", one, `{"data": []}`, ErrNoSamples, -1, ""},
		{"not JSON", one, `{"data": [`, ErrFormat, -1, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, t.TempDir(), "in.json", []byte(c.doc))
			_, err := Open(path, c.md, FilesOptions{Batched: true})
			if !errors.Is(err, c.kind) {
				t.Fatalf("error %v, want %v", err, c.kind)
			}
			var de *DataError
			if !errors.As(err, &de) {
				t.Fatalf("%v is not a *DataError", err)
			}
			if de.Path != path || de.Entry != c.entry || de.Input != c.input {
				t.Errorf("error names %q entry %d input %q; want entry %d input %q", de.Path, de.Entry, de.Input, c.entry, c.input)
			}
			if !strings.Contains(err.Error(), filepath.Base(path)) {
				t.Errorf("message %q does not name the file", err)
			}
			t.Log(err)
		})
	}
}
