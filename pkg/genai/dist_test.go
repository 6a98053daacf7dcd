package genai

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestParseDist(t *testing.T) {
	for in, want := range map[string]Dist{
		"512":               {Law: LawFixed, A: 512},
		" 1 ":               {Law: LawFixed, A: 1},
		"uniform:128:1024":  {Law: LawUniform, A: 128, B: 1024},
		"uniform:5:5":       {Law: LawUniform, A: 5, B: 5},
		"Normal:550:60.5":   {Law: LawNormal, A: 550, B: 60.5},
		"normal:100:0":      {Law: LawNormal, A: 100, B: 0},
		"lognormal:200:0.7": {Law: LawLognormal, A: 200, B: 0.7},
		"1048576":           {Law: LawFixed, A: MaxPromptTokens},
	} {
		got, err := ParseDist(in)
		if err != nil || got != want {
			t.Errorf("ParseDist(%q) = %+v, %v; want %+v", in, got, err, want)
			continue
		}
		if back, err := ParseDist(got.String()); err != nil || back != got {
			t.Errorf("ParseDist(%q).String() = %q does not parse back: %+v, %v", in, got.String(), back, err)
		}
	}
}

func TestParseDistErrors(t *testing.T) {
	for in, says := range map[string]string{
		"":                       "not a number",
		"0":                      "between 1 and",
		"-5":                     "between 1 and",
		"1.5":                    "whole number",
		"1048577":                "between 1 and",
		"NaN":                    "not a number",
		"Inf":                    "not a number",
		"uniform:10":             "want N, uniform:LO:HI",
		"uniform:10:5":           "HI 5 is below LO 10",
		"uniform:0:5":            "LO",
		"uniform:1:2:3":          "want N",
		"poisson:1:2":            "want N",
		"normal:0.5:1":           "MEAN",
		"normal:100:-1":          "SD",
		"normal:100:x":           "SD",
		"lognormal:100:5":        "SIGMA",
		"lognormal:0:1":          "MEDIAN",
		strings.Repeat("9", 500): "between 1 and",
	} {
		_, err := ParseDist(in)
		if !errors.Is(err, ErrDist) || !strings.Contains(err.Error(), says) {
			t.Errorf("ParseDist(%q) = %v; want ErrDist saying %q", in, err, says)
		}
		if err != nil && len(err.Error()) > 300 {
			t.Errorf("ParseDist(%q): the error quotes too much: %d bytes", in, len(err.Error()))
		}
	}
}

func draws(d Dist, seed uint64, n int) []int {
	g := rand.NewPCG(seed, 1)
	out := make([]int, n)
	for i := range out {
		out[i] = d.Draw(g)
	}
	return out
}

func meanSD(xs []int) (mean, sd float64) {
	for _, x := range xs {
		mean += float64(x)
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		sd += (float64(x) - mean) * (float64(x) - mean)
	}
	return mean, math.Sqrt(sd / float64(len(xs)-1))
}

func TestDrawLaws(t *testing.T) {
	const n = 20000
	if xs := draws(Fixed(77), 1, 10); slices.ContainsFunc(xs, func(x int) bool { return x != 77 }) {
		t.Errorf("fixed 77 drew %v", xs)
	}
	u := draws(Dist{Law: LawUniform, A: 10, B: 13}, 1, n)
	counts := map[int]int{}
	for _, x := range u {
		counts[x]++
	}
	for v := 10; v <= 13; v++ {
		// Each of 4 values: n/4 = 5000 expected, SD ≈ 61.
		if c := counts[v]; c < 4700 || c > 5300 {
			t.Errorf("uniform:10:13 drew %d %d times in %d, want about %d", v, c, n, n/4)
		}
	}
	if len(counts) != 4 {
		t.Errorf("uniform:10:13 drew values outside [10, 13]: %v", counts)
	}
	m, sd := meanSD(draws(Dist{Law: LawNormal, A: 500, B: 50}, 2, n))
	if math.Abs(m-500) > 2 || math.Abs(sd-50) > 2 {
		t.Errorf("normal:500:50 drew mean %.1f SD %.1f", m, sd)
	}
	ln := draws(Dist{Law: LawLognormal, A: 200, B: 0.5}, 3, n)
	slices.Sort(ln)
	if med := ln[n/2]; med < 195 || med > 205 {
		t.Errorf("lognormal:200:0.5 drew median %d", med)
	}
	// exp(0.5) ≈ 1.6487: the 84th percentile sits one sigma up.
	if p84 := float64(ln[n*8413/10000]); math.Abs(p84/200-math.Exp(0.5)) > 0.04 {
		t.Errorf("lognormal:200:0.5 84th percentile %v, want about %v", p84, 200*math.Exp(0.5))
	}
}

func TestDrawClamps(t *testing.T) {
	low := draws(Dist{Law: LawNormal, A: 1, B: 100}, 4, 1000)
	if slices.Min(low) != 1 {
		t.Errorf("normal:1:100 drew a minimum of %d, want clamped to 1", slices.Min(low))
	}
	high := draws(Dist{Law: LawLognormal, A: MaxPromptTokens, B: 4}, 5, 1000)
	if slices.Max(high) != MaxPromptTokens {
		t.Errorf("lognormal at the limit drew a maximum of %d, want clamped to %d", slices.Max(high), MaxPromptTokens)
	}
	if (Dist{}).Draw(rand.NewPCG(0, 0)) != 1 {
		t.Error("an unset Dist should draw 1")
	}
}

// TestDrawGolden pins the draws for a seed: the lengths of a run's
// prompts must not move between releases.
func TestDrawGolden(t *testing.T) {
	got := [][]int{
		draws(Dist{Law: LawUniform, A: 1, B: 1000}, 9, 4),
		draws(Dist{Law: LawNormal, A: 500, B: 100}, 9, 4),
		draws(Dist{Law: LawLognormal, A: 500, B: 1}, 9, 4),
	}
	want := [][]int{{333, 278, 567, 378}, {484, 407, 377, 443}, {428, 197, 146, 283}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("draws for seed 9 = %v, want %v", got, want)
	}
}

func FuzzParseDist(f *testing.F) {
	for _, s := range []string{"512", "uniform:1:9", "normal:10:3", "lognormal:100:1.5", "x:1:2", "uniform:9:1", "1e3", "0x10"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDist(s)
		if err != nil {
			if !errors.Is(err, ErrDist) {
				t.Fatalf("ParseDist(%q): %v does not wrap ErrDist", s, err)
			}
			return
		}
		if back, err := ParseDist(d.String()); err != nil || back != d {
			t.Fatalf("ParseDist(%q) = %+v; its String %q parses to %+v, %v", s, d, d.String(), back, err)
		}
		g := rand.NewPCG(1, 2)
		for range 8 {
			if x := d.Draw(g); x < 1 || x > MaxPromptTokens {
				t.Fatalf("%+v drew %d", d, x)
			}
		}
	})
}
