package qsl

import (
	"context"
	"fmt"
	"os"
	"slices"

	"github.com/netloadgen/netloadgen/kserve"
)

// part is where one input's tensor of one sample lives: a byte range of a
// file, read at Load, or bytes already decoded (JSON).
type part struct {
	path   string
	entry  int // JSON entry, -1 otherwise; for errors
	off, n int64
	data   []byte
	shape  []int64
}

// source is every sample's tensor for one model input.
type source struct {
	name  string
	dt    kserve.DataType
	swap  int // element size to byte-swap at Load (a big-endian .npy); 0: none
	parts []part
}

// Files is a library of samples from files (.npy, raw binary, perf_analyzer
// JSON). Opening validates every file's header and size; tensor data is
// read only when Load asks for it.
type Files struct {
	inputs   []source
	total    int
	perf     int
	resident []*Sample
}

// FilesOptions configure Open.
type FilesOptions struct {
	// Batched says the model's first dimension is the batch dimension.
	Batched bool
	// Performance caps PerformanceSampleCount (default 1024).
	Performance int
}

// TotalSampleCount is the number of samples found.
func (f *Files) TotalSampleCount() int { return f.total }

// PerformanceSampleCount is how many samples a performance run keeps
// resident: the total, capped by FilesOptions.Performance. LoadGen picks
// which ones (the loaded set) from its QSL seed.
func (f *Files) PerformanceSampleCount() int { return f.perf }

// Load makes exactly the samples at indices resident: samples of an earlier
// Load that are not among them are dropped, so a library larger than memory
// can be run a loaded set at a time (LoadGen loads a set, runs it, unloads).
func (f *Files) Load(ctx context.Context, indices []int) error {
	next := make([]*Sample, f.total)
	open := map[string]*os.File{}
	defer func() {
		for _, fh := range open {
			fh.Close()
		}
	}()
	for _, i := range indices {
		if i < 0 || i >= f.total {
			return fmt.Errorf("qsl: sample index %d outside [0, %d)", i, f.total)
		}
		if next[i] != nil {
			continue
		}
		if f.resident != nil && f.resident[i] != nil {
			next[i] = f.resident[i]
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		s, err := f.read(i, open)
		if err != nil {
			return err
		}
		next[i] = s
	}
	f.resident = next
	return nil
}

// Sample returns a resident sample (nil if it is not loaded).
func (f *Files) Sample(i int) *Sample {
	if i < 0 || i >= len(f.resident) {
		return nil
	}
	return f.resident[i]
}

func (f *Files) read(i int, open map[string]*os.File) (*Sample, error) {
	s := &Sample{Inputs: make([]kserve.Tensor, len(f.inputs))}
	for k, src := range f.inputs {
		p := src.parts[i]
		data := p.data
		if data == nil {
			fh, ok := open[p.path]
			if !ok {
				var err error
				if fh, err = os.Open(p.path); err != nil {
					return nil, &DataError{Path: p.path, Entry: -1, Input: src.name, Err: err}
				}
				open[p.path] = fh
			}
			data = make([]byte, p.n)
			if n, err := fh.ReadAt(data, p.off); int64(n) != p.n {
				// The file was checked at open: it changed since.
				return nil, dataErr(p.path, src.name, ErrTruncated, "read %d of %d bytes at offset %d: %v", n, p.n, p.off, err)
			}
			if src.swap > 1 {
				swapBytes(data, src.swap)
			}
		}
		s.Inputs[k] = kserve.Tensor{Name: src.name, Datatype: src.dt, Shape: p.shape, Data: data}
	}
	return s, nil
}

// newFiles checks that every input has the same number of samples and that
// all samples of an input share one shape (they are batched by
// concatenation), then builds the library.
func newFiles(root string, srcs []source, o FilesOptions) (*Files, error) {
	total := len(srcs[0].parts)
	for _, s := range srcs[1:] {
		if len(s.parts) != total {
			return nil, dataErr(root, "", ErrCount, "input %q has %d samples, input %q has %d", srcs[0].name, total, s.name, len(s.parts))
		}
	}
	if total == 0 {
		return nil, dataErr(root, "", ErrNoSamples, "the data holds none")
	}
	for _, s := range srcs {
		first := s.parts[0]
		for _, p := range s.parts[1:] {
			if !slices.Equal(p.shape, first.shape) {
				return nil, &DataError{Path: p.path, Entry: p.entry, Input: s.name, Err: fmt.Errorf(
					"%w: shape %v, but the first sample (%s) has %v; an input's samples are batched together, so variable dimensions must have one size across all samples",
					ErrShape, p.shape, where(first), first.shape)}
			}
		}
	}
	perf := o.Performance
	if perf <= 0 {
		perf = 1024
	}
	return &Files{inputs: srcs, total: total, perf: min(perf, total)}, nil
}

func where(p part) string {
	if p.entry >= 0 {
		return fmt.Sprintf("entry %d", p.entry)
	}
	return p.path
}
