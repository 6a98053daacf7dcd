package shape

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestParseMix(t *testing.T) {
	m, err := ParseMix("identity=0.7, resnet50=0.3")
	if err != nil {
		t.Fatal(err)
	}
	if want := []MixEntry{{Model: "identity", Weight: 0.7}, {Model: "resnet50", Weight: 0.3}}; fmt.Sprint(m.Entries) != fmt.Sprint(want) {
		t.Errorf("got %+v, want %+v", m.Entries, want)
	}
	m, err = ParseMix("a=1,b=3@http://h:8000,c=4@grpcs://h:8001;kserve-stream,d=2@https://h/openai;openai-chat")
	if err != nil {
		t.Fatal(err)
	}
	want := []MixEntry{
		{Model: "a", Weight: 0.1}, {Model: "b", Weight: 0.3, Target: "http://h:8000"},
		{Model: "c", Weight: 0.4, Target: "grpcs://h:8001", API: "kserve-stream"},
		{Model: "d", Weight: 0.2, Target: "https://h/openai", API: "openai-chat"},
	}
	for i, e := range m.Entries {
		w := want[i]
		if e.Model != w.Model || e.Target != w.Target || e.API != w.API || math.Abs(e.Weight-w.Weight) > 1e-15 {
			t.Errorf("entry %d: %+v, want %+v (weights normalised)", i, e, w)
		}
	}
	back, err := ParseMix(m.String())
	if err != nil || back.String() != m.String() {
		t.Errorf("String %q parses back as %v, %v", m.String(), back, err)
	}
	if got := m.Models(); fmt.Sprint(got) != "[a b c d]" {
		t.Errorf("Models() = %v", got)
	}
	if i, ok := m.Index("c"); !ok || i != 2 {
		t.Errorf("Index(c) = %d, %v", i, ok)
	}
	if _, ok := m.Index("e"); ok {
		t.Error("Index found a model not in the mix")
	}
}

func TestParseMixRefuses(t *testing.T) {
	many := strings.Repeat("m=1,", MaxMixEntries) + "m=1"
	tests := []struct{ in, want string }{
		{"", "--mix is empty"},
		{"identity", `entry 1 ("identity"): no '='`},
		{"=1", "empty model name"},
		{"a=1,=2", "entry 2"},
		{"a=", `weight "" is not a number`},
		{"a=0.5,b=heavy", `entry 2 ("b=heavy"): weight "heavy" is not a number`},
		{"a=0", "must be a number above 0"},
		{"a=-1", "must be a number above 0"},
		{"a=NaN", "must be a number above 0"},
		{"a=Inf", "must be a number above 0"},
		{"a=1e308,b=1e308", "overflows"},
		{"a=1,b=2,a=3", `entry 3 names model "a" again (entry 1 did)`},
		{"a b=1", "holds a space"},
		{"a=1@", "empty URL"},
		{"a=1@ftp://h:1", "not http://, https://, grpc:// or grpcs://"},
		{"a=1@h:8000", "is not a URL like http://host:8000"},
		{"a=1@http://", "is not a URL"},
		{"a=1@http://h:1/?x=1", `entry 1 ("a=1@http://h:1/?x=1"): URL "http://h:1/?x=1" takes no query`},
		{"a=1@http://h:1?", "takes no query"},
		{"a=1,b=1@http://h:1#frag", `entry 2 ("b=1@http://h:1#frag"): URL "http://h:1#frag" takes no fragment`},
		{"a=1@http://h:1#", "takes no fragment"},
		{"a=1@grpc://h:1/v2", `a grpc:// URL takes no path`},
		{"a=1@grpcs://h:1/v2/models;kserve-stream", `a grpcs:// URL takes no path`},
		{"a=1@http://:8000", "is not a URL"},
		{"a=1@http://h:", "empty port"},
		{"a=1@http://h:0", "port 0 is not between 1 and 65535"},
		{"a=1@grpc://h:99999", "port 99999 is not between 1 and 65535"},
		{"a=1@http://h:1;", "empty API"},
		{"a=1@http://h:1;soap", `API: api: "soap" is not one of`},
		{"a=1,,b=1", "entry 2"},
		{many, "more than 64"},
	}
	for _, tt := range tests {
		_, err := ParseMix(tt.in)
		if !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), "--mix") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseMix(%.40q): %v; want ErrShape naming --mix and %q", tt.in, err, tt.want)
		}
	}
	// A mix built by a caller is checked too.
	if err := (&Mix{Entries: []MixEntry{{Model: "a", Weight: 1, API: "generate"}}}).check(); !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), "API without a URL") {
		t.Errorf("an API without a URL: %v", err)
	}
}

