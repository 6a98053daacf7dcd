package trace

// The split of one trace between N issuers or workers (issue 29), in one
// place for the engine that issues the shards and the adapters that encode
// their requests: shard k of N issues the queries i with i mod N = k, and
// a query split by sample (Offline's one query) gives shard k its samples
// k, k+N, k+2N, … .

// InShard reports whether query i is shard k of n's.
func InShard(i, k, n int) bool { return n <= 1 || i%n == k }

// ShardLen is how many of count items (queries, or a split query's
// samples) shard k of n holds.
func ShardLen(count, k, n int) int {
	if n <= 1 {
		return count
	}
	return max(count-k+n-1, 0) / n
}

// ShardSamples appends to dst shard k of n's samples of a query split by
// sample: samples[k], samples[k+n], … .
func ShardSamples(dst, samples []int, k, n int) []int {
	for i := k; i < len(samples); i += max(n, 1) {
		dst = append(dst, samples[i])
	}
	return dst
}
