package trace

import "github.com/netloadgen/netloadgen/pkg/rng"

// LoadedSet returns the performance set LoadGen 6.0.17 loads
// (GenerateLoadableSets, first set): the indices [0, min(performance sample
// count, QSL total)) shuffled by an mt19937 seeded with qsl_rng_seed, plus,
// for MultiStream, the first samples_per_query-1 of them appended so every
// query's samples can be contiguous. It also returns the length without
// padding.
//
// Since a8d4d783 (in 6.0.17) LoadGen shuffles only the first
// performance-sample-count indices; up to v5.1 it shuffled the whole QSL,
// which gives another set for the same seed when the QSL is larger.
func LoadedSet(e Effective, qslTotal uint64) (set []int, distributionEnd int) {
	n := int(min(e.PerformanceSampleCount, qslTotal))
	padding := 0
	if e.Scenario == MultiStream {
		padding = int(e.SamplesPerQuery) - 1
	}
	set = make([]int, n, n+padding)
	for i := range set {
		set[i] = i
	}
	rng.Shuffle(rng.NewMT19937(e.QSLRNGSeed), set)
	for i := range padding {
		// Appending from the growing set wraps around when the set is
		// shorter than the padding, as LoadGen's push_back loop does.
		set = append(set, set[i])
	}
	return set, n
}