// A URL is stored and logged: credentials in it are refused, and the
// error does not repeat them.
func TestParseMixRefusesCredentials(t *testing.T) {
	for _, in := range []string{"a=1@http://user:s3cret@h:8000", "a=1@user:s3cret@h:8000", "a=1,b=1@grpc://s3cret@h:1;kserve-stream"} {
		_, err := ParseMix(in)
		if !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), "credentials") || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("ParseMix(%q): %v; want a refusal naming credentials, without the secret", in, err)
		}
	}
}

// Acceptance: over 30,000 queries each model's count is within 3σ of its
// weight (binomial σ; fixed seeds: deterministic). Pick's answer depends
// on the seed and the query alone: the same in any order, another with
// another seed.
func TestMixPickCounts(t *testing.T) {
	m, err := ParseMix("identity=0.5,resnet50=0.3,bert=0.2")
	if err != nil {
		t.Fatal(err)
	}
	const n = 30000
	for _, seed := range []uint64{1, 16159082839903944936} {
		counts := make([]float64, 3)
		picks := make([]int, n)
		for q := range n {
			picks[q] = m.Pick(seed, q)
			counts[picks[q]]++
		}
		for i, e := range m.Entries {
			mean, sigma := n*e.Weight, math.Sqrt(n*e.Weight*(1-e.Weight))
			if math.Abs(counts[i]-mean) > 3*sigma {
				t.Errorf("seed %d, %s: %v of %d, want %v ± 3σ (%.0f)", seed, e.Model, counts[i], n, mean, 3*sigma)
			}
		}
		for q := n - 1; q >= 0; q-- {
			if got := m.Pick(seed, q); got != picks[q] {
				t.Fatalf("seed %d, query %d: %d backwards, %d forwards", seed, q, got, picks[q])
			}
		}
		same := 0
		for q := range n {
			if m.Pick(seed+1, q) == picks[q] {
				same++
			}
		}
		// Independent draws agree with probability Σw² = 0.38.
		if f := float64(same) / n; math.Abs(f-0.38) > 0.02 {
			t.Errorf("seeds %d and %d agree on %.3f of the queries, want 0.38 (independent)", seed, seed+1, f)
		}
	}
	one := &Mix{Entries: []MixEntry{{Model: "only", Weight: 1}}}
	if one.Pick(3, 5) != 0 {
		t.Error("a one-model mix picked another")
	}
}

// Pick is independent of the arrival times drawn from the same seed:
// whether a gap is longer than its median says nothing of the next
// query's model.
func TestMixPickIndependentOfArrivals(t *testing.T) {
	mix, _ := ParseMix("a=1,b=1")
	st, _ := ParseStages("100s:100")
	s, err := Staged(StagedOptions{Stages: st, Seed: 9, Mix: mix, MixSeed: 9})
	if err != nil {
		t.Fatal(err)
	}
	arr := pass(t, s)
	agree := 0
	for i := 1; i < len(arr); i++ {
		long := (arr[i].At - arr[i-1].At).Seconds() > math.Ln2/100
		if long == (arr[i].Model == 1) {
			agree++
		}
	}
	// Independent: agreement 1/2, σ = 0.5/√n ≈ 0.0016.
	if f := float64(agree) / float64(len(arr)-1); math.Abs(f-0.5) > 0.01 {
		t.Errorf("gap length and model agree on %.4f of the queries, want 0.5", f)
	}
}

func BenchmarkMixPick(b *testing.B) {
	m, _ := ParseMix("identity=0.5,resnet50=0.3,bert=0.2")
	s := 0
	for i := range b.N {
		s += m.Pick(1, i)
	}
	_ = s
}
