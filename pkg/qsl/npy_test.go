package qsl

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
)

// npyBytes builds a .npy file by hand from the format's description:
// magic, version, little-endian header length (2 bytes for 1.x, 4 after),
// the header text, then data. pad aligns the data to 64 bytes as numpy does.
func npyBytes(major byte, header string, pad bool, data []byte) []byte {
	pre := 10
	if major > 1 {
		pre = 12
	}
	h := header
	if pad {
		for (pre+len(h)+1)%64 != 0 {
			h += " "
		}
		h += "\n"
	}
	var b bytes.Buffer
	b.WriteString("\x93NUMPY")
	b.WriteByte(major)
	b.WriteByte(0)
	if major == 1 {
		binary.Write(&b, binary.LittleEndian, uint16(len(h)))
	} else {
		binary.Write(&b, binary.LittleEndian, uint32(len(h)))
	}
	b.WriteString(h)
	b.Write(data)
	return b.Bytes()
}

func npyDict(descr string, shape string) string {
	return fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape)
}

func TestReadNPYHeader(t *testing.T) {
	cases := []struct {
		name  string
		file  []byte // header only: the data offset is its length
		descr string
		shape []int64
	}{
		{"v1", npyBytes(1, npyDict("<f4", "(2, 3)"), true, nil), "<f4", []int64{2, 3}},
		{"v2", npyBytes(2, npyDict("<i8", "(5,)"), true, nil), "<i8", []int64{5}},
		{"v3 utf-8", npyBytes(3, "{'descr': '|b1', 'fortran_order': False, 'shape': (1, 1, 1), 'note': '\u00e9t\u00e9'}", true, nil), "|b1", []int64{1, 1, 1}},
		{"scalar", npyBytes(1, npyDict("<f8", "()"), true, nil), "<f8", []int64{}},
		{"unpadded, double quotes, key order", npyBytes(1, `{"shape": (4,), "fortran_order": False, "descr": "<u2"}`, false, nil), "<u2", []int64{4}},
		{"python 2 long", npyBytes(1, npyDict("<i4", "(3L, 2L)"), true, nil), "<i4", []int64{3, 2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, err := readNPYHeader(bytes.NewReader(c.file))
			if err != nil {
				t.Fatal(err)
			}
			if h.Descr != c.descr || !slices.Equal(h.Shape, c.shape) || h.Offset != int64(len(c.file)) {
				t.Errorf("got %+v, want descr %s shape %v offset %d", h, c.descr, c.shape, len(c.file))
			}
		})
	}
}

func TestReadNPYHeaderErrors(t *testing.T) {
	good := npyBytes(1, npyDict("<f4", "(2,)"), true, nil)
	cases := []struct {
		name string
		file []byte
		kind error
	}{
		{"empty", nil, ErrTruncated},
		{"short preamble", good[:7], ErrTruncated},
		{"no length", good[:9], ErrTruncated},
		{"header cut", good[:40], ErrTruncated},
		{"bad magic", append([]byte("\x93NUMPZ"), good[6:]...), errNPY},
		{"version 4", append(append([]byte{}, good[:6]...), append([]byte{4, 0}, good[8:]...)...), errNPY},
		{"fortran order", npyBytes(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", true, nil), errNPY},
		{"structured", npyBytes(1, "{'descr': [('x', '<f4')], 'fortran_order': False, 'shape': (2,), }", true, nil), errNPY},
		{"no shape", npyBytes(1, "{'descr': '<f4', 'fortran_order': False, }", true, nil), errNPY},
		{"no fortran_order", npyBytes(1, "{'descr': '<f4', 'shape': (2,), }", true, nil), errNPY},
		{"negative dim", npyBytes(1, npyDict("<f4", "(-2,)"), true, nil), errNPY},
		{"not a dict", npyBytes(1, "('<f4', False)", true, nil), errNPY},
		{"garbage after", npyBytes(1, npyDict("<f4", "(2,)")+" x", true, nil), errNPY},
		{"unterminated", npyBytes(1, "{'descr: '<f4'", true, nil), errNPY},
		{"huge v2 length", append(append([]byte("\x93NUMPY\x02\x00"), 0xff, 0xff, 0xff, 0x7f), good[10:]...), errNPY},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := readNPYHeader(bytes.NewReader(c.file))
			if !errors.Is(err, c.kind) {
				t.Fatalf("error %v, want %v", err, c.kind)
			}
			t.Log(err)
		})
	}
}

// TestNPYFixtures reads files written byte by byte by testdata/gen.sh,
// independently of npyBytes.
func TestNPYFixtures(t *testing.T) {
	for _, c := range []struct {
		file   string
		descr  string
		shape  []int64
		offset int64
		size   int64
	}{
		{"testdata/simple_input0.npy", "<i4", []int64{3, 16}, 128, 128 + 3*16*4},
		{"testdata/be_f8_v2.npy", ">f8", []int64{2}, 128, 128 + 16},
	} {
		b, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		h, err := readNPYHeader(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if h.Descr != c.descr || !slices.Equal(h.Shape, c.shape) || h.Offset != c.offset || int64(len(b)) != c.size {
			t.Errorf("%s: %+v (file %d bytes), want %s %v at %d in %d bytes", c.file, h, len(b), c.descr, c.shape, c.offset, c.size)
		}
	}
}

func FuzzReadNPYHeader(f *testing.F) {
	f.Add(npyBytes(1, npyDict("<f4", "(2, 3)"), true, nil))
	f.Add(npyBytes(2, npyDict(">i8", "()"), false, nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := readNPYHeader(bytes.NewReader(b))
		if err == nil && (h.Offset < 10 || h.Offset > int64(len(b))) {
			t.Fatalf("offset %d outside a %d-byte file", h.Offset, len(b))
		}
	})
}
