package qsl

import (
	"fmt"
	"slices"

	"github.com/netloadgen/netloadgen/kserve"
)

// sampleInputs is the model's inputs as one sample sees them: the batch
// dimension dropped when the model batches.
func sampleInputs(md kserve.ModelMetadata, batched bool) ([]kserve.TensorMetadata, error) {
	if len(md.Inputs) == 0 {
		return nil, fmt.Errorf("qsl: model %q has no inputs in its metadata", md.Name)
	}
	out := make([]kserve.TensorMetadata, 0, len(md.Inputs))
	for _, in := range md.Inputs {
		if !in.Datatype.Valid() {
			return nil, fmt.Errorf("qsl: input %q: unknown datatype %q", in.Name, in.Datatype)
		}
		shape := in.Shape
		if batched {
			if len(shape) == 0 {
				return nil, fmt.Errorf("qsl: input %q: batched model but the shape has no batch dimension", in.Name)
			}
			shape = shape[1:]
		}
		out = append(out, kserve.TensorMetadata{Name: in.Name, Datatype: in.Datatype, Shape: slices.Clone(shape)})
	}
	return out, nil
}

// fitShape checks a sample's shape against the input's (batch dimension
// already dropped; -1 takes any size) and returns the shape the sample
// travels with. For a batching model a leading dimension of 1 beyond the
// input's rank is taken as a batch of one and dropped: a sample saved from
// a batch-1 pipeline ([1,3,224,224] for [-1,3,224,224]) is the common case.
func fitShape(got, want []int64, batched bool) ([]int64, error) {
	if batched && len(got) == len(want)+1 && got[0] == 1 {
		got = got[1:]
	}
	if len(got) != len(want) {
		return nil, fmt.Errorf("%w: shape %v has %d dimensions, the model's input (without the batch dimension) is %v", ErrShape, got, len(got), want)
	}
	for i, d := range want {
		if d >= 0 && got[i] != d {
			return nil, fmt.Errorf("%w: shape %v does not fit the model's %v (dimension %d is %d, want %d)", ErrShape, got, want, i, got[i], d)
		}
	}
	return slices.Clone(got), nil
}

// fixedShape is want when none of its dimensions is variable.
func fixedShape(want []int64) bool { return kserve.ElementCount(want) >= 0 }

// shapeBytes is the byte size of a tensor of a fixed-size datatype.
func shapeBytes(shape []int64, dt kserve.DataType) int64 {
	return kserve.ElementCount(shape) * int64(dt.Size())
}
