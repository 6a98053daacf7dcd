package shape

import (
	"math"
	"math/rand/v2"
)

// arrivalStream is the PCG stream (its increment) that Staged's arrival
// times draw from. The run's other draws use other generators: the
// sample indices and LoadGen's own schedule are MT19937 streams
// (pkg/rng) seeded by their own seeds, and the mix's draws are a
// counter-based hash (Mix.Pick) of a salted seed. So the arrival times
// are independent of which sample and which model each query gets, even
// when the seeds are equal.
const arrivalStream = 0x73746167_65730031 // "stages" 31

// unitDraws draws the unit-rate inter-arrival times of a process (each of
// mean 1) from a PCG seeded by the schedule seed. The transforms are
// written here, not taken from math/rand/v2's ExpFloat64 or
// NormFloat64, so that a schedule depends only on PCG-DXSM (a fixed
// algorithm) and this code, not on a Go release's ziggurat tables.
type unitDraws struct {
	pcg   rand.PCG
	kind  string
	shape float64 // gamma's shape k = 1/CV²
	d, c  float64 // Marsaglia–Tsang's constants for max(k, k+1)
}

func newUnitDraws(p Process, seed uint64) unitDraws {
	u := unitDraws{kind: p.Kind}
	u.pcg.Seed(seed, arrivalStream)
	if p.Kind == Gamma {
		u.shape = 1 / (p.CV * p.CV)
		k := u.shape
		if k < 1 {
			k++
		}
		u.d = k - 1.0/3
		u.c = 1 / math.Sqrt(9*u.d)
	}
	return u
}

// next is the next inter-arrival time in units of Λ.
func (u *unitDraws) next() float64 {
	switch u.kind {
	case Constant:
		return 1
	case Gamma:
		// Gamma of shape k and scale 1/k = CV²: mean 1, CV as asked.
		return u.gamma() / u.shape
	}
	return -math.Log(u.uniform())
}

// uniform is uniform on (0, 1]: never 0, so that its logarithm is finite.
func (u *unitDraws) uniform() float64 {
	return float64(u.pcg.Uint64()>>11+1) * 0x1p-53
}

// normal is a standard normal draw (Box–Muller, one of the pair).
func (u *unitDraws) normal() float64 {
	r := math.Sqrt(-2 * math.Log(u.uniform()))
	return r * math.Cos(2*math.Pi*u.uniform())
}

// gamma is a gamma draw of shape u.shape and scale 1: Marsaglia and
// Tsang's method (2000) for shape ≥ 1; below 1, a draw of shape k+1 times
// U^(1/k), their boost.
func (u *unitDraws) gamma() float64 {
	var g float64
	for {
		x := u.normal()
		v := 1 + u.c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		w := u.uniform()
		if w < 1-0.0331*x*x*x*x || math.Log(w) < 0.5*x*x+u.d*(1-v+math.Log(v)) {
			g = u.d * v
			break
		}
	}
	if u.shape < 1 {
		// exp(log(U)/k) rather than pow: the same value, and for tiny k it
		// underflows to 0 (arrivals at the same instant, as a burst is).
		g *= math.Exp(math.Log(u.uniform()) / u.shape)
	}
	return g
}
