package stats

import (
	"math"
	"math/big"
	"testing"
)

// exactBinomialCDF sums the binomial CDF in 256-bit floating point: an
// oracle independent of every shortcut binomialCDF takes.
func exactBinomialCDF(k, n int64, q float64) float64 {
	const prec = 256
	bq := new(big.Float).SetPrec(prec).SetFloat64(q)
	bp := new(big.Float).SetPrec(prec).Sub(big.NewFloat(1).SetPrec(prec), bq)
	sum := new(big.Float).SetPrec(prec)
	for j := int64(0); j <= k; j++ {
		c := new(big.Float).SetPrec(prec).SetInt(new(big.Int).Binomial(n, j))
		for range j {
			c.Mul(c, bq)
		}
		for range n - j {
			c.Mul(c, bp)
		}
		sum.Add(sum, c)
	}
	f, _ := sum.Float64()
	return f
}

func TestBinomialCDFAgainstExactSum(t *testing.T) {
	tests := []struct {
		k, n int64
		q    float64
	}{
		{0, 44, 0.1}, {1, 64, 0.1}, {5, 127, 0.1}, {10, 197, 0.1},
		{3, 1001, 0.01}, {0, 10, 0.5}, {5, 10, 0.5}, {9, 10, 0.5},
		{30, 100, 0.25}, {90, 100, 0.9}, {12, 400, 0.001}, {399, 400, 0.999},
	}
	for _, tc := range tests {
		got := binomialCDF(tc.k, tc.n, tc.q, 1-tc.q)
		want := exactBinomialCDF(tc.k, tc.n, tc.q)
		if math.Abs(got-want) > 1e-13*want {
			t.Errorf("binomialCDF(%d; %d, %v) = %.17g, want %.17g", tc.k, tc.n, tc.q, got, want)
		}
	}
}

// loadgenBetaRegularized is LoadGen's formula (early_stopping.cc), restated
// independently: x^a (1−x)^(b−1) / (a·B(a,b)) · 2F1(1, 1−b; 1+a; x/(x−1)).
// Used as a second oracle at sizes the big.Float sum is too slow for.
func loadgenBetaRegularized(x float64, a, b int64) float64 {
	la, _ := math.Lgamma(float64(a))
	lb, _ := math.Lgamma(float64(b))
	lab, _ := math.Lgamma(float64(a + b))
	z := x / (x - 1)
	term, f := 1.0, 1.0
	for i := int64(0); math.Abs(term) > 1.0/(1<<33); i++ {
		term *= float64(1-b+i) * z / float64(1+a+i)
		f += term
	}
	return math.Exp(float64(a)*math.Log(x)+float64(b-1)*math.Log(1-x)-(la+lb-lab)) / float64(a) * f
}

func TestBinomialCDFAgainstLoadGenFormula(t *testing.T) {
	tests := []struct {
		h, t int64
		p    float64
	}{
		{1146, 100, 0.9}, {9722, 1000, 0.9}, {12471, 100, 0.99},
		{106569, 1000, 0.99}, {125726, 100, 0.999}, {20130, 10, 0.999},
	}
	for _, tc := range tests {
		for _, dh := range []int64{-1, 0} {
			got := binomialCDF(tc.t, tc.h+dh+tc.t, 1-tc.p, tc.p)
			want := loadgenBetaRegularized(tc.p, tc.h+dh, 1+tc.t)
			if math.Abs(got-want) > 1e-7*want {
				t.Errorf("odds(h=%d, t=%d, p=%v) = %.12g, LoadGen formula %.12g", tc.h+dh, tc.t, tc.p, got, want)
			}
		}
	}
}
