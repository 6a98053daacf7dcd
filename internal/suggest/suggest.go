// Package suggest finds the nearest of some names to a mistyped one, for
// "did you mean ...?" in the front ends' and the runner's errors.
package suggest

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
)

// Nearest is the name closest to typed by edit distance (ties: the first
// given), or "" when none is close: at most 2 edits, and fewer than half
// of typed's length, so a short or unrelated word gets no suggestion. Failing
// that, the one name holding typed as a whole dash-separated part ("qps" in
// "target-qps").
func Nearest(typed string, names []string) string {
	if n := nearestEdit(typed, names); n != "" {
		return n
	}
	part := ""
	for _, n := range names {
		if slices.Contains(strings.Split(n, "-"), typed) {
			if part != "" {
				return ""
			}
			part = n
		}
	}
	return part
}

func nearestEdit(typed string, names []string) string {
	best, bestD := "", -1
	for _, n := range names {
		d := Distance(typed, n)
		if bestD < 0 || d < bestD {
			best, bestD = n, d
		}
	}
	if bestD < 0 || bestD > 2 || 2*bestD >= len([]rune(typed)) {
		return ""
	}
	return best
}

// Distance is the Levenshtein distance of a and b, counting a swap of two
// adjacent characters as one edit (optimal string alignment).
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// FlagError is a flag package error with the nearest defined flag named
// when the flag typed is not one ("flag provided but not defined: -qps:
// did you mean --target-qps?"); any other error as it is.
func FlagError(fs *flag.FlagSet, err error) error {
	typed, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok || errors.Is(err, flag.ErrHelp) {
		return err
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if near := Nearest(strings.TrimLeft(typed, "-"), names); near != "" {
		return fmt.Errorf("%w: did you mean --%s?", err, near)
	}
	return err
}
