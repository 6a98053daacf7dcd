package sim

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/netloadgen/netloadgen/kserve"
)

// Scores a classify model answers: the expected class gets topScore and the
// others share the rest, so every row sums to 1 like a softmax and its argmax
// is unambiguous.
const topScore = 0.9

// ExpectedClass is the top-1 class a classify model answers for one sample:
// the FNV-1a 64-bit hash of the sample's raw input bytes, modulo numClasses.
// A sample's raw bytes are its slice of the input's little-endian row-major
// data (for a batching model, 1/n of an input of batch n; for BYTES, its
// elements with their 4-byte length prefixes); for a model with several
// inputs, the concatenation of each input's sample bytes in the model's
// input order. It returns -1 when numClasses < 1.
func ExpectedClass(sample []byte, numClasses int) int {
	if numClasses < 1 {
		return -1
	}
	return int(fnv1a(fnvOffset, sample) % uint64(numClasses))
}

// FNV-1a, 64-bit (http://www.isthe.com/chongo/tech/comp/fnv/): inlined so that
// hashing several inputs' slices needs no allocation.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnv1a(h uint64, b []byte) uint64 {
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return h
}

// deriveOutputs is the outputs a spec that lists none gets from its function.
func deriveOutputs(s ModelSpec) ([]TensorSpec, error) {
	in0 := s.Inputs[0]
	switch s.Function {
	case Echo:
		outs := make([]TensorSpec, len(s.Inputs))
		for i, in := range s.Inputs {
			outs[i] = TensorSpec{Name: "OUTPUT" + strconv.Itoa(i), Datatype: in.Datatype, Shape: slices.Clone(in.Shape)}
		}
		return outs, nil
	case AddSub:
		return []TensorSpec{
			{Name: "OUTPUT0", Datatype: in0.Datatype, Shape: slices.Clone(in0.Shape)},
			{Name: "OUTPUT1", Datatype: in0.Datatype, Shape: slices.Clone(in0.Shape)},
		}, nil
	case Classify:
		return []TensorSpec{{Name: "OUTPUT0", Datatype: kserve.FP32, Shape: classifyShape(s)}}, nil
	}
	return nil, unknownFunction(s.Function)
}

func unknownFunction(f Function) error {
	return fmt.Errorf("%q is not echo, add_sub or classify", f)
}

func classifyShape(s ModelSpec) []int64 {
	if s.MaxBatchSize > 0 {
		return []int64{-1, int64(s.NumClasses)}
	}
	return []int64{int64(s.NumClasses)}
}

// checkFunction checks that the tensors fit the function; it returns the path
// of the bad field.
func checkFunction(s ModelSpec) (string, error) {
	if s.Function != Classify && s.NumClasses != 0 {
		return "num_classes", fmt.Errorf("only a classify model has classes")
	}
	switch s.Function {
	case Echo:
		if len(s.Outputs) != len(s.Inputs) {
			return "outputs", fmt.Errorf("echo needs one output per input: %d inputs, %d outputs", len(s.Inputs), len(s.Outputs))
		}
		for i, out := range s.Outputs {
			in := s.Inputs[i]
			if out.Datatype != in.Datatype {
				return fmt.Sprintf("outputs[%d].datatype", i), fmt.Errorf("echo: %s differs from input %q's %s", out.Datatype, in.Name, in.Datatype)
			}
			if !slices.Equal(out.Shape, in.Shape) {
				return fmt.Sprintf("outputs[%d].shape", i), fmt.Errorf("echo: %v differs from input %q's %v", out.Shape, in.Name, in.Shape)
			}
		}
	case AddSub:
		if len(s.Inputs) != 2 {
			return "inputs", fmt.Errorf("add_sub needs 2 inputs, got %d", len(s.Inputs))
		}
		if len(s.Outputs) != 2 {
			return "outputs", fmt.Errorf("add_sub needs 2 outputs, got %d", len(s.Outputs))
		}
		for _, l := range []struct {
			list string
			ts   []TensorSpec
		}{{"inputs", s.Inputs}, {"outputs", s.Outputs}} {
			list, ts := l.list, l.ts
			if i := firstNot(ts, kserve.Int32); i >= 0 {
				return fmt.Sprintf("%s[%d].datatype", list, i), fmt.Errorf("add_sub takes INT32, got %s", ts[i].Datatype)
			}
			for i, t := range ts {
				if !slices.Equal(t.Shape, s.Inputs[0].Shape) {
					return fmt.Sprintf("%s[%d].shape", list, i), fmt.Errorf("add_sub: %v differs from input %q's %v", t.Shape, s.Inputs[0].Name, s.Inputs[0].Shape)
				}
			}
		}
	case Classify:
		if s.NumClasses < 1 || s.NumClasses > maxClasses {
			return "num_classes", fmt.Errorf("%d is not in [1, %d]", s.NumClasses, maxClasses)
		}
		if len(s.Outputs) != 1 {
			return "outputs", fmt.Errorf("classify has one output, got %d", len(s.Outputs))
		}
		out := s.Outputs[0]
		if out.Datatype != kserve.FP32 {
			return "outputs[0].datatype", fmt.Errorf("classify answers FP32, got %s", out.Datatype)
		}
		if want := classifyShape(s); !slices.Equal(out.Shape, want) {
			return "outputs[0].shape", fmt.Errorf("classify answers %v for num_classes %d, got %v", want, s.NumClasses, out.Shape)
		}
	default:
		return "function", unknownFunction(s.Function)
	}
	return "", nil
}

