package sim

import (
	"slices"

	"google.golang.org/grpc/codes"

	"github.com/netloadgen/netloadgen/kserve"
)

// checked is a request that fits its model: its inputs in the model's input
// order, its batch size, and the indices of the outputs it wants.
type checked struct {
	ins  []*kserve.Tensor
	n    int
	want []int
}

func invalid(format string, args ...any) error {
	return kserve.Errorf(codes.InvalidArgument, format, args...)
}

// check matches a request against the model: every input present once, with
// the model's datatype and shape (variable dimensions free, the batch
// dimension within max_batch_size and equal across inputs) and data of the
// length its shape needs; requested outputs known and distinct.
func (e *engine) check(req *kserve.InferRequest) (checked, error) {
	s := e.spec
	c := checked{ins: make([]*kserve.Tensor, len(s.Inputs)), n: 1}
	for i := range req.Inputs {
		in := &req.Inputs[i]
		k := slices.IndexFunc(s.Inputs, func(t TensorSpec) bool { return t.Name == in.Name })
		if k < 0 {
			return c, invalid("model %q has no input %q", s.Name, in.Name)
		}
		if c.ins[k] != nil {
			return c, invalid("input %q given twice", in.Name)
		}
		c.ins[k] = in
	}
	var batchFrom *kserve.Tensor
	for k, in := range c.ins {
		want := s.Inputs[k]
		if in == nil {
			return c, invalid("model %q needs input %q", s.Name, want.Name)
		}
		if in.Datatype != want.Datatype {
			return c, invalid("input %q: datatype %s, model %q takes %s", in.Name, in.Datatype, s.Name, want.Datatype)
		}
		if !shapeFits(in.Shape, want.Shape) {
			return c, invalid("input %q: shape %v does not fit the model's %v", in.Name, in.Shape, want.Shape)
		}
		if s.MaxBatchSize > 0 {
			n := in.Shape[0]
			if n < 1 || n > int64(s.MaxBatchSize) {
				return c, invalid("input %q: batch size %d is not in [1, %d]", in.Name, n, s.MaxBatchSize)
			}
			if batchFrom == nil {
				batchFrom, c.n = in, int(n)
			} else if int(n) != c.n {
				return c, invalid("input %q: batch size %d differs from input %q's %d", in.Name, n, batchFrom.Name, c.n)
			}
		}
		count := kserve.ElementCount(in.Shape)
		if size := in.Datatype.Size(); size > 0 {
			if int64(len(in.Data)) != count*int64(size) {
				return c, invalid("input %q: %d bytes of data, shape %v of %s needs %d", in.Name, len(in.Data), in.Shape, in.Datatype, count*int64(size))
			}
		} else if got, err := kserve.CountElements(in.Datatype, in.Data); err != nil || got != count {
			return c, invalid("input %q: data does not hold the %d BYTES elements of shape %v", in.Name, count, in.Shape)
		}
	}
	if s.Function == AddSub && !slices.Equal(c.ins[0].Shape, c.ins[1].Shape) {
		return c, invalid("input %q: shape %v differs from input %q's %v", c.ins[1].Name, c.ins[1].Shape, c.ins[0].Name, c.ins[0].Shape)
	}
	c.want = e.allOutputs
	if len(req.Outputs) > 0 {
		c.want = make([]int, len(req.Outputs))
		for i, o := range req.Outputs {
			k := slices.IndexFunc(s.Outputs, func(t TensorSpec) bool { return t.Name == o.Name })
			if k < 0 {
				return c, invalid("model %q has no output %q", s.Name, o.Name)
			}
			if slices.Contains(c.want[:i], k) {
				return c, invalid("output %q requested twice", o.Name)
			}
			c.want[i] = k
		}
	}
	return c, nil
}

// shapeFits reports whether a request's shape matches a spec's, where -1
// matches any size.
func shapeFits(got, want []int64) bool {
	if len(got) != len(want) {
		return false
	}
	for i, d := range got {
		if d < 0 || (want[i] >= 0 && d != want[i]) {
			return false
		}
	}
	return true
}
