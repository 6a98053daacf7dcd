package sim

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"time"
)

// sampler draws execution times from a LatencySpec. It is not safe for
// concurrent use; an engine calls it under its lock, which also makes the
// sequence of draws the order of executions, hence deterministic for a seed.
type sampler struct {
	l   LatencySpec
	rng *rand.Rand
}

func newSampler(l LatencySpec, seed uint64, name string) *sampler {
	if seed == 0 {
		h := fnv.New64a()
		h.Write([]byte(name))
		seed = h.Sum64()
	}
	return &sampler{l: l, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// draw is the time an execution of n samples takes.
func (s *sampler) draw(n int) time.Duration {
	l := &s.l
	var d time.Duration
	switch l.Distribution {
	case Constant:
		d = l.Value.D()
	case Uniform:
		d = l.Min.D()
		if span := int64(l.Max - l.Min); span > 0 {
			d += time.Duration(s.rng.Int64N(span + 1))
		}
	case LogNormal:
		v := float64(l.Median) * math.Exp(l.Sigma*s.rng.NormFloat64())
		if l.Max > 0 && v > float64(l.Max) {
			v = float64(l.Max)
		}
		d = time.Duration(math.Min(v, float64(maxOneLatency)))
	case Empirical:
		d = l.Samples[s.rng.IntN(len(l.Samples))].D()
	}
	return d + time.Duration(n)*l.PerSample.D()
}
