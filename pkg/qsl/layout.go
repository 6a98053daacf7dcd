package qsl

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/netloadgen/netloadgen/kserve"
)

// perSample reads a directory holding one sample of an input per file,
// taken in name order.
func perSample(dir string, in kserve.TensorMetadata, batched bool) (source, error) {
	src := source{name: in.Name, dt: in.Datatype}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return src, err
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && !hidden(e.Name()) && (isNPY(e.Name()) || isRaw(e.Name())) {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		return src, dataErr(dir, in.Name, ErrNoSamples, "no .npy, .bin or .raw files in the directory")
	}
	sort.Strings(names)
	for _, name := range names {
		p := filepath.Join(dir, name)
		var pt part
		var swap int
		if isNPY(name) {
			var h npyHeader
			var size int64
			if h, size, err = openNPY(p, in); err != nil {
				return src, err
			}
			if pt, swap, err = npyPart(p, in, h, h.Shape, batched); err != nil {
				return src, err
			}
			if err := checkSize(p, in.Name, size, h.Offset+pt.n); err != nil {
				return src, err
			}
		} else if pt, err = rawSample(p, in); err != nil {
			return src, err
		}
		if len(src.parts) > 0 && swap != src.swap {
			return src, dataErr(p, in.Name, ErrDatatype, "byte order differs from the directory's other files")
		}
		src.swap = swap
		src.parts = append(src.parts, pt)
	}
	return src, nil
}

// stacked reads a file holding every sample of an input, stacked along the
// first axis (.npy) or concatenated (raw).
func stacked(path string, in kserve.TensorMetadata, batched bool) (source, error) {
	src := source{name: in.Name, dt: in.Datatype}
	if isRaw(path) {
		return src, rawStacked(path, in, &src)
	}
	h, size, err := openNPY(path, in)
	if err != nil {
		return src, err
	}
	if len(h.Shape) == 0 {
		return src, dataErr(path, in.Name, ErrShape, "a scalar array has no axis 0 to stack samples along")
	}
	if h.Shape[0] == 0 {
		return src, dataErr(path, in.Name, ErrNoSamples, "axis 0 has length 0")
	}
	pt, swap, err := npyPart(path, in, h, h.Shape[1:], batched)
	if err != nil {
		if de, ok := err.(*DataError); ok && errors.Is(err, ErrShape) {
			de.Err = fmt.Errorf("%w (the file's shape is %v: one sample per index of axis 0)", de.Err, h.Shape)
		}
		return src, err
	}
	if err := checkSize(path, in.Name, size, h.Offset+h.Shape[0]*pt.n); err != nil {
		return src, err
	}
	src.swap = swap
	for i := range h.Shape[0] {
		q := pt
		q.off = h.Offset + i*pt.n
		src.parts = append(src.parts, q)
	}
	return src, nil
}

// openNPY reads a .npy file's header and the file's size.
func openNPY(path string, in kserve.TensorMetadata) (npyHeader, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return npyHeader{}, 0, &DataError{Path: path, Entry: -1, Input: in.Name, Err: err}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return npyHeader{}, 0, &DataError{Path: path, Entry: -1, Input: in.Name, Err: err}
	}
	h, err := readNPYHeader(io.LimitReader(f, st.Size()))
	if err != nil {
		return h, 0, &DataError{Path: path, Entry: -1, Input: in.Name, Err: err}
	}
	return h, st.Size(), nil
}

// npyPart checks one sample's dtype and shape (sampleShape: the array's,
// or its rows' when stacked) against the input and gives the sample's part
// at the start of the data.
func npyPart(path string, in kserve.TensorMetadata, h npyHeader, sampleShape []int64, batched bool) (part, int, error) {
	if in.Datatype == kserve.Bytes {
		return part{}, 0, dataErr(path, in.Name, ErrDatatype, "the input is BYTES, which .npy cannot hold as tensors; use perf_analyzer JSON or raw files")
	}
	dt, swap, err := npyDatatype(h.Descr, in.Datatype)
	if err != nil {
		return part{}, 0, dataErr(path, in.Name, ErrDatatype, "%v", err)
	}
	if dt != in.Datatype {
		hint := ""
		if in.Datatype == kserve.BF16 {
			hint = " (BF16 is stored as <u2 holding the bits)"
		}
		return part{}, 0, dataErr(path, in.Name, ErrDatatype, "dtype %s is %s, the model's input is %s%s", h.Descr, dt, in.Datatype, hint)
	}
	shape, err := fitShape(sampleShape, in.Shape, batched)
	if err != nil {
		return part{}, 0, &DataError{Path: path, Entry: -1, Input: in.Name, Err: err}
	}
	s := 0
	if swap {
		s = dt.Size()
	}
	return part{path: path, entry: -1, off: h.Offset, n: shapeBytes(shape, dt), shape: shape}, s, nil
}

