package serverview

import "testing"

// A series first seen after its endpoint's first scrape was born during
// the run: a counter counts from 0 (a labelled counter made on its first
// use), a histogram's first observations count; a series of the first
// scrape counts from its first value.
func TestSeriesBornDuringTheRunCountsFromZero(t *testing.T) {
	s := NewSummarizer(0)
	f := func(v float64) *float64 { return &v }
	add := func(name, typ string, at float64, v float64) {
		l := &Line{T: at, Endpoint: "e", Name: name, Type: typ, Value: f(v)}
		if typ == Histogram {
			l.Value, l.Count, l.Sum = nil, f(v), f(v/10)
			l.Buckets = []Bucket{{LE: "1", Count: v}, {LE: "+Inf", Count: v}}
		}
		if !s.Add(l) {
			t.Fatalf("%s refused", name)
		}
	}
	add("a", Counter, 0, 5)
	add("a", Counter, 1, 7)
	add("b", Counter, 1, 3)
	add("h", Histogram, 1, 4)
	add("b", Counter, 2, 4)
	add("h", Histogram, 2, 6)
	// Another endpoint's first scrape is its own baseline.
	if !s.Add(&Line{T: 2, Endpoint: "other", Name: "c", Type: Counter, Value: f(9)}) {
		t.Fatal("c refused")
	}
	got := map[string]Series{}
	for _, x := range s.Series() {
		got[x.Endpoint+"/"+x.Name] = x
	}
	for key, want := range map[string]float64{"e/a": 2, "e/b": 4, "other/c": 0} {
		if d := got[key].Delta; d == nil || *d != want {
			t.Errorf("%s: delta %v, want %v", key, d, want)
		}
	}
	if r := got["e/b"].Rate; r == nil || *r != 2 {
		t.Errorf("e/b: rate %v, want 4 over the endpoint's 2 s", r)
	}
	if c := got["e/h"].Count; c == nil || *c != 6 {
		t.Errorf("e/h: count %v, want 6 (from 0)", c)
	}
}