// compute answers the wanted outputs (indices into spec.Outputs) of a checked
// request whose inputs are in spec order. Outputs never alias request memory:
// a transport may reuse its buffers once Infer returns.
func compute(s *ModelSpec, ins []*kserve.Tensor, n int, want []int) ([]kserve.Tensor, error) {
	outs := make([]kserve.Tensor, len(want))
	for k, oi := range want {
		spec := s.Outputs[oi]
		out := kserve.Tensor{Name: spec.Name, Datatype: spec.Datatype}
		switch s.Function {
		case Echo:
			out.Shape = slices.Clone(ins[oi].Shape)
			out.Data = slices.Clone(ins[oi].Data)
		case AddSub:
			out.Shape = slices.Clone(ins[0].Shape)
			out.Data = addSub(ins[0].Data, ins[1].Data, oi == 1)
		case Classify:
			data, err := classify(ins, n, s.NumClasses)
			if err != nil {
				return nil, err
			}
			out.Shape = classifyShape(*s)
			if s.MaxBatchSize > 0 {
				out.Shape[0] = int64(n)
			}
			out.Data = data
		}
		outs[k] = out
	}
	return outs, nil
}

// addSub is a+b, or a-b when sub, element-wise on little-endian INT32 with
// wrap-around (uint32 arithmetic is two's complement).
func addSub(a, b []byte, sub bool) []byte {
	out := make([]byte, len(a))
	for i := 0; i+4 <= len(a); i += 4 {
		x, y := binary.LittleEndian.Uint32(a[i:]), binary.LittleEndian.Uint32(b[i:])
		if sub {
			y = -y
		}
		binary.LittleEndian.PutUint32(out[i:], x+y)
	}
	return out
}

// classify answers n rows of FP32 scores.
func classify(ins []*kserve.Tensor, n, classes int) ([]byte, error) {
	bounds := make([][]int, len(ins))
	for i, in := range ins {
		b, err := sampleBounds(in, n)
		if err != nil {
			return nil, err
		}
		bounds[i] = b
	}
	rest := float32(0)
	if classes > 1 {
		rest = (1 - topScore) / float32(classes-1)
	}
	restBits := math.Float32bits(rest)
	out := make([]byte, 4*n*classes)
	for k := range n {
		h := uint64(fnvOffset)
		for i, in := range ins {
			h = fnv1a(h, in.Data[bounds[i][k]:bounds[i][k+1]])
		}
		top := int(h % uint64(classes))
		row := out[4*k*classes : 4*(k+1)*classes]
		for c := range classes {
			bits := restBits
			if c == top {
				bits = math.Float32bits(topScore)
				if classes == 1 {
					bits = math.Float32bits(1)
				}
			}
			binary.LittleEndian.PutUint32(row[4*c:], bits)
		}
	}
	return out, nil
}

// sampleBounds splits t's data into n samples along the first dimension: the
// byte offsets of each sample's start and the end (n+1 values).
func sampleBounds(t *kserve.Tensor, n int) ([]int, error) {
	b := make([]int, n+1)
	if size := t.Datatype.Size(); size > 0 {
		per := len(t.Data) / n
		for k := range b {
			b[k] = k * per
		}
		return b, nil
	}
	// BYTES: walk the length prefixes, per elements to a sample.
	per := int(kserve.ElementCount(t.Shape)) / n
	off := 0
	for k := range n {
		b[k] = off
		for range per {
			if off+4 > len(t.Data) {
				return nil, fmt.Errorf("input %q: BYTES data ends inside an element's length", t.Name)
			}
			l := int(binary.LittleEndian.Uint32(t.Data[off:]))
			if l > len(t.Data)-off-4 {
				return nil, fmt.Errorf("input %q: BYTES element of %d bytes overruns the data", t.Name, l)
			}
			off += 4 + l
		}
	}
	b[n] = off
	return b, nil
}
