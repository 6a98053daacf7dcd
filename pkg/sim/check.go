package sim

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
)

// Limits that keep a spec from asking the simulator for absurd work.
const (
	maxInstances  = 1 << 12
	maxBatch      = 1 << 16
	maxClasses    = 1 << 20
	maxSigma      = 4.0 // exp(4 × 2.33) ≈ 11000 × the median at p99: already absurd
	maxOneLatency = time.Hour
)

// Validate checks a spec; the error names the model and the field.
func (s ModelSpec) Validate() error {
	_, err := s.normalized()
	return err
}

// normalized is s with its defaults applied, or the first problem found.
func (s ModelSpec) normalized() (ModelSpec, error) {
	bad := func(field, format string, args ...any) (ModelSpec, error) {
		return ModelSpec{}, fmt.Errorf("sim: model %q: %s", s.Name, fieldError(field, format, args...))
	}
	if s.Name == "" {
		return bad("name", "must not be empty")
	}
	if !validName(s.Name) {
		return bad("name", "%q: use letters, digits, '_', '-' and '.' only", s.Name)
	}
	if len(s.Versions) == 0 {
		s.Versions = []string{"1"}
	}
	s.Versions = slices.Clone(s.Versions)
	for i, v := range s.Versions {
		if !validName(v) {
			return bad(fmt.Sprintf("versions[%d]", i), "%q: use letters, digits, '_', '-' and '.' only", v)
		}
		if slices.Index(s.Versions, v) != i {
			return bad(fmt.Sprintf("versions[%d]", i), "%q listed twice", v)
		}
	}
	if s.Platform == "" {
		s.Platform = "sim"
	}
	if s.MaxBatchSize < 0 || s.MaxBatchSize > maxBatch {
		return bad("max_batch_size", "%d is not in [0, %d]", s.MaxBatchSize, maxBatch)
	}
	if s.Instances == 0 {
		s.Instances = 1
	}
	if s.Instances < 0 || s.Instances > maxInstances {
		return bad("instances", "%d is not in [1, %d]", s.Instances, maxInstances)
	}
	if s.LLM != nil {
		if s.Degrade != nil || s.Transient != nil || s.Idle != 0 || s.Restart != "" {
			return bad("degrade", "degrade, transient, idle and restart are tensor models' laws, not an llm model's")
		}
		return s.normalizedLLM()
	}
	if len(s.Inputs) == 0 {
		return bad("inputs", "a model needs at least one input")
	}
	s.Inputs = cloneTensors(s.Inputs)
	if field, err := checkTensors("inputs", s.Inputs, s.MaxBatchSize); err != nil {
		return bad(field, "%v", err)
	}
	if s.Function == Classify && (s.NumClasses < 1 || s.NumClasses > maxClasses) {
		return bad("num_classes", "%d is not in [1, %d]", s.NumClasses, maxClasses)
	}
	if len(s.Outputs) == 0 {
		outs, err := deriveOutputs(s)
		if err != nil {
			return bad("function", "%v", err)
		}
		s.Outputs = outs
	}
	s.Outputs = cloneTensors(s.Outputs)
	if field, err := checkTensors("outputs", s.Outputs, s.MaxBatchSize); err != nil {
		return bad(field, "%v", err)
	}
	if field, err := checkFunction(s); err != nil {
		return bad(field, "%v", err)
	}
	if field, err := s.Latency.check(); err != nil {
		return bad(join("latency", field), "%v", err)
	}
	if field, err := s.checkDrift(); err != nil {
		return bad(field, "%v", err)
	}
	if s.CacheHitLatency < 0 || s.CacheHitLatency.D() > maxOneLatency {
		return bad("cache_hit_latency", "%s is not in [0, %s]", s.CacheHitLatency, maxOneLatency)
	}
	if s.CacheHitLatency != 0 && !s.Cache {
		return bad("cache_hit_latency", "needs cache: true")
	}
	if b := s.DynamicBatching; b != nil {
		nb := *b
		if s.MaxBatchSize == 0 {
			return bad("dynamic_batching", "needs a batching model (max_batch_size > 0)")
		}
		if nb.MaxBatchSize == 0 {
			nb.MaxBatchSize = s.MaxBatchSize
		}
		if nb.MaxBatchSize < 1 || nb.MaxBatchSize > s.MaxBatchSize {
			return bad("dynamic_batching.max_batch_size", "%d is not in [1, max_batch_size %d]", nb.MaxBatchSize, s.MaxBatchSize)
		}
		if nb.MaxQueueDelay < 0 || nb.MaxQueueDelay.D() > maxOneLatency {
			return bad("dynamic_batching.max_queue_delay", "%s is not in [0, %s]", nb.MaxQueueDelay, maxOneLatency)
		}
		s.DynamicBatching = &nb
	}
	return s, nil
}

