package trace

import (
	"slices"
	"testing"
)

// TestShards: the shards of n partition the items, each item in the shard
// of its index mod n, and ShardLen counts what ShardSamples gives.
func TestShards(t *testing.T) {
	for _, count := range []int{0, 1, 5, 7, 12} {
		samples := make([]int, count)
		for i := range samples {
			samples[i] = 100 + i
		}
		for _, n := range []int{1, 2, 3, 5, 8} {
			var all []int
			for k := range n {
				got := ShardSamples(nil, samples, k, n)
				if len(got) != ShardLen(count, k, n) {
					t.Errorf("count %d, shard %d of %d: %d samples, ShardLen says %d", count, k, n, len(got), ShardLen(count, k, n))
				}
				for _, s := range got {
					if i := s - 100; !InShard(i, k, n) {
						t.Errorf("count %d: item %d in shard %d of %d", count, i, k, n)
					}
				}
				all = append(all, got...)
			}
			slices.Sort(all)
			if !slices.Equal(all, samples) {
				t.Errorf("count %d, %d shards: together %v, want %v", count, n, all, samples)
			}
		}
	}
}
