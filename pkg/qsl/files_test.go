package qsl

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/kserve"
)

// simpleModel is sutproxy's "simple": two INT32 [-1,16] inputs.
var simpleModel = kserve.ModelMetadata{Name: "simple", Inputs: []kserve.TensorMetadata{
	{Name: "INPUT0", Datatype: kserve.Int32, Shape: []int64{-1, 16}},
	{Name: "INPUT1", Datatype: kserve.Int32, Shape: []int64{-1, 16}},
}}

func model(inputs ...kserve.TensorMetadata) kserve.ModelMetadata {
	return kserve.ModelMetadata{Name: "m", Inputs: inputs}
}

func input(name string, dt kserve.DataType, shape ...int64) kserve.TensorMetadata {
	return kserve.TensorMetadata{Name: name, Datatype: dt, Shape: shape}
}

// int32s is n little-endian int32 values from start.
func int32s(start, n int) []byte {
	var b []byte
	for i := range n {
		b = binary.LittleEndian.AppendUint32(b, uint32(start+i))
	}
	return b
}

func shapeText(shape ...int) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = fmt.Sprint(d)
	}
	if len(shape) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// writeFile writes b at dir/name, making directories.
func writeFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func npyOf(descr string, data []byte, shape ...int) []byte {
	return npyBytes(1, npyDict(descr, shapeText(shape...)), true, data)
}

func loadAll(t *testing.T, f *Files) {
	t.Helper()
	idx := make([]int, f.TotalSampleCount())
	for i := range idx {
		idx[i] = i
	}
	if err := f.Load(context.Background(), idx); err != nil {
		t.Fatal(err)
	}
}

// want is one expected sample input.
type want struct {
	shape []int64
	data  []byte
}

