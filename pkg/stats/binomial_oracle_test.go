package stats

import "math"

// binomialCDF returns P[X ≤ k] for X ~ Binomial(n, q), with p = 1−q passed
// separately so callers control its rounding. It equals BetaRegularized(p;
// n−k, 1+k) for integer arguments, the odds of early stopping
// (early_stopping.cc: odds(h, t) = I_p(h, 1+t) = P[at most t of h+t queries
// over latency]), computed accurately.
//
// The finder used it until it had to reproduce LoadGen's own, less accurate
// evaluation (odds.go); the tests keep it as the exact reference that shows
// where LoadGen's h(t) departs from the mathematics.
//
// It sums from the largest term of the smaller tail outwards, each term a
// ratio of the previous one, with that largest term evaluated by Loader's
// saddle-point form (stirlerr, bd0). That keeps ~14 significant digits for n
// up to ~10^9 where lgamma differences lose ~8.
func binomialCDF(k, n int64, q, p float64) float64 {
	switch {
	case k < 0:
		return 0
	case k >= n:
		return 1
	}
	mode := int64(float64(n+1) * q)
	if k < mode {
		return lowerTail(k, n, q, p)
	}
	return 1 - upperTail(k+1, n, q, p)
}

// tailEpsilon stops a tail sum once a term no longer changes it.
const tailEpsilon = 1e-17

// lowerTail sums P[X = j] for j = k, k−1, … 0; k is below the mode, so the
// terms fall as j decreases.
func lowerTail(k, n int64, q, p float64) float64 {
	sum, term := 1.0, 1.0
	for j := k; j > 0; j-- {
		// P[X=j−1]/P[X=j] = j/(n−j+1) · p/q
		term *= float64(j) / float64(n-j+1) * (p / q)
		sum += term
		if term < tailEpsilon*sum {
			break
		}
	}
	return math.Exp(logBinomialPMF(k, n, q, p)) * sum
}

// upperTail sums P[X = j] for j = k, k+1, … n; k is above the mode.
func upperTail(k, n int64, q, p float64) float64 {
	sum, term := 1.0, 1.0
	for j := k; j < n; j++ {
		// P[X=j+1]/P[X=j] = (n−j)/(j+1) · q/p
		term *= float64(n-j) / float64(j+1) * (q / p)
		sum += term
		if term < tailEpsilon*sum {
			break
		}
	}
	return math.Exp(logBinomialPMF(k, n, q, p)) * sum
}

// logBinomialPMF returns ln P[X = k], X ~ Binomial(n, q), by Loader (2000),
// "Fast and accurate computation of binomial probabilities":
// ln f = δ(n) − δ(k) − δ(n−k) − D(k; nq) − D(n−k; np) + ½·ln(n / (2π k (n−k))),
// with δ the Stirling error and D the deviance term. No large logarithms are
// subtracted, so the result is accurate to a few ulps of its own size.
func logBinomialPMF(k, n int64, q, p float64) float64 {
	switch {
	case k == 0:
		return float64(n) * math.Log(p)
	case k == n:
		return float64(n) * math.Log(q)
	}
	fn, fk, fnk := float64(n), float64(k), float64(n-k)
	lc := stirlingError(fn) - stirlingError(fk) - stirlingError(fnk) -
		deviance(fk, fn*q) - deviance(fnk, fn*p)
	return lc + 0.5*math.Log(fn/(2*math.Pi*fk*fnk))
}

// stirlingError returns δ(n) = ln n! − (n+½)·ln n + n − ½·ln 2π for n ≥ 1.
func stirlingError(n float64) float64 {
	if n <= 15 {
		lg, _ := math.Lgamma(n + 1)
		return lg - (n+0.5)*math.Log(n) + n - 0.5*math.Log(2*math.Pi)
	}
	// Asymptotic series 1/12n − 1/360n³ + 1/1260n⁵ − 1/1680n⁷ + 1/1188n⁹;
	// for n > 15 the first omitted term is below 1e-17 relative.
	nn := n * n
	const s0, s1, s2, s3, s4 = 1.0 / 12, 1.0 / 360, 1.0 / 1260, 1.0 / 1680, 1.0 / 1188
	return (s0 - (s1-(s2-(s3-s4/nn)/nn)/nn)/nn) / n
}

// deviance returns D(x; m) = x·ln(x/m) + m − x, computed without cancellation
// when x is close to m.
func deviance(x, m float64) float64 {
	if math.Abs(x-m) < 0.1*(x+m) {
		v := (x - m) / (x + m)
		s := (x - m) * v
		ej := 2 * x * v
		vv := v * v
		for j := 1; j < 1000; j++ {
			ej *= vv
			s1 := s + ej/float64(2*j+1)
			if s1 == s {
				return s1
			}
			s = s1
		}
		return s
	}
	return x*math.Log(x/m) + m - x
}