func validName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, r := range s {
		ok := r == '_' || r == '-' || r == '.' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !ok {
			return false
		}
	}
	return true
}

func cloneTensors(ts []TensorSpec) []TensorSpec {
	out := make([]TensorSpec, len(ts))
	for i, t := range ts {
		out[i] = TensorSpec{Name: t.Name, Datatype: t.Datatype, Shape: slices.Clone(t.Shape)}
	}
	return out
}

// checkTensors checks names, datatypes and shapes; it returns the path of the
// bad field.
func checkTensors(list string, ts []TensorSpec, maxBatch int) (string, error) {
	for i, t := range ts {
		at := fmt.Sprintf("%s[%d]", list, i)
		switch {
		case t.Name == "":
			return at + ".name", fmt.Errorf("must not be empty")
		case slices.IndexFunc(ts, func(o TensorSpec) bool { return o.Name == t.Name }) != i:
			return at + ".name", fmt.Errorf("%q listed twice", t.Name)
		case !t.Datatype.Valid():
			return at + ".datatype", fmt.Errorf("unknown datatype %q", t.Datatype)
		case maxBatch > 0 && (len(t.Shape) == 0 || t.Shape[0] != -1):
			return at + ".shape", fmt.Errorf("%v: a batching model's shapes start with -1, the batch dimension", t.Shape)
		case len(t.Shape) > 8:
			return at + ".shape", fmt.Errorf("%v: more than 8 dimensions", t.Shape)
		}
		for _, d := range t.Shape {
			if d < -1 || d == 0 || d > 1<<24 {
				return at + ".shape", fmt.Errorf("%v: dimensions are -1 (variable) or in [1, %d]", t.Shape, 1<<24)
			}
		}
	}
	return "", nil
}

// check validates the latency fields that the distribution uses and refuses
// the ones it does not, so that a typo in the distribution is not silently a
// different model.
func (l LatencySpec) check() (string, error) {
	type field struct {
		name string
		set  bool
	}
	used := map[string][]string{
		"":        {},
		Constant:  {"value"},
		Uniform:   {"min", "max"},
		LogNormal: {"median", "sigma", "max"},
		Empirical: {"samples"},
	}
	want, ok := used[l.Distribution]
	if !ok {
		return "distribution", fmt.Errorf("%q is not constant, uniform, lognormal or empirical", l.Distribution)
	}
	for _, f := range []field{{"value", l.Value != 0}, {"min", l.Min != 0}, {"max", l.Max != 0},
		{"median", l.Median != 0}, {"sigma", l.Sigma != 0}, {"samples", l.Samples != nil}} {
		if f.set && !slices.Contains(want, f.name) {
			return f.name, fmt.Errorf("not used by distribution %q", l.Distribution)
		}
	}
	inRange := func(name string, d Duration) (string, error) {
		if d < 0 || d.D() > maxOneLatency {
			return name, fmt.Errorf("%s is not in [0, %s]", d, maxOneLatency)
		}
		return "", nil
	}
	for _, f := range []struct {
		name string
		d    Duration
	}{{"value", l.Value}, {"min", l.Min}, {"max", l.Max}, {"median", l.Median}, {"per_sample", l.PerSample}} {
		if name, err := inRange(f.name, f.d); err != nil {
			return name, err
		}
	}
	switch l.Distribution {
	case Uniform:
		if l.Max < l.Min {
			return "max", fmt.Errorf("%s is below min %s", l.Max, l.Min)
		}
	case LogNormal:
		if l.Median <= 0 {
			return "median", fmt.Errorf("must be > 0")
		}
		if math.IsNaN(l.Sigma) || l.Sigma < 0 || l.Sigma > maxSigma {
			return "sigma", fmt.Errorf("%v is not in [0, %v]", l.Sigma, maxSigma)
		}
		if l.Max != 0 && l.Max < l.Median {
			return "max", fmt.Errorf("%s is below median %s", l.Max, l.Median)
		}
	case Empirical:
		if len(l.Samples) == 0 {
			return "samples", fmt.Errorf("needs at least one duration")
		}
		for i, d := range l.Samples {
			if name, err := inRange(fmt.Sprintf("samples[%d]", i), d); err != nil {
				return name, err
			}
		}
	}
	return "", nil
}

// sameDatatypes is the datatype check shared by the functions: it returns the
// index of the first tensor that is not dt, or -1.
func firstNot(ts []TensorSpec, dt kserve.DataType) int {
	return slices.IndexFunc(ts, func(t TensorSpec) bool { return t.Datatype != dt })
}