// checkSize compares a file's size with what its header implies.
func checkSize(path, input string, size, want int64) error {
	switch {
	case size < want:
		return dataErr(path, input, ErrTruncated, "the header implies %d bytes, the file has %d", want, size)
	case size > want:
		return dataErr(path, input, ErrFormat, "%d bytes after the array the header describes", size-want)
	}
	return nil
}

// rawSample is one sample in a raw file: its size must be exactly the
// input's, which therefore needs a fixed shape.
func rawSample(path string, in kserve.TensorMetadata) (part, error) {
	if !fixedShape(in.Shape) {
		return part{}, dataErr(path, in.Name, ErrShape, "the input's shape %v has variable dimensions a raw file cannot give; use .npy or perf_analyzer JSON", in.Shape)
	}
	st, err := os.Stat(path)
	if err != nil {
		return part{}, &DataError{Path: path, Entry: -1, Input: in.Name, Err: err}
	}
	pt := part{path: path, entry: -1, n: st.Size(), shape: in.Shape}
	if in.Datatype == kserve.Bytes {
		// Elements are length-prefixed: walk them to count.
		b, err := os.ReadFile(path)
		if err != nil {
			return part{}, &DataError{Path: path, Entry: -1, Input: in.Name, Err: err}
		}
		n, err := countBytesElements(b)
		if err != nil {
			return part{}, &DataError{Path: path, Entry: -1, Input: in.Name, Err: err}
		}
		if want := kserve.ElementCount(in.Shape); n != want {
			return part{}, dataErr(path, in.Name, ErrShape, "%d BYTES elements, the shape %v holds %d", n, in.Shape, want)
		}
		return pt, nil
	}
	if want := shapeBytes(in.Shape, in.Datatype); st.Size() != want {
		return part{}, dataErr(path, in.Name, ErrShape, "%d bytes, a sample of shape %v %s is %d", st.Size(), in.Shape, in.Datatype, want)
	}
	return pt, nil
}

// rawStacked splits a raw file of concatenated samples.
func rawStacked(path string, in kserve.TensorMetadata, src *source) error {
	if in.Datatype == kserve.Bytes {
		return dataErr(path, in.Name, ErrFormat, "BYTES samples have no fixed size to split a raw file by; use a directory %s/ with a file per sample, or perf_analyzer JSON", in.Name)
	}
	if !fixedShape(in.Shape) {
		return dataErr(path, in.Name, ErrShape, "the input's shape %v has variable dimensions a raw file cannot give; use .npy or perf_analyzer JSON", in.Shape)
	}
	st, err := os.Stat(path)
	if err != nil {
		return &DataError{Path: path, Entry: -1, Input: in.Name, Err: err}
	}
	n := shapeBytes(in.Shape, in.Datatype)
	if n == 0 {
		return dataErr(path, in.Name, ErrShape, "the input's shape %v holds no elements", in.Shape)
	}
	if st.Size() == 0 {
		return dataErr(path, in.Name, ErrNoSamples, "empty file")
	}
	if st.Size()%n != 0 {
		return dataErr(path, in.Name, ErrShape, "%d bytes is not a whole number of %d-byte samples (shape %v %s)", st.Size(), n, in.Shape, in.Datatype)
	}
	for i := range st.Size() / n {
		src.parts = append(src.parts, part{path: path, entry: -1, off: i * n, n: n, shape: in.Shape})
	}
	return nil
}

// countBytesElements counts the elements of serialized BYTES data: each a
// 4-byte little-endian length and that many bytes.
func countBytesElements(b []byte) (int64, error) {
	var n int64
	for len(b) > 0 {
		if len(b) < 4 {
			return 0, fmt.Errorf("%w: %d bytes left where a 4-byte BYTES length belongs", ErrTruncated, len(b))
		}
		l := binary.LittleEndian.Uint32(b)
		if uint64(l) > uint64(len(b)-4) {
			return 0, fmt.Errorf("%w: BYTES element %d says %d bytes, %d remain", ErrTruncated, n, l, len(b)-4)
		}
		b = b[4+l:]
		n++
	}
	return n, nil
}
