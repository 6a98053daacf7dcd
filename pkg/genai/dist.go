package genai

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// MaxPromptTokens bounds every length a Dist gives and a parse accepts (a
// million pseudo-tokens, beyond any model's context): a draw beyond it is
// clamped, a bound beyond it refused.
const MaxPromptTokens = 1 << 20

// The laws of a Dist.
const (
	LawFixed     = "fixed"     // "N": always N
	LawUniform   = "uniform"   // "uniform:LO:HI": an integer in [LO, HI], each as likely
	LawNormal    = "normal"    // "normal:MEAN:SD": MEAN + SD·z, rounded
	LawLognormal = "lognormal" // "lognormal:MEDIAN:SIGMA": MEDIAN·exp(SIGMA·z), rounded
)

// Dist is a law of lengths in tokens (`--input-tokens`, `--output-tokens`,
// the spec's input_tokens and output_tokens): fixed, uniform, normal or
// lognormal. Draws are integers in [1, MaxPromptTokens]: a normal or
// lognormal draw is rounded to the nearest integer, then clamped (a law
// whose mass reaches below 1 piles it at 1: ParseDist refuses none, the
// docs warn). The zero Dist is unset.
type Dist struct {
	Law  string
	A, B float64 // fixed: A; uniform: LO, HI; normal: MEAN, SD; lognormal: MEDIAN, SIGMA
}

// IsZero says the Dist is unset.
func (d Dist) IsZero() bool { return d.Law == "" }

// Fixed is the law that always gives n.
func Fixed(n int) Dist { return Dist{Law: LawFixed, A: float64(n)} }

// ErrDist is a malformed length law.
var ErrDist = errors.New("length law")

// maxSigma bounds a lognormal's SIGMA: exp(4) is a factor of 55 per
// standard deviation, wider than any real data set's lengths.
const maxSigma = 4

const distSyntax = "want N, uniform:LO:HI, normal:MEAN:SD or lognormal:MEDIAN:SIGMA (lengths in tokens), e.g. 512 or uniform:128:1024"

// ParseDist reads "N", "uniform:LO:HI", "normal:MEAN:SD" or
// "lognormal:MEDIAN:SIGMA". N, LO and HI are integers with 1 ≤ LO ≤ HI;
// MEAN and MEDIAN are numbers ≥ 1, SD ≥ 0 and 0 ≤ SIGMA ≤ 4; every length
// at most MaxPromptTokens. Errors wrap ErrDist and say what to write; the
// caller names the flag or field.
func ParseDist(v string) (Dist, error) {
	parts := strings.Split(strings.TrimSpace(v), ":")
	law := strings.ToLower(parts[0])
	if len(parts) == 1 {
		n, err := parseLength("N", parts[0], true)
		if err != nil {
			return Dist{}, err
		}
		return Dist{Law: LawFixed, A: n}, nil
	}
	if len(parts) != 3 || (law != LawUniform && law != LawNormal && law != LawLognormal) {
		return Dist{}, fmt.Errorf("%w: %s: %s", ErrDist, quote(v), distSyntax)
	}
	d := Dist{Law: law}
	var err error
	switch law {
	case LawUniform:
		if d.A, err = parseLength("LO", parts[1], true); err == nil {
			d.B, err = parseLength("HI", parts[2], true)
		}
		if err == nil && d.B < d.A {
			err = fmt.Errorf("%w: %s: HI %v is below LO %v", ErrDist, quote(v), d.B, d.A)
		}
	case LawNormal:
		if d.A, err = parseLength("MEAN", parts[1], false); err == nil {
			d.B, err = parseSpread("SD", parts[2], MaxPromptTokens)
		}
	case LawLognormal:
		if d.A, err = parseLength("MEDIAN", parts[1], false); err == nil {
			d.B, err = parseSpread("SIGMA", parts[2], maxSigma)
		}
	}
	if err != nil {
		return Dist{}, err
	}
	return d, nil
}

// parseLength reads a length bound: ≥ 1, ≤ MaxPromptTokens, an integer
// when integer.
func parseLength(name, s string, integer bool) (float64, error) {
	f, err := parseNumber(s)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%w: %s %s is not a number: %s", ErrDist, name, quote(s), distSyntax)
	case integer && f != math.Trunc(f):
		return 0, fmt.Errorf("%w: %s %s is not a whole number of tokens", ErrDist, name, quote(s))
	case f < 1 || f > MaxPromptTokens:
		return 0, fmt.Errorf("%w: %s %s is not between 1 and %d tokens", ErrDist, name, quote(s), MaxPromptTokens)
	}
	return f, nil
}

// parseSpread reads a spread: a number in [0, limit].
func parseSpread(name, s string, limit float64) (float64, error) {
	f, err := parseNumber(s)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%w: %s %s is not a number: %s", ErrDist, name, quote(s), distSyntax)
	case f < 0 || f > limit:
		return 0, fmt.Errorf("%w: %s %s is not between 0 and %v", ErrDist, name, quote(s), limit)
	}
	return f, nil
}

// parseNumber reads a finite number; one too large to represent is
// ±Inf, for the range check to refuse by its bounds.
func parseNumber(s string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return f, nil
	case err != nil:
		return 0, err
	case math.IsNaN(f) || math.IsInf(f, 0):
		return 0, errors.New("not finite")
	}
	return f, nil
}

// quote quotes a user's value for an error, cut short if long (a spec
// field can be any size).
func quote(s string) string {
	const max = 40
	if len(s) > max {
		return strconv.Quote(s[:max]) + "…"
	}
	return strconv.Quote(s)
}

// String is the Dist in ParseDist's syntax ("" unset).
func (d Dist) String() string {
	g := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	switch d.Law {
	case "":
		return ""
	case LawFixed:
		return g(d.A)
	}
	return d.Law + ":" + g(d.A) + ":" + g(d.B)
}

// Draw is one length from g: deterministic for g's state (math/rand/v2's
// PCG, whose algorithm is fixed, so a seed gives the same lengths on every
// run and Go release). Each draw takes one value of g (uniform) or two
// (normal and lognormal, by Box-Muller), whatever the parameters. An unset
// Dist gives 1.
func (d Dist) Draw(g *rand.PCG) int {
	var x float64
	switch d.Law {
	case LawFixed:
		x = d.A
	case LawUniform:
		x = d.A + math.Floor(unit(g)*(d.B-d.A+1))
		x = min(x, d.B) // unit < 1, but floating point
	case LawNormal:
		x = math.Round(d.A + d.B*normal(g))
	case LawLognormal:
		x = math.Round(d.A * math.Exp(d.B*normal(g)))
	}
	if !(x >= 1) { // NaN too
		return 1
	}
	return int(min(x, MaxPromptTokens))
}

// unit is a float64 in [0, 1) from the top 53 bits of one draw.
func unit(g *rand.PCG) float64 { return float64(g.Uint64()>>11) / (1 << 53) }

// normal is a standard normal deviate by Box-Muller from two draws (its
// own, not math/rand/v2's NormFloat64, whose algorithm a release may
// change).
func normal(g *rand.PCG) float64 {
	u1 := 1 - unit(g) // (0, 1]: the log is finite
	u2 := unit(g)
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}