func TestOpenLayouts(t *testing.T) {
	fp32 := func(v ...float32) []byte {
		var b []byte
		for _, x := range v {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
		return b
	}
	cases := []struct {
		name    string
		md      kserve.ModelMetadata
		batched bool
		setup   func(t *testing.T, dir string) string // returns the --data path
		want    [][]want                              // [sample][input]
	}{
		{
			name: "subdirectory per input, file per sample, name order", md: simpleModel, batched: true,
			setup: func(t *testing.T, dir string) string {
				for i, name := range []string{"b.npy", "a.npy", "c.npy"} {
					writeFile(t, dir, "INPUT0/"+name, npyOf("<i4", int32s(100*i, 16), 16))
					writeFile(t, dir, "INPUT1/"+name, npyOf("<i4", int32s(100*i+50, 16), 1, 16)) // a batch of one
				}
				writeFile(t, dir, "INPUT0/notes.txt", []byte("ignored"))
				return dir
			},
			want: [][]want{
				{{[]int64{16}, int32s(100, 16)}, {[]int64{16}, int32s(150, 16)}},
				{{[]int64{16}, int32s(0, 16)}, {[]int64{16}, int32s(50, 16)}},
				{{[]int64{16}, int32s(200, 16)}, {[]int64{16}, int32s(250, 16)}},
			},
		},
		{
			name: "stacked .npy fixture and concatenated raw", md: simpleModel, batched: true,
			setup: func(t *testing.T, dir string) string {
				b, err := os.ReadFile("testdata/simple_input0.npy")
				if err != nil {
					t.Fatal(err)
				}
				writeFile(t, dir, "INPUT0.npy", b)
				writeFile(t, dir, "INPUT1.bin", int32s(1000, 48))
				return dir
			},
			want: [][]want{
				{{[]int64{16}, int32s(0, 16)}, {[]int64{16}, int32s(1000, 16)}},
				{{[]int64{16}, int32s(16, 16)}, {[]int64{16}, int32s(1016, 16)}},
				{{[]int64{16}, int32s(32, 16)}, {[]int64{16}, int32s(1032, 16)}},
			},
		},
		{
			name: "single input: sample files directly in the directory, .npy and .raw",
			md:   model(input("x", kserve.FP32, 2, 2)),
			setup: func(t *testing.T, dir string) string {
				writeFile(t, dir, "0.npy", npyOf("<f4", fp32(1, 2, 3, 4), 2, 2))
				writeFile(t, dir, "1.raw", fp32(5, 6, 7, 8))
				return dir
			},
			want: [][]want{{{[]int64{2, 2}, fp32(1, 2, 3, 4)}}, {{[]int64{2, 2}, fp32(5, 6, 7, 8)}}},
		},
		{
			name: "single .npy file, big-endian, version 2, scalar samples", md: model(input("x", kserve.FP64, -1)), batched: true,
			setup: func(t *testing.T, dir string) string { return "testdata/be_f8_v2.npy" },
			want: [][]want{
				{{[]int64{}, binary.LittleEndian.AppendUint64(nil, math.Float64bits(1.5))}},
				{{[]int64{}, binary.LittleEndian.AppendUint64(nil, math.Float64bits(-2.25))}},
			},
		},
		{
			name: "variable dimension takes the files' size", md: model(input("x", kserve.Int32, -1, -1)), batched: true,
			setup: func(t *testing.T, dir string) string {
				return writeFile(t, dir, "x.npy", npyOf("<i4", int32s(0, 6), 2, 3))
			},
			want: [][]want{{{[]int64{3}, int32s(0, 3)}}, {{[]int64{3}, int32s(3, 3)}}},
		},
		{
			name: "BF16 from <u2", md: model(input("x", kserve.BF16, 2)),
			setup: func(t *testing.T, dir string) string {
				return writeFile(t, dir, "x.npy", npyOf("<u2", []byte{0x80, 0x3f, 0x00, 0xc0}, 1, 2))
			},
			want: [][]want{{{[]int64{2}, []byte{0x80, 0x3f, 0x00, 0xc0}}}},
		},
		{
			name: "BYTES raw file per sample", md: model(input("s", kserve.Bytes, 2)),
			setup: func(t *testing.T, dir string) string {
				writeFile(t, dir, "s/0.bin", []byte("\x02\x00\x00\x00hi\x00\x00\x00\x00"))
				return dir
			},
			want: [][]want{{{[]int64{2}, []byte("\x02\x00\x00\x00hi\x00\x00\x00\x00")}}},
		},
		{
			name: "bool and int8", md: model(input("b", kserve.Bool, 3), input("i", kserve.Int8, 1)),
			setup: func(t *testing.T, dir string) string {
				writeFile(t, dir, "b.npy", npyOf("|b1", []byte{1, 0, 1}, 1, 3))
				writeFile(t, dir, "i.npy", npyOf("|i1", []byte{0xff}, 1, 1))
				return dir
			},
			want: [][]want{{{[]int64{3}, []byte{1, 0, 1}}, {[]int64{1}, []byte{0xff}}}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := c.setup(t, t.TempDir())
			f, err := Open(path, c.md, FilesOptions{Batched: c.batched})
			if err != nil {
				t.Fatal(err)
			}
			if f.TotalSampleCount() != len(c.want) || f.PerformanceSampleCount() != len(c.want) {
				t.Fatalf("%d total, %d performance samples; want %d", f.TotalSampleCount(), f.PerformanceSampleCount(), len(c.want))
			}
			loadAll(t, f)
			for i, ws := range c.want {
				s := f.Sample(i)
				if len(s.Inputs) != len(ws) {
					t.Fatalf("sample %d: %d inputs", i, len(s.Inputs))
				}
				for k, w := range ws {
					in := s.Inputs[k]
					if in.Name != c.md.Inputs[k].Name || in.Datatype != c.md.Inputs[k].Datatype ||
						!slices.Equal(in.Shape, w.shape) || !bytes.Equal(in.Data, w.data) {
						t.Errorf("sample %d input %d: %s %s %v % x; want %v % x", i, k, in.Name, in.Datatype, in.Shape, in.Data, w.shape, w.data)
					}
				}
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	ok16 := npyOf("<i4", int32s(0, 16), 16)
	cases := []struct {
		name  string
		md    kserve.ModelMetadata
		setup func(t *testing.T, dir string) string
		kind  error
		file  string // the path the error names, relative to dir
		input string
	}{
		{"wrong shape", simpleModel, func(t *testing.T, dir string) string {
			writeFile(t, dir, "INPUT0/0.npy", ok16)
			writeFile(t, dir, "INPUT1/0.npy", npyOf("<i4", int32s(0, 15), 15))
			return dir
		}, ErrShape, "INPUT1/0.npy", "INPUT1"},
		{"wrong rank", simpleModel, func(t *testing.T, dir string) string {
			writeFile(t, dir, "INPUT0.npy", npyOf("<i4", int32s(0, 16), 16)) // stacked: 16 samples of ()
			writeFile(t, dir, "INPUT1.npy", npyOf("<i4", int32s(0, 16), 1, 16))
			return dir
		}, ErrShape, "INPUT0.npy", "INPUT0"},
		{"wrong dtype", simpleModel, func(t *testing.T, dir string) string {
			writeFile(t, dir, "INPUT0/0.npy", npyOf("<f4", int32s(0, 16), 16))
			writeFile(t, dir, "INPUT1/0.npy", ok16)
			return dir
		}, ErrDatatype, "INPUT0/0.npy", "INPUT0"},
		{"unmapped dtype", simpleModel, func(t *testing.T, dir string) string {
			writeFile(t, dir, "INPUT0/0.npy", npyOf("<c8", make([]byte, 128), 16))
			writeFile(t, dir, "INPUT1/0.npy", ok16)
			return dir
		}, ErrDatatype, "INPUT0/0.npy", "INPUT0"},
		{"u2 for FP16", model(input("x", kserve.FP16, 2)), func(t *testing.T, dir string) string {
			return writeFile(t, dir, "x.npy", npyOf("<u2", make([]byte, 4), 1, 2))
		}, ErrDatatype, "x.npy", "x"},
		{"BYTES from npy", model(input("s", kserve.Bytes, 1)), func(t *testing.T, dir string) string {
			return writeFile(t, dir, "s.npy", npyOf("<i4", make([]byte, 4), 1, 1))
		}, ErrDatatype, "s.npy", "s"},
		{"truncated data", simpleModel, func(t *testing.T, dir string) string {
			writeFile(t, dir, "INPUT0/0.npy", ok16[:len(ok16)-3])
			writeFile(t, dir, "INPUT1/0.npy", ok16)
			return dir
		}, ErrTruncated, "INPUT0/0.npy", "INPUT0"},
		{"truncated header", simpleModel, func(t *testing.T, dir string) string {
			writeFile(t, dir, "INPUT0/0.npy", ok16)
			writeFile(t, dir, "INPUT1/0.npy", ok16[:30])
			return dir
		}, ErrTruncated, "INPUT1/0.npy", "INPUT1"},
		{"truncated stack", simpleModel, func(t *testing.T, dir string) string {
			b := npyOf("<i4", int32s(0, 32), 2, 16)
			writeFile(t, dir, "INPUT0.npy", b[:len(b)-1])
			writeFile(t, dir, "INPUT1.npy", b)
			return dir
		}, ErrTruncated, "INPUT0.npy", "INPUT0"},
		{"trailing bytes", simpleModel, func(t *testing.T, dir string) string {
			writeFile(t, dir, "INPUT0/0.npy", append(slices.Clone(ok16), 0))
			writeFile(t, dir, "INPUT1/0.npy", ok16)
			return dir
		}, ErrFormat, "INPUT0/0.npy", "INPUT0"},
		{"fortran order", model(input("x", kserve.Int32, 2, 2)), func(t *testing.T, dir string) string {
			return writeFile(t, dir, "x.npy", npyBytes(1, "{'descr': '<i4', 'fortran_order': True, 'shape': (1, 2, 2), }", true, int32s(0, 4)))
		}, errNPY, "x.npy", "x"},
		{"empty directory", simpleModel, func(t *testing.T, dir string) string { return dir }, ErrNoSamples, "", ""},
		{"empty input directory", simpleModel, func(t *testing.T, dir string) string {
			writeFile(t, dir, "INPUT0/0.npy", ok16)
			os.Mkdir(filepath.Join(dir, "INPUT1"), 0o755)
			return dir
		}, ErrNoSamples, "INPUT1", "INPUT1"},
		{"empty stack", model(input("x", kserve.Int32, -1, 2)), func(t *testing.T, dir string) string {
			return writeFile(t, dir, "x.npy", npyOf("<i4", nil, 0, 2))
		}, ErrNoSamples, "x.npy", "x"},
		{"input missing", simpleModel, func(t *testing.T, dir string) string {
			writeFile(t, dir, "INPUT0/0.npy", ok16)
			return dir
		}, ErrMissingInput, "", "INPUT1"},
		{"no layout fits", simpleModel, func(t *testing.T, dir string) string {
			writeFile(t, dir, "0.npy", ok16)
			return dir
		}, ErrFormat, "", ""},
		{"ambiguous", simpleModel, func(t *testing.T, dir string) string {
			writeFile(t, dir, "INPUT0/0.npy", ok16)
			writeFile(t, dir, "INPUT0.npy", ok16)
			writeFile(t, dir, "INPUT1/0.npy", ok16)
			return dir
		}, ErrFormat, "", "INPUT0"},
		{"counts differ", simpleModel, func(t *testing.T, dir string) string {
			writeFile(t, dir, "INPUT0/0.npy", ok16)
			writeFile(t, dir, "INPUT0/1.npy", ok16)
			writeFile(t, dir, "INPUT1/0.npy", ok16)
			return dir
		}, ErrCount, "", ""},
		{"shapes differ between samples", model(input("x", kserve.Int32, -1, -1)), func(t *testing.T, dir string) string {
			writeFile(t, dir, "a.npy", npyOf("<i4", int32s(0, 4), 4))
			writeFile(t, dir, "b.npy", npyOf("<i4", int32s(0, 5), 5))
			return dir
		}, ErrShape, "b.npy", "x"},
		{"one file for two inputs", simpleModel, func(t *testing.T, dir string) string {
			return writeFile(t, dir, "all.npy", ok16)
		}, ErrFormat, "all.npy", ""},
		{"unknown file kind", simpleModel, func(t *testing.T, dir string) string {
			return writeFile(t, dir, "data.npz", ok16)
		}, ErrFormat, "data.npz", ""},
		{"raw sample size", simpleModel, func(t *testing.T, dir string) string {
			writeFile(t, dir, "INPUT0/0.bin", int32s(0, 15))
			writeFile(t, dir, "INPUT1/0.bin", int32s(0, 16))
			return dir
		}, ErrShape, "INPUT0/0.bin", "INPUT0"},
		{"raw stack not whole samples", simpleModel, func(t *testing.T, dir string) string {
			writeFile(t, dir, "INPUT0.raw", int32s(0, 24))
			writeFile(t, dir, "INPUT1.raw", int32s(0, 32))
			return dir
		}, ErrShape, "INPUT0.raw", "INPUT0"},
		{"raw with a variable dimension", model(input("x", kserve.Int32, -1, -1)), func(t *testing.T, dir string) string {
			return writeFile(t, dir, "x.bin", int32s(0, 4))
		}, ErrShape, "x.bin", "x"},
		{"raw BYTES element cut", model(input("s", kserve.Bytes, 1)), func(t *testing.T, dir string) string {
			writeFile(t, dir, "s/0.bin", []byte("\x05\x00\x00\x00hi"))
			return dir
		}, ErrTruncated, "s/0.bin", "s"},
		{"raw BYTES stacked", model(input("s", kserve.Bytes, 1)), func(t *testing.T, dir string) string {
			return writeFile(t, dir, "s.bin", []byte("\x02\x00\x00\x00hi"))
		}, ErrFormat, "s.bin", "s"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := c.setup(t, dir)
			_, err := Open(path, c.md, FilesOptions{Batched: true})
			if !errors.Is(err, c.kind) {
				t.Fatalf("error %v, want %v", err, c.kind)
			}
			var de *DataError
			if !errors.As(err, &de) {
				t.Fatalf("%v is not a *DataError", err)
			}
			if wantPath := filepath.Join(dir, c.file); de.Path != wantPath || de.Input != c.input {
				t.Errorf("error names file %q input %q; want %q and %q", de.Path, de.Input, wantPath, c.input)
			}
			if !strings.Contains(err.Error(), de.Path) || (c.input != "" && !strings.Contains(err.Error(), c.input)) {
				t.Errorf("message %q does not name the file and input", err)
			}
			t.Log(err)
		})
	}
}

func TestCheckPath(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		path string
		ok   bool
	}{
		{"json", writeFile(t, dir, "d.json", []byte("{}")), true},
		{"npy", writeFile(t, dir, "d.npy", nil), true},
		{"raw", writeFile(t, dir, "d.raw", nil), true},
		{"other", writeFile(t, dir, "d.txt", nil), false},
		{"missing", filepath.Join(dir, "none"), false},
		{"empty dir", t.TempDir(), false},
		{"dir with a subdirectory", filepath.Dir(filepath.Dir(writeFile(t, t.TempDir(), "sub/x.txt", nil))), true},
	} {
		if err := CheckPath(c.path); (err == nil) != c.ok {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestLoadResidentAndLazy: Load reads the files then (not at Open), and
// makes exactly the asked samples resident.
func TestLoadResidentAndLazy(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "x.npy", npyOf("<i4", int32s(0, 8), 4, 2))
	f, err := Open(path, model(input("x", kserve.Int32, -1, 2)), FilesOptions{Batched: true, Performance: 2})
	if err != nil {
		t.Fatal(err)
	}
	if f.TotalSampleCount() != 4 || f.PerformanceSampleCount() != 2 {
		t.Fatalf("counts %d/%d, want 4/2", f.TotalSampleCount(), f.PerformanceSampleCount())
	}
	// Rewritten after Open, same size: Load must see the new values.
	writeFile(t, dir, "x.npy", npyOf("<i4", int32s(100, 8), 4, 2))
	ctx := context.Background()
	if err := f.Load(ctx, []int{3, 1}); err != nil {
		t.Fatal(err)
	}
	if got := f.Sample(3).Inputs[0].Data; !bytes.Equal(got, int32s(106, 2)) {
		t.Errorf("sample 3 % x, want the rewritten file's", got)
	}
	if f.Sample(0) != nil || f.Sample(2) != nil || f.Sample(-1) != nil || f.Sample(4) != nil {
		t.Error("a sample not loaded is resident")
	}
	kept := f.Sample(1)
	if err := f.Load(ctx, []int{1, 2}); err != nil {
		t.Fatal(err)
	}
	if f.Sample(3) != nil {
		t.Error("sample 3 still resident after a Load without it")
	}
	if f.Sample(1) != kept || f.Sample(2) == nil {
		t.Error("Load re-read a resident sample or skipped a new one")
	}
	if err := f.Load(ctx, []int{4}); err == nil {
		t.Error("index 4 of 4 samples loaded")
	}
	// Truncated after Open: Load says so.
	writeFile(t, dir, "x.npy", npyOf("<i4", int32s(0, 2), 1, 2))
	if err := f.Load(ctx, []int{3}); !errors.Is(err, ErrTruncated) {
		t.Errorf("Load of a file cut after Open: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := f.Load(cctx, []int{0}); !errors.Is(err, context.Canceled) {
		t.Errorf("Load with a cancelled context: %v", err)
	}
}
