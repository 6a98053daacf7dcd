package stats

import "math"

// This file restates, operation for operation, how LoadGen 6.0.17's
// early_stopping.cc evaluates the odds of early stopping. h(t) is decided by
// comparing these odds against 1 − confidence, and LoadGen's evaluation is
// not exact: its lgamma differences lose about eight digits at large h and
// its series is cut at a fixed absolute tolerance. At isolated t the rounding
// moves h(t) by one from the exact binomial answer (p = 0.99, t = 8550:
// LoadGen 868100, exact 868101), so reproducing LoadGen's verdicts means
// reproducing its arithmetic, not the mathematics it approximates.
//
// Every intermediate is rounded to float64 in the order LoadGen's C++ rounds
// it. The float64(…) conversions around products forbid the Go compiler from
// fusing a multiply and an add (which it may do on arm64, or on amd64 with
// GOAMD64=v3), since a fused result would round differently from LoadGen's
// (x86-64, SSE2, no contraction). math.Lgamma, Log and Exp are not glibc's,
// but they agree closely enough that every row of testdata/htable_sample.txt
// holds (checked on amd64).

// hyp2F1Tolerance is where LoadGen stops its hypergeometric series: the first
// term whose magnitude is at most 2^-33.
const hyp2F1Tolerance = 1.0 / (1 << 33)

// loadgenOdds returns LoadGen's odds(h, t, p, 0) = BetaRegularized(p; h, 1+t):
// the probability of at most t over-latency queries among h+t when each
// passes with probability p. LoadGen's tolerance d is always 0.
//
// It uses DLMF 15.8.E1 as LoadGen does:
// I_x(a, b) = x^a (1−x)^(b−1) / (a·B(a, b)) · 2F1(1, 1−b; 1+a; x/(x−1)).
func loadgenOdds(h, t int64, p float64) float64 {
	a, b := h, 1+t
	e := float64(float64(a)*math.Log(p)) + float64(float64(b-1)*math.Log(1-p))
	e -= loadgenLogBeta(a, b)
	return math.Exp(e) / float64(a) * hyp2F1A1(1-b, 1+a, p/(p-1))
}

// loadgenLogBeta is ln B(x, y) from three lgamma values, as LoadGen computes
// it (not the cancellation-free form: the cancellation is part of the odds).
func loadgenLogBeta(x, y int64) float64 {
	lx, _ := math.Lgamma(float64(x))
	ly, _ := math.Lgamma(float64(y))
	lxy, _ := math.Lgamma(float64(x + y))
	return lx + ly - lxy
}

// hyp2F1A1 is the Gauss hypergeometric series 2F1(1, b; c; x) (DLMF 15.2.E1)
// summed term by term until a term's magnitude is at most hyp2F1Tolerance.
// With b = −t ≤ 0 the series ends by itself after t+1 terms; for the odds all
// terms are positive (b+i ≤ 0 and x < 0), so nothing cancels.
func hyp2F1A1(b, c int64, x float64) float64 {
	term, sum := 1.0, 1.0
	for i := int64(0); math.Abs(term) > hyp2F1Tolerance; i++ {
		term = float64(term * (float64(float64(b+i)*x) / float64(c+i)))
		sum += term
	}
	return sum
}
