package qsl

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/netloadgen/netloadgen/kserve"
)

// Synthetic makes samples from a model's metadata: deterministic for a seed
// and sample index, finite values for floating-point inputs (random bits
// would include NaNs that some servers reject), 0/1 for BOOL, short ASCII
// strings for BYTES.
type Synthetic struct {
	inputs  []kserve.TensorMetadata
	total   int
	perf    int
	seed    uint64
	samples []*Sample
}

// SyntheticOptions configure NewSynthetic.
type SyntheticOptions struct {
	// Batched says the first dimension of every input is the batch
	// dimension (the model's max_batch_size > 0); it is dropped.
	Batched bool
	// Shapes overrides the shape of named inputs (without the batch
	// dimension); needed when a model has variable dimensions other than the
	// batch, which otherwise become 1.
	Shapes map[string][]int64
	// Total and Performance are the sample counts (default 1024 each).
	Total, Performance int
	Seed               uint64
}

// NewSynthetic builds a synthetic library for a model.
func NewSynthetic(md kserve.ModelMetadata, o SyntheticOptions) (*Synthetic, error) {
	if len(md.Inputs) == 0 {
		return nil, fmt.Errorf("qsl: model %q has no inputs in its metadata", md.Name)
	}
	if o.Total <= 0 {
		o.Total = 1024
	}
	if o.Performance <= 0 {
		o.Performance = min(1024, o.Total)
	}
	s := &Synthetic{total: o.Total, perf: o.Performance, seed: o.Seed}
	for _, in := range md.Inputs {
		if !in.Datatype.Valid() {
			return nil, fmt.Errorf("qsl: input %q: unknown datatype %q", in.Name, in.Datatype)
		}
		shape := in.Shape
		if o.Batched {
			if len(shape) == 0 {
				return nil, fmt.Errorf("qsl: input %q: batched model but the shape has no batch dimension", in.Name)
			}
			shape = shape[1:]
		}
		if override, ok := o.Shapes[in.Name]; ok {
			if len(override) != len(shape) {
				return nil, fmt.Errorf("qsl: input %q: shape override %v has %d dimensions, the model's %v has %d", in.Name, override, len(override), shape, len(shape))
			}
			shape = override
		}
		fixed := make([]int64, len(shape))
		for i, d := range shape {
			if d < 0 {
				d = 1
			}
			fixed[i] = d
		}
		s.inputs = append(s.inputs, kserve.TensorMetadata{Name: in.Name, Datatype: in.Datatype, Shape: fixed})
	}
	return s, nil
}

// TotalSampleCount is the library's size.
func (s *Synthetic) TotalSampleCount() int { return s.total }

// PerformanceSampleCount is how many samples a performance run loads.
func (s *Synthetic) PerformanceSampleCount() int { return s.perf }

// Load makes the samples at indices.
func (s *Synthetic) Load(_ context.Context, indices []int) error {
	if s.samples == nil {
		s.samples = make([]*Sample, s.total)
	}
	for _, i := range indices {
		if i < 0 || i >= s.total {
			return fmt.Errorf("qsl: sample index %d outside [0, %d)", i, s.total)
		}
		if s.samples[i] == nil {
			s.samples[i] = s.make(i)
		}
	}
	return nil
}

// Sample returns a loaded sample (nil if it was not loaded).
func (s *Synthetic) Sample(i int) *Sample {
	if i < 0 || i >= len(s.samples) {
		return nil
	}
	return s.samples[i]
}

func (s *Synthetic) make(index int) *Sample {
	r := rand.New(rand.NewPCG(s.seed, uint64(index)))
	out := &Sample{}
	for _, in := range s.inputs {
		n := int(kserve.ElementCount(in.Shape))
		out.Inputs = append(out.Inputs, kserve.Tensor{
			Name: in.Name, Datatype: in.Datatype, Shape: in.Shape, Data: randomData(r, in.Datatype, n),
		})
	}
	return out
}

func randomData(r *rand.Rand, dt kserve.DataType, n int) []byte {
	if dt == kserve.Bytes {
		var b []byte
		for range n {
			word := fmt.Sprintf("sample-%d", r.IntN(1_000_000))
			b = binary.LittleEndian.AppendUint32(b, uint32(len(word)))
			b = append(b, word...)
		}
		return b
	}
	size := dt.Size()
	b := make([]byte, n*size)
	for i := range n {
		e := b[i*size : (i+1)*size]
		switch dt {
		case kserve.Bool:
			e[0] = byte(r.IntN(2))
		case kserve.FP32:
			binary.LittleEndian.PutUint32(e, math.Float32bits(r.Float32()))
		case kserve.FP64:
			binary.LittleEndian.PutUint64(e, math.Float64bits(r.Float64()))
		case kserve.FP16:
			// Exponent 0b01110 (2^-1) with a random mantissa: a finite value in [0.5, 1).
			binary.LittleEndian.PutUint16(e, 0x3800|uint16(r.IntN(1<<10)))
		case kserve.BF16:
			// The top half of a float32 in [0.5, 1): finite.
			binary.LittleEndian.PutUint16(e, uint16(math.Float32bits(0.5+r.Float32()/2)>>16))
		default:
			// Small non-negative integers fit every integer type.
			for j := range e {
				e[j] = 0
			}
			e[0] = byte(r.IntN(100))
		}
	}
	return b
}
