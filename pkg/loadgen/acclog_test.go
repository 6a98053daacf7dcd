package loadgen

import (
	"math/rand/v2"
	"testing"
)

// TestAccuracySamplerNotesIndicesAtIssue: the QSL index of each logged
// sample is the one its query carried when it was issued, for queries of
// one sample, of many (MultiStream), and one of every sample (Offline),
// and the log keeps completion order.
func TestAccuracySamplerNotesIndicesAtIssue(t *testing.T) {
	for _, tc := range []struct {
		name string
		spq  int
	}{{"one sample", 1}, {"eight samples", 8}, {"one query", 1000}} {
		t.Run(tc.name, func(t *testing.T) {
			const samples = 1000
			a, err := newAccuracySampler(0.3, 720381539243781796, samples, 5000)
			if err != nil {
				t.Fatal(err)
			}
			qslOf := func(seq int) int { return (seq*7 + 3) % 5000 } // distinct per seq
			nq := samples / tc.spq
			for q := range nq {
				s := make([]int, tc.spq)
				for j := range s {
					s[j] = qslOf(q*tc.spq + j)
				}
				a.issued(q*tc.spq, s)
			}
			// Complete one sample at a time, in a shuffled order.
			order := rand.New(rand.NewPCG(1, 2)).Perm(samples)
			var want []int
			for _, seq := range order {
				c := Completion{Query: seq / tc.spq, First: seq % tc.spq, Count: 1, Data: [][]byte{{byte(seq)}}}
				a.add(seq, &c, seq%tc.spq)
				if a.isSelected(seq) {
					want = append(want, seq)
				}
			}
			got := a.logged()
			if len(got) != len(want) || len(want) < 200 || len(want) > 400 {
				t.Fatalf("%d entries logged, %d selected (of %d at p = 0.3)", len(got), len(want), samples)
			}
			for i, en := range got {
				if en.SeqID != want[i] || en.QSLIndex != qslOf(en.SeqID) || en.Data[0] != byte(en.SeqID) {
					t.Fatalf("entry %d: seq %d qsl %d data %d; want seq %d qsl %d", i, en.SeqID, en.QSLIndex, en.Data[0], want[i], qslOf(want[i]))
				}
			}
		})
	}
}

func TestAccuracySamplerRefusesIndicesPastInt32(t *testing.T) {
	if _, err := newAccuracySampler(0.5, 1, 10, 1<<31+1); err == nil {
		t.Fatal("a loaded set past 2^31 samples was accepted")
	}
}
