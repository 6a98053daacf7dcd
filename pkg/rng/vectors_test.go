package rng

import (
	"bufio"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// rawVector is one line of a LoadGen raw RNG vector file (see
// testdata/FORMAT.md in the shared test data): the n-th mt19937 output and,
// from a second engine, the n-th canonical draw, log(1-u) and the
// exponential delta in ns.
type rawVector struct {
	mt        uint32
	canonical uint64
	log       uint64
	deltaNs   int64
}

func readRawVectors(t *testing.T, path string) []rawVector {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []rawVector
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		fs := strings.Fields(line)
		if len(fs) != 4 {
			t.Fatalf("%s: bad line %q", path, line)
		}
		mt, err1 := strconv.ParseUint(fs[0], 10, 32)
		c, err2 := strconv.ParseUint(fs[1], 16, 64)
		l, err3 := strconv.ParseUint(fs[2], 16, 64)
		d, err4 := strconv.ParseInt(fs[3], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
			t.Fatalf("%s: bad line %q", path, line)
		}
		out = append(out, rawVector{uint32(mt), c, l, d})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// vectorFile names the seed and qps a raw vector file was produced with.
func vectorParams(t *testing.T, name string) (seed uint64, qps float64) {
	t.Helper()
	base := strings.TrimSuffix(strings.TrimPrefix(name, "rng_seed"), ".txt")
	s, q, ok := strings.Cut(base, "_qps")
	if !ok {
		t.Fatalf("unexpected vector file name %s", name)
	}
	seed, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	qps, err = strconv.ParseFloat(q, 64)
	if err != nil {
		t.Fatal(err)
	}
	return seed, qps
}

func TestRawVectors(t *testing.T) {
	files, err := filepath.Glob("testdata/rng_seed*_qps*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no raw vector files: %v", err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			seed, qps := vectorParams(t, filepath.Base(path))
			vecs := readRawVectors(t, path)
			if len(vecs) < 1000 {
				t.Fatalf("only %d vectors", len(vecs))
			}
			raw := NewMT19937(seed)
			sched := NewMT19937(seed)
			expo := NewMT19937(seed)
			var bad [5]int
			for n, v := range vecs {
				if got := raw.Uint32(); got != v.mt {
					if bad[0]++; bad[0] <= 3 {
						t.Errorf("line %d: mt19937 = %d, want %d", n, got, v.mt)
					}
				}
				u := GenerateCanonical(sched)
				if got := math.Float64bits(u); got != v.canonical {
					if bad[1]++; bad[1] <= 3 {
						t.Errorf("line %d: canonical = %x, want %x", n, got, v.canonical)
					}
				}
				// Recompute from the expected u so one error is not counted thrice.
				want := math.Float64frombits(v.canonical)
				l := Log(1 - want)
				if got := math.Float64bits(l); got != v.log {
					if bad[2]++; bad[2] <= 3 {
						t.Errorf("line %d: log(1-%x) = %x, want %x", n, v.canonical, got, v.log)
					}
				}
				if got := int64(DurationCastNs(-math.Float64frombits(v.log) / qps)); got != v.deltaNs {
					if bad[3]++; bad[3] <= 3 {
						t.Errorf("line %d: delta = %d, want %d", n, got, v.deltaNs)
					}
				}
				// The whole path LoadGen's Server schedule takes, from the engine.
				if got := int64(DurationCastNs(Exponential(expo, qps))); got != v.deltaNs {
					if bad[4]++; bad[4] <= 3 {
						t.Errorf("line %d: Exponential delta = %d, want %d", n, got, v.deltaNs)
					}
				}
			}
			if bad != [5]int{} {
				t.Errorf("mismatches of %d lines: mt %d, canonical %d, log %d, delta %d, exponential %d",
					len(vecs), bad[0], bad[1], bad[2], bad[3], bad[4])
			}
		})
	}
}
